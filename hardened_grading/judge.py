"""The trusted judge: test cells run in the grader's process, not in the student's kernel.

Student code and the checks used to share one kernel, so an answer could rebind ``check_close``,
patch ``np.allclose`` or ``np.sin``, or install an IPython hook that swallows errors or rewrites
the next cell. While grading, :class:`hardened_grading.grading.ResilientExecute` therefore runs each
test cell here instead, in a fresh namespace made of the released notebook's own setup cells
(``numpy``, ``math`` and the ``check_*`` helpers, all the grader's own objects). Every name the
test uses that it does not define is looked up in the kernel: a student's function becomes a
:class:`KernelFunction`, whose calls are carried out in the kernel by :mod:`hardened_grading.agent`;
any other variable (a multiple-choice answer) is copied over as a value. Expected values and
comparisons never leave this process, so the only way to pass a test is to return right answers.

A round trip to the kernel costs about a millisecond, and a notebook's tests make some 170 calls.
So the calls a test cell makes when the answers are right (:func:`predicted_calls`) are asked of
the kernel in one batch first, and each real call takes its reply from the batch only when it is
exactly the predicted call; after the first call that differs, every call is asked on its own.
"""

import ast
import builtins
import contextlib
import dataclasses
import functools
import io
import json
import linecache
import os
import random
import re
import sys
import traceback
import warnings
from pathlib import Path

import nbformat
import numpy

from . import agent, magics, student_folder
from .cells import grade_id, is_answer_cell, is_test_cell

AGENT_SOURCE = Path(agent.__file__).read_text(encoding="utf-8")
# Warnings the kernel reports are raised again here as these classes; any other name is a UserWarning.
WARNING_TYPES = {c.__name__: c for c in vars(builtins).values() if isinstance(c, type) and issubclass(c, Warning)}


class Abort(BaseException):
    """The kernel timed out, ran out of memory or died: the test cell stops here.

    A ``BaseException``, so that no ``except Exception`` in a test can carry on past it.
    """

    def __init__(self, ename, message):
        super().__init__(message)
        self.ename, self.message = ename, message


class StudentError(Exception):
    """The student's function raised an exception other than ValueError or NotImplementedError."""


class ReplyTooLarge(StudentError):
    """The kernel's reply to one call was over ``ResilientExecute.max_reply_kb``: that call fails."""

    student_type = "ReplyTooLarge"


def _agent_code(call):
    return ("__hardened_grading_agent__ = {'__name__': 'hardened_grading_agent'}\n"
            f"exec({AGENT_SOURCE!r}, __hardened_grading_agent__)\n"
            f"__hardened_grading_agent__{call}\n"
            "del __hardened_grading_agent__\n")


def kernel_code(request, served=False):
    """The code that carries out `request` in the kernel (a cell run without history): the agent's
    source and the call, or, where the agent was `served` (:data:`SERVE_CODE`), the call alone."""
    if served:
        return f"getattr(get_ipython().kernel, {agent.SERVED!r})({json.dumps(request)!r}, globals())\n"
    return _agent_code(f"['main']({json.dumps(request)!r}, globals())")


SERVE_CODE = _agent_code("['serve'](globals())")  # opens the comm target agent.TARGET


def setup_namespace(notebook):
    """The namespace made by the notebook's setup cells: code cells neither answers nor tests, each turned from
    IPython into Python (:func:`hardened_grading.magics.translate`), whose magics call the judge's own
    ``get_ipython`` (:data:`hardened_grading.magics.SHELL`; a cell's own ``get_ipython()`` is not defined here).

    It stops before the first set-up cell with a magic the judge cannot carry out (:func:`magic_fallbacks`):
    that cell, and the test cells below it, need the kernel.
    """
    namespace = {"__name__": "__main__", "__builtins__": builtins, magics.SHELL: magics.get_ipython}
    # A setup cell may set warnings.showwarning or numpy's print options, for the kernel: they are put
    # back here, and the print options are used again while a test cell runs (:meth:`Judge.run`).
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), numpy.printoptions():
        for number, cell in enumerate(notebook.cells, 1):
            if cell.cell_type == "code" and not is_answer_cell(cell) and not is_test_cell(cell):
                translation = magics.translate(cell.source)
                if translation.unsupported:
                    break
                try:
                    exec(compile(translation.code, "<setup cell>", "exec"), namespace)
                except Exception as error:
                    raise SetupError(f"cell {number}{f' ({grade_id(cell)})' if grade_id(cell) else ''}: "
                                     f"{type(error).__name__}: {error}") from error
        namespace[PRINT_OPTIONS] = numpy.get_printoptions()
    return namespace


@dataclasses.dataclass
class Fallback:
    """A cell with a magic the judge cannot carry out in the grader (:mod:`hardened_grading.magics`), and the
    test cells that therefore run in the kernel, as stock nbgrader runs them."""

    kind: str  #: "set-up" or "test"
    number: int  #: the cell's number in the notebook (1-based)
    grade_id: str  #: its grade id, or None
    magics: list  #: the magics, as written
    tests: list  #: the grade ids of the test cells that run in the kernel: those below a set-up cell, or itself

    def __str__(self):
        cell = f"{self.kind} cell {self.number}{f' ({self.grade_id})' if self.grade_id else ''}"
        what = ", ".join(f"`{m}`" for m in self.magics)
        if self.kind == "test":
            return f"{cell} {what}: it runs in the kernel"
        below = f"the test cells below it ({', '.join(self.tests)}) run" if self.tests else "no test cell is below it"
        return f"{cell} {what}: {below} in the kernel, as do the set-up cells from it on"


def magic_fallbacks(notebook):
    """The :class:`Fallback` of each cell of `notebook` with a magic the judge cannot carry out: the first such
    set-up cell (the namespace is made by the set-up cells above it; the test cells below it run in the kernel),
    and each test cell above it with one (only that test cell runs in the kernel)."""
    found = []
    for number, cell in enumerate(notebook.cells, 1):
        if cell.cell_type != "code" or is_answer_cell(cell):
            continue
        unsupported = magics.translate(cell.source).unsupported
        if is_test_cell(cell) and unsupported:
            found.append(Fallback("test", number, grade_id(cell), unsupported, [grade_id(cell)]))
        elif not is_test_cell(cell) and unsupported:
            below = [grade_id(c) for c in notebook.cells[number:] if is_test_cell(c)]
            found.append(Fallback("set-up", number, grade_id(cell), unsupported, below))
            break
    return found


class SetupError(Exception):
    """A set-up cell of the notebook cannot run in the grader (it uses an answer, or a file beside the
    notebook): its test cells must run in the kernel."""


def setup_problem(error):
    """One line that says why the trusted set-up could not be made."""
    return str(error) if isinstance(error, SetupError) else f"{type(error).__name__}: {error}"


PRINT_OPTIONS = "__hardened_grading_print_options__"


def answer_functions(notebook):
    """Names of the functions the notebook's answer cells define (in the release: the stubs)."""
    names = set()
    for cell in notebook.cells:
        if is_answer_cell(cell):
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            names |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    return frozenset(names)


def free_names(source, namespace):
    """Names the cell reads but never assigns, and that `namespace` and builtins lack."""
    tree = ast.parse(source)
    loaded, stored = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, ast.alias):
            stored.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stored.add(node.name)
        elif isinstance(node, ast.arg):
            stored.add(node.arg)
    return sorted(loaded - stored - set(namespace) - set(dir(builtins)))


class KernelFunction:
    """A student's function: calling it calls it in the grading kernel."""

    def __init__(self, name, judge):
        self.__name__ = self.__qualname__ = name
        self._judge = judge

    def __call__(self, *args, **kwargs):
        return self._judge.call(self.__name__, args, kwargs)

    def __repr__(self):
        return f"<function {self.__name__} (the submission's, run in the grading kernel)>"


class _PassesAFunction(BaseException):  # no ``except Exception`` in a test may go on past it
    pass


def cell_label(name):
    """The file name a test cell's code runs under, so its lines show in tracebacks."""
    return f"<test cell {name}>"


def _call_key(request):
    """What identifies a call: the function, its arguments as sent, the numpy error state and the test's warning
    filters."""
    return json.dumps([request["name"], request["args"], request["kwargs"], request.get("errstate"),
                       request.get("filters")])


def _call_request(name, args, kwargs, encode, base_filters=()):
    """The request for a call of the answer function `name`, made under the current numpy error state and with
    the warning filters the test added to `base_filters` (:func:`test_filters`)."""
    return {"op": "call", "name": name, "args": [encode(a) for a in args],
            "kwargs": [[k, encode(v)] for k, v in kwargs.items()], "errstate": numpy.geterr(),
            "filters": test_filters(base_filters)}


def test_filters(base):
    """The warning filters in force that the test added in front of `base` (the filters its cell started with), as
    ``[[action, message, category name, module, lineno], ...]``: those whose category crosses to the kernel
    (:func:`hardened_grading.agent.warning_category`)."""
    current = list(warnings.filters)
    added = current[:len(current) - len(base)] if base and current[len(current) - len(base):] == list(base) \
        else [f for f in current if f not in base]
    return [[action, getattr(message, "pattern", message) or "", category.__name__,
             getattr(module, "pattern", module) or "", lineno]
            for action, message, category, module, lineno in added
            if agent.warning_category(category.__name__) is category]


def _raise_again(reported):
    """Raise here the warnings a call raised in the kernel, so the test's filters apply to them."""
    for category, message in reported[:20]:
        warnings.warn(str(message), WARNING_TYPES.get(category, UserWarning), stacklevel=4)


def reference_namespace(source_notebook, setup):
    """`setup` plus what the source notebook's answer cells (the reference answers) define."""
    namespace = dict(setup)
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in source_notebook.cells:
            if is_answer_cell(cell):
                exec(compile(magics.translate(cell.source).code, "<reference answer>", "exec"), namespace)
    return namespace


def predicted_calls(source, reference, functions):
    """The calls of answer functions that a test cell makes when every answer is right.

    They are the calls an honest submission gets, so :meth:`Judge.run` sends them to the kernel
    in one round trip and checks each real call against them. The list stops before the first
    call that passes a function (it needs a round trip of its own).
    """
    calls = []

    def recorder(name):
        def record(*args, **kwargs):
            def encode(value):
                if callable(value) and not isinstance(value, (numpy.ndarray, numpy.generic)):
                    raise _PassesAFunction
                return agent.encode(value)
            calls.append(_call_request(name, args, kwargs, encode, base))
            return reference[name](*args, **kwargs)
        return record

    namespace = dict(reference)
    namespace.update({name: recorder(name) for name in functions if name in reference})
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("default")  # as :meth:`Judge.run` starts a cell
            base = list(warnings.filters)
            exec(compile(magics.translate(source).code, "<predicted calls>", "exec"), namespace)
    except (Exception, _PassesAFunction):
        pass
    return calls


def in_folder(folder, function, *args):
    """``function(*args)`` with `folder` as the working folder (the process's, so the grader must not use
    relative paths meanwhile: it waits for the test cell), the previous one restored after; as it is without
    a folder."""
    if not folder:
        return function(*args)
    previous = os.getcwd()
    os.chdir(folder)
    try:
        return function(*args)
    finally:
        os.chdir(previous)


@functools.lru_cache(maxsize=8)
def _setup_of(path, mtime_ns):
    """The setup namespace and answer function names of the notebook at `path`, read once. Its set-up cells run
    in its own folder (the release's, which holds the files nbgrader releases with it: a data file)."""
    notebook = nbformat.read(path, as_version=4)
    return in_folder(Path(path).parent, setup_namespace, notebook), answer_functions(notebook)


@functools.lru_cache(maxsize=8)
def _fallbacks_of(path, mtime_ns):
    return magic_fallbacks(nbformat.read(path, as_version=4))


def trusted_fallbacks(release, source):
    """:func:`magic_fallbacks` of the notebook whose set-up cells make the judge's namespace (:func:`trusted_setup`:
    `release`, else `source`), read once while it is unchanged."""
    path = release or source
    return _fallbacks_of(str(path), Path(path).stat().st_mtime_ns)


def judged_source(source):
    """A test cell's `source` as the judge runs it (:func:`hardened_grading.magics.translate`), or None when it
    has a magic the judge cannot carry out: then the cell runs in the kernel."""
    translation = magics.translate(source)
    return None if translation.unsupported else translation.code


@functools.lru_cache(maxsize=8)
def _reference_of(trusted, source):
    """The reference answers of the source notebook; both arguments are ``(path, mtime)``."""
    return reference_namespace(nbformat.read(source[0], as_version=4), _setup_of(*trusted)[0])


@functools.lru_cache(maxsize=1024)
def _predicted(trusted, source, test_source):
    return tuple(predicted_calls(test_source, _reference_of(trusted, source), _setup_of(*trusted)[1]))


def trusted_setup(release, source, predict=True):
    """``(namespace, answer function names, predict)`` for judging a notebook's test cells.

    `release` and `source` are the paths of the released and the source notebook (one may be None).
    The namespace is made by the release's setup cells (the source's, without a release), each file
    read once while it is unchanged. ``predict(test_source)`` gives the calls the test cell makes when
    the answers are right (:func:`predicted_calls`), or none when `predict` is off or there is no
    source notebook.
    """
    def stamped(path):
        return str(path), Path(path).stat().st_mtime_ns

    trusted = stamped(release or source)
    namespace, functions = _setup_of(*trusted)
    if not (predict and source):
        return namespace, functions, lambda test_source: ()
    reference = stamped(source)

    def predict(test_source):
        try:
            return _predicted(trusted, reference, test_source)
        except Exception:  # the source's answers do not run here (a stub, a file): nothing is predicted
            return ()
    return namespace, functions, predict


# Checks: partial credit -------------------------------------------------------------------------

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
RECORD = "__hardened_grading_check__"  #: the name a test cell's checks are routed through while it is judged
_WEIGHT = re.compile(r"#\s*weight\s*[:=]?\s*(\d+(?:\.\d+)?)")


@dataclasses.dataclass
class Check:
    """One check of a test cell: a call of a ``check_*`` helper, where it is written.

    A check in a loop passes when every one of its calls passes. ``passed`` is None until it runs.
    """

    line: int  #: its first line in the cell (1-based)
    text: str  #: its source, on one line
    weight: float  #: ``# weight N`` at the end of its last line; 1 without it
    hidden: bool  #: written between the hidden-test markers
    statement: int = 0  #: the number of the cell's top-level statement it is in
    passed: bool = None
    message: str = ""

    def fail(self, message):
        self.passed, self.message = False, message

    def as_dict(self):
        return dataclasses.asdict(self)


def hidden_lines(source):
    """The 1-based line numbers of a cell's hidden tests (between its markers)."""
    hidden, inside = set(), False
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip().startswith(HIDDEN_BEGIN):
            inside = True
        elif line.strip().startswith(HIDDEN_END):
            inside = False
        elif inside:
            hidden.add(number)
    return hidden


class _RouteChecks(ast.NodeTransformer):
    """``check_x(args)`` -> ``__hardened_grading_check__(i, lambda: check_x(args))``: the check's own arguments,
    which call the submission's functions, are evaluated inside it, so their failure is that check's."""

    def __init__(self, source):
        self.lines, self.hidden, self.checks = source.splitlines(), hidden_lines(source), []

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id.startswith("check_")):
            return node
        last = self.lines[node.end_lineno - 1] if node.end_lineno <= len(self.lines) else ""
        weight = _WEIGHT.search(last)
        text = " ".join(" ".join(self.lines[node.lineno - 1:node.end_lineno]).split())
        self.checks.append(Check(node.lineno, text[:200], float(weight.group(1)) if weight else 1.0,
                                 node.lineno in self.hidden))
        routed = ast.Call(func=ast.Name(RECORD, ast.Load()),
                          args=[ast.Constant(len(self.checks) - 1),
                                ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                              defaults=[]), body=node)],
                          keywords=[])
        return ast.copy_location(routed, node)


def routed_checks(source):
    """``(the cell's statements with each check routed through RECORD, its checks)``."""
    tree = ast.parse(source)
    router = _RouteChecks(source)
    body = []
    for number, statement in enumerate(tree.body):
        first = len(router.checks)
        body.append(ast.fix_missing_locations(router.visit(statement)))
        for check in router.checks[first:]:
            check.statement = number
    return body, router.checks


def elide(text, limit):
    """`text` on one line, at most `limit` characters. A check's message "... expected X got Y" keeps
    both parts, each cut in its middle as needed; any other long text keeps its start and its end."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    head, sep, got = text.rpartition(" got ")
    if not (sep and head) or limit < 40:
        return _cut(text, limit)
    room = limit - len(sep)
    for_head = max(min(len(head), room // 2), room - len(got))
    return _cut(head, for_head) + sep + _cut(got, room - for_head)


def _cut(text, limit):
    """`text` in at most `limit` characters: its start and its end around " ... ", each cut at a space, so
    that no number of an array is cut in two (a word longer than a third of `limit` is cut anyway)."""
    if len(text) <= limit:
        return text
    tail = limit // 3
    head, end = text[:limit - tail - 5], text[-tail:]
    if not text[len(head)].isspace() and " " in head[len(head) // 2:]:
        head = head[:head.rindex(" ")]
    if not text[-tail - 1].isspace() and " " in end[:len(end) // 2]:
        end = end[end.index(" ") + 1:]
    return head.rstrip() + " ... " + end.lstrip()


def _one_line(error):
    ename = getattr(error, "student_type", type(error).__name__)
    if isinstance(error, AssertionError):
        return elide(error, 400) or "the check failed"
    return elide(f"{ename}: {error}", 400)


def score_of(checks, points):
    """The weighted share of `checks` that passed, times `points`, to 2 decimals (all of it with no checks)."""
    total = sum(check.weight for check in checks)
    if not total:
        return float(points) if all(check.passed for check in checks) else 0.0
    return round(points * sum(check.weight for check in checks if check.passed) / total, 2)


class Judge:
    """Runs test cells here, with `ask(request) -> reply` reaching the kernel."""

    def __init__(self, ask, folder=None, max_output=None):
        self._ask_kernel = ask
        self._callbacks = []
        self._prefetched = []  # (call key, reply) of predicted calls, in order
        self._base_filters = []  # the warning filters the cell started with (:func:`test_filters`)
        self._random_synced = None  # the random states last made the kernel's and this process's alike
        #: the notebook's folder, where the kernel runs: a test's relative paths lead there, or where the
        #: kernel's code moved its working folder inside it
        self.folder = folder
        #: characters of what the submission's code prints that a cell keeps (``ResilientExecute.max_output_kb``)
        self.max_output = max_output or 1024 * 1024
        self.checks = []  # the last cell's checks (:class:`Check`), as :meth:`run` left them
        #: what the last cell printed, its own lines and the submission's calls', ``[[stream name, text], ...]``
        self.streams = []
        #: the value of the last cell's last statement when it is an expression (None otherwise), which
        #: IPython would show as the cell's result: a number there is nbgrader's partial credit
        self.result = None

    def _ask(self, request):
        return self._checked(self._ask_kernel(request))

    @staticmethod
    def _checked(reply):
        if "MemoryError" in reply.get("types", []):
            raise Abort("MemoryError", "the submission's code ran out of memory (the grading kernel's limit)")
        return reply

    def _encode(self, value):
        if isinstance(value, KernelFunction):
            return {"t": "callable", "name": value.__name__}
        if callable(value) and not isinstance(value, (numpy.ndarray, numpy.generic)):
            self._callbacks.append(value)
            return {"t": "callback", "id": len(self._callbacks) - 1}
        return agent.encode(value)

    def _decode(self, data):
        return agent.decode(data, lambda d: KernelFunction(d.get("name", "?"), self))

    def answer_callback(self, prompt):
        """Run a function of the tests that the submission's function called; reply as JSON text.

        `prompt` comes from the kernel, so it is not trusted: a malformed request gets an error.
        """
        try:
            request = json.loads(prompt)
            function = self._callbacks[int(request["callback"])]
            args = [agent.decode(a) for a in request["args"]]
            kwargs = {str(k): agent.decode(v) for k, v in request["kwargs"]}
            return json.dumps({"status": "ok", "value": agent.encode(function(*args, **kwargs))})
        except Exception as error:
            return json.dumps(agent.exception_description(error))

    def call(self, name, args, kwargs):
        callbacks_before = len(self._callbacks)
        request = _call_request(name, args, kwargs, self._encode, self._base_filters)
        # A function of the tests among the arguments: the kernel must run the request as a cell
        # (:func:`kernel_code`), the only way it can ask for that function's results.
        request["passes_callbacks"] = len(self._callbacks) > callbacks_before
        # The test seeded numpy's or Python's global random generator, or drew from it: the kernel draws on from
        # there, as it would in the test cell run in the kernel, and this process on from where the call left it.
        # A test that never touches them leaves the kernel's own (and this process's out of the student's reach).
        if _random_fingerprint() != self._random_synced:
            request["random"] = agent.random_state()
        if self._prefetched and self._prefetched[0][0] == _call_key(request) and "random" not in request:
            reply = self._checked(self._prefetched.pop(0)[1])
        else:  # not the call an honest submission gets here: ask for it, and for all that follow
            self._prefetched = []
            reply = self._ask(request)
        if "random" in request and agent.set_random_state(reply.get("random")):
            self._random_synced = _random_fingerprint()
        self._printed(reply.get("printed"))
        _raise_again(reply.get("warnings", []))
        if reply["status"] == "raised":
            raise _student_exception(name, reply)
        for before, after in [*zip(args, reply.get("args_after", [])),
                              *((kwargs[k], v) for k, v in reply.get("kwargs_after", {}).items() if k in kwargs)]:
            _mirror_mutation(before, after)
        return self._decode(reply["value"])

    def _printed(self, chunks):
        """Print here what a call printed there (``[[stream name, text], ...]``), as the test's own lines are: after
        what the cell printed before it (or into what captures it, ``%%capture``), within :attr:`max_output`
        characters in all."""
        for chunk in chunks if isinstance(chunks, list) else []:
            if isinstance(chunk, list) and len(chunk) == 2 and chunk[0] in ("stdout", "stderr") \
                    and isinstance(chunk[1], str):
                (sys.stdout if chunk[0] == "stdout" else sys.stderr).write(chunk[1])

    def _kernel_state(self, reply):
        """The kernel's state the cell runs under (:func:`hardened_grading.agent.kernel_state`), checked: the
        kernel's word is not trusted, so only known settings of known types are taken."""
        reply = reply if isinstance(reply, dict) else {}
        errstate = reply.get("errstate") if isinstance(reply.get("errstate"), dict) else {}
        errstate = {k: v for k, v in errstate.items() if k in agent.ERRSTATE_KINDS and v in agent.ERRSTATE_ACTIONS}
        options = reply.get("printoptions") if isinstance(reply.get("printoptions"), dict) else {}
        options = {k: v for k, v in options.items() if k in PRINT_OPTION_TYPES and isinstance(v, PRINT_OPTION_TYPES[k])
                   and not (isinstance(v, str) and len(v) > 40) and not (type(v) is int and not 0 <= v < 2**31)}
        try:
            with numpy.printoptions(**options):
                pass
        except (TypeError, ValueError):
            options = {}
        cwd = reply.get("cwd")
        folder = cwd if self.folder and isinstance(cwd, str) and os.path.isabs(cwd) and "\0" not in cwd else None
        return {"errstate": errstate, "printoptions": options, "folder": folder,
                "warnings_to": "stdout" if reply.get("warnings_to") == "stdout" else "stderr"}

    def fetch(self, names):
        """The kernel's values of `names` (those it defines), functions as KernelFunctions."""
        if not names:
            return {}
        reply = self._ask({"op": "get", "names": list(names)})
        return {name: self._decode(data) for name, data in reply.get("values", {}).items()}

    def run(self, source, setup, label, functions=frozenset(), predicted=()):
        """Run one test cell; return ``(stdout, error)``, error ``None`` or an nbformat-style dict.

        The warnings the cell shows (those its filters do not make errors) end stdout, as the
        notebook's setup shows them in the kernel: on standard output, which costs no points.

        `setup` is the namespace to start from; `functions` are the names of the answer
        functions, which need not be looked up first; `predicted` are the calls the cell is
        expected to make (:func:`predicted_calls`), asked of the kernel at once. Raises
        :class:`Abort` when the kernel can no longer answer.
        """
        namespace = dict(setup)
        names = free_names(source, setup)
        statements, self.checks = routed_checks(source)
        self.result, self.streams = None, []
        namespace[RECORD] = self._record
        linecache.cache[label] = (len(source), None, source.splitlines(True), label)  # lines in tracebacks
        first_error = None
        state = self._kernel_state({})
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("default")  # as IPython shows them: once per place
            self._base_filters, self._random_synced = list(warnings.filters), _random_fingerprint()
            try:
                namespace.update({name: KernelFunction(name, self) for name in names if name in functions})
                namespace.update(self.fetch([name for name in names if name not in functions]))
                state = self._kernel_state(self._begin(predicted))
                # The cell runs as in the kernel: under the numpy error state and print options the student's
                # code left there, in the folder the kernel is in (when it is the notebook's or one inside it).
                with contextlib.redirect_stdout(_StreamTo(self, "stdout")), \
                        contextlib.redirect_stderr(_StreamTo(self, "stderr")), numpy.errstate(**state["errstate"]), \
                        numpy.printoptions(**{**setup.get(PRINT_OPTIONS, {}), **state["printoptions"]}), \
                        _working_folder(self.folder, state["folder"]):
                    for number, statement in enumerate(statements):
                        try:
                            if number == len(statements) - 1 and isinstance(statement, ast.Expr):
                                self.result = eval(compile(ast.Expression(statement.value), label, "eval"), namespace)
                            else:
                                exec(compile(ast.Module([statement], type_ignores=[]), label, "exec"), namespace)
                        except Abort as abort:
                            self._not_run(f"not run: {abort.message}")
                            raise
                        except Exception as error:
                            first_error = first_error or error
                            # the checks of this statement that it never reached (a loop cut short)
                            self._not_run("not run, because a check before it failed", statement=number)
                            if not getattr(error, RECORD, False):
                                # not a check's failure: what follows may depend on what failed
                                self._not_run(f"not run, because an earlier step failed ({_one_line(error)})")
                                break
            except Abort as abort:  # before the cell's first statement: looking up its names, or the batch
                self._not_run(f"not run: {abort.message}")
                raise
            except Exception as error:  # looking up the cell's names failed
                first_error = first_error or error
                self._not_run(f"not run ({_one_line(error)})")
        for check in self.checks:
            if check.passed is None:  # written in a branch or a function that never ran
                check.passed = True
        if shown:  # where the kernel shows warnings: on stderr, unless the notebook's code sent them elsewhere
            _append(self.streams, state["warnings_to"], _shown(shown), self.max_output)
        error = _error_output(first_error, label) if first_error is not None else None
        return "".join(text for name, text in self.streams if name == "stdout"), error

    def _begin(self, predicted):
        """Ask the kernel for its state (:func:`hardened_grading.agent.kernel_state`) and, in the same round trip,
        for the replies to the `predicted` calls (kept for :meth:`call`); return the state's reply."""
        self._prefetched = []
        try:  # too large a batch (answers over max_reply_kb in all): every call is asked on its own
            replies = self._ask({"op": "batch", "calls": [{"op": "state"}, *predicted]}).get("replies") or [] \
                if predicted else [self._ask({"op": "state"})]
        except ReplyTooLarge:
            replies = []
        except Abort:
            raise
        except Exception:  # a kernel that cannot say: the cell runs under this process's state
            return {}
        if not replies:
            try:
                replies = [self._ask({"op": "state"})]
            except Abort:
                raise
            except Exception:
                return {}
        self._prefetched = [(_call_key(call), reply) for call, reply in zip(predicted, replies[1:])
                            if isinstance(reply, dict) and "status" in reply]
        return replies[0]

    def _record(self, index, check):
        """Run check number `index` (``check()`` calls the helper) and record how it went."""
        try:
            result = check()
        except Abort:
            raise
        except Exception as error:
            if self.checks[index].passed is not False:
                self.checks[index].fail(_one_line(error))
            setattr(error, RECORD, True)
            raise
        if self.checks[index].passed is None:
            self.checks[index].passed = True
        return result

    def _not_run(self, message, statement=None):
        """Fail the checks that have not run (those of top-level statement number `statement`, if given)."""
        for check in self.checks:
            if check.passed is None and statement in (None, check.statement):
                check.fail(message)


def _append(streams, name, text, limit):
    """Add `text` to stream `name` at the end of `streams` (``[[name, text], ...]``), within `limit` characters
    in all; the first text past it says what was dropped."""
    size = sum(len(t) for _, t in streams)
    if size >= limit:
        if not (streams and streams[-1][1].endswith(_DROPPED)):
            streams.append(["stdout", f"\n[more output was dropped: a test cell keeps {limit // 1024:,} KiB of what "
                                      f"it prints{_DROPPED}"])
        return
    text = text[:limit - size]
    if streams and streams[-1][0] == name:
        streams[-1][1] += text
    elif text:
        streams.append([name, text])


_DROPPED = " (c.ResilientExecute.max_output_kb)]\n"


class _StreamTo(io.TextIOBase):
    """A test cell's ``sys.stdout`` while it is judged: what it prints joins the judge's :attr:`Judge.streams`."""

    def __init__(self, the_judge, name):
        super().__init__()
        self._judge, self.name = the_judge, name

    def writable(self):
        return True

    def write(self, text):
        _append(self._judge.streams, self.name, str(text), self._judge.max_output)
        return len(text)


@contextlib.contextmanager
def _working_folder(notebook_folder, folder):
    """Work meanwhile in `folder` (the kernel's word) when it is a folder inside `notebook_folder`, reached without
    following a link (:func:`hardened_grading.student_folder.open_folder_inside`); else nothing changes."""
    fd = student_folder.open_folder_inside(notebook_folder, folder) if notebook_folder and folder else None
    if fd is None:
        yield
        return
    previous = os.getcwd()
    try:
        os.fchdir(fd)
    finally:
        os.close(fd)
    try:
        yield
    finally:
        os.chdir(previous)


def _random_fingerprint():
    """What identifies the state of numpy's global random generator and Python's ``random``, cheaply."""
    name, keys, position, has_gauss, cached = numpy.random.get_state()
    return hash((keys.tobytes(), position, has_gauss, cached, random.getstate()))


PRINT_OPTION_TYPES = {"precision": int, "threshold": int, "edgeitems": int, "linewidth": int, "suppress": bool,
                      "nanstr": str, "infstr": str, "sign": str, "floatmode": str, "legacy": (bool, str, int)}


def _shown(caught):
    return "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line or "") for w in caught)


def _student_exception(name, reply):
    types, message = reply.get("types", []), reply.get("message", "")
    if "ValueError" in types:
        return ValueError(message)
    if "NotImplementedError" in types:
        return NotImplementedError(message)
    if types[:1] == ["NameError"] and not reply.get("traceback"):  # the function is not defined
        return NameError(message)
    if types[:1] == ["ReplyTooLarge"] and not reply.get("traceback"):  # the agent's refusal: its value is too large
        return ReplyTooLarge(f"{name}: {message}")
    error = StudentError(f"{name} raised {types[0] if types else 'an exception'}: {message}")
    error.student_traceback = reply.get("traceback", [])
    error.student_type = types[0] if types else "Exception"
    return error


def _mirror_mutation(before, after):
    """Copy a change the student's function made to an argument array back onto ours."""
    if not isinstance(before, numpy.ndarray) or after is None:
        return
    changed = agent.decode(after)
    if isinstance(changed, numpy.ndarray) and changed.shape == before.shape and before.flags.writeable:
        if not numpy.array_equal(changed, before, equal_nan=before.dtype.kind in "fc"):
            before[...] = changed


def _error_output(error, label):
    """The error output of a failed test cell: the test's lines, then the student's traceback."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == label]
    lines = ["Traceback (most recent call last):\n"] + traceback.format_list(frames)
    ename = getattr(error, "student_type", type(error).__name__)
    student_lines = getattr(error, "student_traceback", [])
    if student_lines:
        lines += ["\nIn the submission's code:\n"] + student_lines
    lines.append(f"{ename}: {error}")
    return {"output_type": "error", "ename": ename, "evalue": str(error), "traceback": lines}
