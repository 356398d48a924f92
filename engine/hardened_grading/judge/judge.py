""":class:`Judge`: one test cell run in the grader's process, in the state the student's code left in the kernel."""

import ast
import contextlib
import functools
import io
import json
import linecache
import os
import random
import sys
import traceback
import warnings

import numpy

from ..untrusted import folder as student_folder
from . import agent
from .checks import RECORD, routed_checks
from .messages import _one_line
from .setup import (
    PRINT_OPTIONS,
    Abort,
    KernelFunction,
    ReplyTooLarge,
    StudentError,
    _call_key,
    _call_request,
    _raise_again,
    free_names,
)
from .syntax import explain_name_error


@functools.lru_cache(maxsize=512)
def _compiled(source, label):
    """``((code, whether it is the cell's value), ...)``: the test cell's statements (:func:`routed_checks`)
    compiled one by one under `label`, its last one for its value when it is an expression (IPython shows it)."""
    statements = routed_checks(source)[0]
    return tuple((compile(ast.Expression(statement.value), label, "eval"), True)
                 if number == len(statements) - 1 and isinstance(statement, ast.Expr) else
                 (compile(ast.Module([statement], type_ignores=[]), label, "exec"), False)
                 for number, statement in enumerate(statements))


class Judge:
    """Runs test cells here, with `ask(request) -> reply` reaching the kernel."""

    def __init__(self, ask, folder=None, max_output=None, cells=()):
        self._ask_kernel = ask
        #: the notebook's cells run before the test cell: a name not defined because an answer cell among them
        #: does not compile is said so (:func:`hardened_grading.judge.syntax.explain_name_error`)
        self.cells = list(cells)
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
        """The kernel's state the cell runs under (:func:`hardened_grading.judge.agent.kernel_state`), checked: the
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
        self.checks = routed_checks(source)[1]
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
                    for number, (code, value) in enumerate(_compiled(source, label)):
                        try:
                            if value:
                                self.result = eval(code, namespace)
                            else:
                                exec(code, namespace)
                        except Abort as abort:
                            self._not_run(f"not run: {abort.message}")
                            raise
                        except Exception as error:
                            explain_name_error(error, self.cells)  # a name an answer cell's syntax error left out
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
                explain_name_error(error, self.cells)
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
        """Ask the kernel for its state (:func:`hardened_grading.judge.agent.kernel_state`) and, in the same round trip,
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
            explain_name_error(error, self.cells)
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
    following a link (:func:`hardened_grading.untrusted.folder.open_folder_inside`); else nothing changes."""
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
        return NameError(message, name=name)
    if types[:1] == ["ReplyTooLarge"] and not reply.get("traceback"):  # the agent's refusal: its value is too large
        return ReplyTooLarge(f"{name}: {message}")
    error = StudentError(f"{name} raised {types[0] if types else 'an exception'}: {message}")
    error.student_traceback = reply.get("traceback", [])
    error.student_type = types[0] if types else "Exception"
    return error


def _mirror_mutation(before, after):
    """Copy a change the student's function made to an argument (an array, a list, a dict, nested) back onto
    ours, in place, as the call made it to the kernel's copy: a test that kept the argument, or a part of it,
    sees what a test cell run in the kernel would. An argument that came back holding what cannot be carried
    (an object, a function) is left as it is."""
    if not isinstance(before, agent.MUTABLE) or after is None:
        return
    changed = agent.decode(after)
    if not _carried_whole(changed):
        return
    _mirrored(before, changed)


def _carried_whole(value):
    """Whether `value`, decoded from the kernel, holds nothing that :func:`agent.encode` could not carry."""
    if isinstance(value, (list, tuple)):
        return all(map(_carried_whole, value))
    if isinstance(value, dict):
        return all(map(_carried_whole, value.values()))
    return not isinstance(value, agent.Opaque)


def _mirrored(before, after):
    """`after` written into `before` where both are arrays of one shape, lists or dicts (so that whoever holds
    `before`, or a part of it, sees the change); return what the place of `before` holds now."""
    if isinstance(before, numpy.ndarray) and isinstance(after, numpy.ndarray):
        if after.shape == before.shape and before.flags.writeable:
            if not numpy.array_equal(after, before, equal_nan=before.dtype.kind in "fc"):
                before[...] = after
            return before
        return after
    if type(before) is dict and type(after) is dict:
        for key in [key for key in before if key not in after]:
            del before[key]
        for key, value in after.items():
            before[key] = _mirrored(before[key], value) if key in before else value
        return before
    if type(before) is list and type(after) is list:
        if len(before) == len(after):
            before[:] = [_mirrored(old, new) for old, new in zip(before, after)]
        else:
            before[:] = after
        return before
    return before if _same(before, after) else after


def _same(a, b):
    """Whether two values decoded alike are equal (a number, a string, a tuple): keep the one the test holds."""
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 -- a tuple of arrays: not comparable as one; take the kernel's
        return False


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
