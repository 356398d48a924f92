"""The namespace a test cell runs in, and the calls it will make.

A fresh namespace made of the released notebook's own set-up cells (the grader's own objects); every name a test
uses that it does not define is looked up in the kernel: a student's function becomes a :class:`KernelFunction`,
whose calls the kernel's agent carries out. The calls a test cell makes when the answers are right
(:func:`predicted_calls`) are asked of the kernel in one batch first.
"""

import ast
import builtins
import contextlib
import dataclasses
import functools
import io
import json
import os
import warnings
from pathlib import Path

import nbformat
import numpy

from ..cells import grade_id, is_answer_cell, is_test_cell
from ..errors import SetupError
from . import agent, magics

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


@functools.lru_cache(maxsize=1024)
def _translated(source):
    """`source` turned from IPython into Python (:func:`hardened_grading.judge.magics.translate`), once per source: a
    class's submissions share their setup cells and the reference answers, which every test cell runs again. Read
    it, never change it: it is shared."""
    return magics.translate(source)


@functools.lru_cache(maxsize=1024)
def _compiled(source, label):
    """`source`, translated (:func:`_translated`), compiled under the file name `label`, once per source."""
    return compile(_translated(source).code, label, "exec")


@functools.lru_cache(maxsize=1024)
def _functions_defined(source):
    """The names of the functions `source` defines at its top level (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    return frozenset(node.name for node in tree.body if isinstance(node, ast.FunctionDef))


def setup_namespace(notebook):
    """The namespace made by the notebook's setup cells: code cells neither answers nor tests, each turned from
    IPython into Python (:func:`hardened_grading.judge.magics.translate`), whose magics call the judge's own
    ``get_ipython`` (:data:`hardened_grading.judge.magics.SHELL`; a cell's own ``get_ipython()`` is not defined here).

    It stops before the first set-up cell with a magic the judge cannot carry out (:func:`magic_fallbacks`):
    that cell, and the test cells below it, need the kernel.
    """
    namespace = {"__name__": "__main__", "__builtins__": builtins, magics.SHELL: magics.get_ipython}
    # A setup cell may set warnings.showwarning or numpy's print options, for the kernel: they are put
    # back here, and the print options are used again while a test cell runs (:meth:`Judge.run`).
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), numpy.printoptions():
        for number, cell in enumerate(notebook.cells, 1):
            if cell.cell_type == "code" and not is_answer_cell(cell) and not is_test_cell(cell):
                if _translated(cell.source).unsupported:
                    break
                try:
                    exec(_compiled(cell.source, "<setup cell>"), namespace)
                except Exception as error:
                    raise SetupError(f"cell {number}{f' ({grade_id(cell)})' if grade_id(cell) else ''}: "
                                     f"{type(error).__name__}: {error}") from error
        namespace[PRINT_OPTIONS] = numpy.get_printoptions()
    return namespace


@dataclasses.dataclass
class Fallback:
    """A cell with a magic the judge cannot carry out in the grader (:mod:`hardened_grading.judge.magics`), and the
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


def setup_problem(error):
    """One line that says why the trusted set-up could not be made."""
    return str(error) if isinstance(error, SetupError) else f"{type(error).__name__}: {error}"


PRINT_OPTIONS = "__hardened_grading_print_options__"


def answer_functions(notebook):
    """Names of the functions the notebook's answer cells define (in the release: the stubs)."""
    return frozenset().union(*(_functions_defined(cell.source) for cell in notebook.cells if is_answer_cell(cell)))


def free_names(source, namespace):
    """Names the cell reads but never assigns, and that `namespace` and builtins lack."""
    loaded, stored = _read_and_assigned(source)
    return sorted(loaded - stored - set(namespace) - set(dir(builtins)))


@functools.lru_cache(maxsize=512)
def _read_and_assigned(source):
    """``(names the cell reads, names it assigns)``, as frozensets."""
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
    return frozenset(loaded), frozenset(stored)


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
    (:func:`hardened_grading.judge.agent.warning_category`)."""
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
                exec(_compiled(cell.source, "<reference answer>"), namespace)
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
    """A test cell's `source` as the judge runs it (:func:`hardened_grading.judge.magics.translate`), or None when it
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
