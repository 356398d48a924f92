"""IPython's syntax in the trusted judge: magics in the set-up and test cells it runs in the grader.

A notebook's cells are IPython, not Python: ``%matplotlib inline``, ``%%capture``, ``!pip list``. The judge
(:mod:`hardened_grading.judge`) compiles its cells in the grader, so each is first turned into Python as IPython
turns it (:func:`translate`, IPython's ``TransformerManager``): a magic becomes a call of
``get_ipython().run_line_magic(...)``, ``run_cell_magic(...)`` or ``system(...)``. Those calls, and only those,
are made to call the judge's own ``get_ipython`` (:func:`get_ipython`, named :data:`SHELL` in the namespace), a
small stand-in for IPython's shell, not a real one; a cell's own ``get_ipython()`` stays undefined in the grader,
as a cell that asks whether it runs in IPython (``try: get_ipython() except NameError``) expects. The stand-in
carries out in the grader only the magics that make sense there and change nothing outside the cell's
namespace:

- ``%matplotlib``, ``%config``, ``%load_ext``, ``%unload_ext``, ``%reload_ext``, ``%autoreload``,
  ``%aimport``: nothing to do (the grader shows no figure; an extension's magics, used later, are checked as
  any magic);
- ``%reset`` (with or without ``-f``: a notebook has no one to confirm), ``-s``, ``array``, ``in``, ``out``,
  ``dhist``: the namespace is cleared as IPython clears it;
- display cell magics (``%%html``, ``%%markdown``, ``%%latex``, ``%%javascript``, ``%%js``, ``%%svg``): nothing
  is shown. A display never checks anything: in a test cell it can neither pass nor fail, and the judge's
  outputs are its verdict, as text;
- ``%%capture [--no-stdout] [--no-stderr] [--no-display] [NAME]`` and ``%%time``: their body runs, as Python
  lines of the cell itself (so that the names a test reads in it are looked up in the kernel, and its checks
  are counted), printed output captured (``NAME`` gets IPython's ``CapturedIO``), or the time printed.

A magic that only shows something, written as a statement of its own whose value nothing uses, is
*left out*: ``%timeit``, ``%who``, ``%whos``, ``%pwd``, ``%lsmagic``, ``%history``, ``%env`` (without ``=``),
help (``name?``), ``%pip``/``%conda`` ``list``/``show``/``freeze``, and a shell command (``!cmd``) whose every
program only reads (``ls``, ``cat``, ``echo``, ``pip list``, ``nvidia-smi``...) with no ``>``, ``;``, ``&``,
`````` ` `````` or ``$(``. The kernel runs it, as every set-up cell, and the judge prints a line in its place.

Anything else (``%run``, ``%pip install``, ``%cd``, ``%env NAME=value``, ``%time``, ``%%writefile``, ``%%bash``,
a shell command that may change something, an unknown magic, a magic whose value is used) cannot be carried out honestly in the grader: :func:`translate` lists it as *unsupported*, and
the caller runs the cell in the kernel instead (:class:`hardened_grading.preprocessors.execute.ResilientExecute`). The
stand-in refuses it too, should it be called anyway.
"""

import ast
import contextlib
import functools
import io
import re
import shlex
import sys
import time
from dataclasses import dataclass, field

#: Line magics the stand-in carries out: nothing to do in the grader.
NO_OP_LINE_MAGICS = frozenset({"matplotlib", "config", "load_ext", "unload_ext", "reload_ext", "autoreload",
                               "aimport"})
#: Cell magics whose body is a display: nothing is shown in the grader.
DISPLAY_CELL_MAGICS = frozenset({"html", "HTML", "markdown", "latex", "javascript", "js", "svg"})
#: Cell magics whose body is code, run as lines of the cell itself.
CODE_CELL_MAGICS = frozenset({"capture", "time"})
#: Line magics that only show something: left out when their value is not used.
SHOW_ONLY_LINE_MAGICS = frozenset({"timeit", "who", "whos", "pwd", "lsmagic", "history", "hist", "pinfo", "pinfo2",
                                   "pdoc", "pdef", "psource", "pfile", "magic", "quickref", "env", "pip", "conda",
                                   "system", "sx", "ls", "ll", "cat", "lf", "ldir"})
#: Programs a left-out shell command may run: each only reads and shows.
READ_ONLY_PROGRAMS = frozenset({"ls", "ll", "cat", "head", "tail", "echo", "pwd", "wc", "which", "whoami", "date",
                                "uname", "hostname", "nproc", "free", "df", "du", "env", "printenv", "lscpu",
                                "nvidia-smi", "tree", "file", "stat", "grep", "sort", "uniq", "id", "uptime"})
#: ``pip``/``conda`` subcommands that only show something.
READ_ONLY_PACKAGE_COMMANDS = frozenset({"list", "show", "freeze", "--version", "-V", "info"})
_SHELL_WRITES = re.compile(r"[>;&`\n]|\$\(")


class MagicNotInJudge(Exception):
    """A magic the trusted judge cannot carry out in the grader: its cell runs in the kernel."""


@dataclass
class Translation:
    """A cell in Python (:attr:`code`), and the magics in it that the judge cannot carry out."""

    code: str
    unsupported: list = field(default_factory=list)  #: each as written, ``%run helpers.py``
    left_out: list = field(default_factory=list)  #: show-only magics the judge leaves out


def translate(source):
    """The cell `source` as Python, with the magics it uses that the judge cannot carry out (a new
    :class:`Translation`; a cell's translation is made once, :func:`_translated`).

    IPython's own ``TransformerManager`` turns each magic into a call of ``get_ipython()``; a cell whose first
    line is ``%%capture`` or ``%%time`` becomes ``get_ipython().begin_cell_magic(...)``, its body (translated as
    a cell of its own) and ``get_ipython().end_cell_magic(...)``, on the cell's own lines. A cell that is not
    valid Python once translated is returned as it is (the judge then says why, as before).
    """
    made = _translated(source)
    return Translation(made.code, list(made.unsupported), list(made.left_out))


@functools.lru_cache(maxsize=512)
def _translated(source):
    from IPython.core.inputtransformer2 import TransformerManager

    lines = source.splitlines(keepends=True)
    blank = 0
    while blank < len(lines) and not lines[blank].strip():
        blank += 1
    first = lines[blank].rstrip("\n") if blank < len(lines) else ""
    if first.startswith("%%"):
        name, _, args = first[2:].partition(" ")
        if name in CODE_CELL_MAGICS:
            body = translate("".join(lines[blank + 1:]))
            problem = _cell_magic_problem(name, args.strip(), body.code)
            inner = _kept_last_value(body.code) if name == "time" else body.code
            code = ("\n" * blank + f"{SHELL}().begin_cell_magic({name!r}, {args.strip()!r})\n"
                    + inner + ("" if inner.endswith("\n") or not inner else "\n")
                    + f"{SHELL}().end_cell_magic({name!r})\n")
            return Translation(code, body.unsupported + ([f"%%{name} {args.strip()}".strip() + f" ({problem})"]
                                                         if problem else []), body.left_out)
    code = TransformerManager().transform_cell(source)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return Translation(source)
    translation = Translation(code)
    translation.code = _renamed(code, _check(tree, translation))
    return translation


def _cell_magic_problem(name, args, body):
    """Why the code cell magic `name` with `args` cannot be carried out (None when it can)."""
    if name == "capture":
        try:
            _capture_options(args)
        except ValueError as error:
            return str(error)
    elif args:
        return "options of %%time"
    return None


#: Where a ``%%time`` body's last value is kept for its end (IPython shows it as the cell's result).
TIME_VALUE = "__hardened_grading_time_value__"


def _kept_last_value(code):
    """`code` whose last statement, when it is an expression, is kept as :data:`TIME_VALUE`, on the same lines."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    if not (tree.body and isinstance(tree.body[-1], ast.Expr)):
        return code
    lines = code.splitlines(keepends=True)
    line = tree.body[-1].lineno - 1
    lines[line] = f"{TIME_VALUE} = {lines[line]}"
    return "".join(lines)


def _capture_options(args):
    """``(stdout, name)`` of ``%%capture`` `args`: whether printed output is captured, and the name to bind."""
    words = shlex.split(args)
    names = [word for word in words if not word.startswith("-")]
    unknown = [word for word in words if word.startswith("-") and word not in ("--no-stdout", "--no-stderr",
                                                                              "--no-display")]
    if unknown or len(names) > 1 or any(not name.isidentifier() for name in names):
        raise ValueError(f"options {args!r}")
    return "--no-stdout" not in words, (names[0] if names else None)


#: The methods of IPython's shell that its transformer calls for a magic (and :func:`translate` for a body's ends).
MAGIC_METHODS = frozenset({"run_line_magic", "run_cell_magic", "system", "getoutput", "begin_cell_magic",
                           "end_cell_magic"})


def _check(tree, translation):
    """Sort each magic of `tree` (a call ``get_ipython().METHOD(...)``, METHOD one of :data:`MAGIC_METHODS`) into
    carried out, left out or unsupported; return the places ``(line, column)`` of their ``get_ipython``.

    Any other use of ``get_ipython`` is the cell's own Python, left as it is: in the grader it is not defined,
    as a cell that asks whether it runs in IPython (``try: get_ipython() except NameError``) expects.
    """
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    places = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "get_ipython"):
            continue
        call = parents.get(node)
        method = parents.get(call)
        invoked = parents.get(method)
        if not (isinstance(call, ast.Call) and call.func is node and not call.args and not call.keywords
                and isinstance(method, ast.Attribute) and method.attr in MAGIC_METHODS
                and isinstance(invoked, ast.Call) and invoked.func is method):
            continue
        places.append((node.lineno, node.col_offset))
        if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in invoked.args) or invoked.keywords:
            translation.unsupported.append(f"get_ipython().{method.attr}(...)")
            continue
        args = [a.value for a in invoked.args]
        verdict, shown = classify(method.attr, args, bare=isinstance(parents.get(invoked), ast.Expr))
        if verdict == "unsupported":
            translation.unsupported.append(shown)
        elif verdict == "left out":
            translation.left_out.append(shown)
    return places


#: The name of the judge's stand-in in a namespace it makes: the magics call it, a cell's own ``get_ipython`` does not.
SHELL = "__hardened_grading_ipython__"


def _renamed(code, places):
    """`code` with the ``get_ipython`` at each of `places` (``(line, column)``, from :func:`_check`) named :data:`SHELL`."""
    lines = code.splitlines(keepends=True)
    for line, column in sorted(places, reverse=True):  # from the right: the columns before stay
        text = lines[line - 1]
        lines[line - 1] = text[:column] + SHELL + text[column + len("get_ipython"):]
    return "".join(lines)


def written(method, args):
    """How the magic of ``get_ipython().method(*args)`` is written in the cell."""
    if method == "run_line_magic" and len(args) == 2:
        return f"%{args[0]} {args[1]}".rstrip()
    if method == "run_cell_magic" and len(args) >= 2:
        return f"%%{args[0]} {args[1]}".rstrip()
    if method in ("system", "getoutput") and args:
        return f"!{args[0]}"
    if method in ("begin_cell_magic", "end_cell_magic") and args:
        return f"%%{args[0]}"
    return f"get_ipython().{method}(...)"


def classify(method, args, bare):
    """``(verdict, as written)`` of the call ``get_ipython().method(*args)``: verdict ``"carried out"``,
    ``"left out"`` (only shows something, and `bare`: a statement of its own) or ``"unsupported"``."""
    shown = written(method, args)
    if method == "run_line_magic" and len(args) == 2:
        name, line = args
        if name in NO_OP_LINE_MAGICS or (name == "reset" and _reset_options(line) is not None):
            return "carried out", shown
        if bare and name in SHOW_ONLY_LINE_MAGICS and _shows_only(name, line):
            return "left out", shown
    elif method == "run_cell_magic" and len(args) == 3 and args[0] in DISPLAY_CELL_MAGICS:
        return "carried out", shown
    elif method in ("begin_cell_magic", "end_cell_magic") and args and args[0] in CODE_CELL_MAGICS:
        return "carried out", shown
    elif method == "system" and len(args) == 1 and bare and _reads_only(args[0]):
        return "left out", shown
    return "unsupported", shown


def _shows_only(name, line):
    if name == "env":
        return "=" not in line and len(line.split()) <= 1
    if name in ("pip", "conda"):
        return line.split()[:1] and line.split()[0] in READ_ONLY_PACKAGE_COMMANDS
    if name in ("system", "sx"):
        return _reads_only(line)
    return True


def _reads_only(command):
    """Whether the shell `command` only reads and shows: each program of its pipeline in READ_ONLY_PROGRAMS
    (``pip``/``conda`` with a listing subcommand), no redirection to a file, no other command run."""
    if not command.strip() or _SHELL_WRITES.search(command):
        return False
    for part in command.split("|"):
        try:
            words = shlex.split(part)
        except ValueError:
            return False
        program = words[0].rsplit("/", 1)[-1] if words else ""
        if program in ("pip", "pip3", "conda") and words[1:2] and words[1] in READ_ONLY_PACKAGE_COMMANDS:
            continue
        if program not in READ_ONLY_PROGRAMS:
            return False
    return True


def _reset_options(line):
    """``(soft, targets)`` of a ``%reset`` the judge carries out, or None (``--aggressive``, an unknown option)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    options = [w for w in words if w.startswith("-")]
    targets = [w.lower() for w in words if not w.startswith("-")]
    if any(o not in ("-f", "-s", "-fs", "-sf") for o in options) or any(
            t not in ("in", "out", "dhist", "array") for t in targets):
        return None
    return any("s" in o for o in options), targets


# The stand-in -------------------------------------------------------------------------------------

#: Names a reset keeps: Python's own, and the judge's (``__hardened_grading_*``: this stand-in among them).
_KEPT = ("__name__", "__builtins__")
#: The key, in the namespace, of the ``%%capture`` and ``%%time`` bodies that run: it lives and dies with it.
_OPEN = "__hardened_grading_cell_magics__"


def get_ipython():
    """The judge's stand-in for IPython's ``get_ipython()``, which the magics of a translated cell call (as
    :data:`SHELL`): a :class:`JudgeShell` of the namespace whose code calls it (the frame's globals: a set-up
    cell's namespace, or the copy a test cell runs in)."""
    return JudgeShell(sys._getframe(1).f_globals)


class JudgeShell:
    """What the judge's ``get_ipython()`` returns: the magics :func:`translate` lets through, carried out in
    `namespace`; any other raises :class:`MagicNotInJudge`."""

    def __init__(self, namespace):
        self.namespace = namespace

    def run_line_magic(self, name, line, _stack_depth=1):
        verdict, shown = classify("run_line_magic", [name, line], bare=True)
        if verdict == "left out":
            return self._left_out(shown)
        if verdict != "carried out":
            raise MagicNotInJudge(f"{shown}: the trusted judge cannot carry out this magic in the grader")
        if name == "reset":
            self._reset(*_reset_options(line))
        return None

    def run_cell_magic(self, name, line, cell):
        if name not in DISPLAY_CELL_MAGICS:
            raise MagicNotInJudge(f"%%{name}: the trusted judge cannot carry out this magic in the grader")
        return None  # a display: nothing is shown in the grader

    def system(self, command):
        verdict, shown = classify("system", [command], bare=True)
        if verdict != "left out":
            raise MagicNotInJudge(f"{shown}: the trusted judge does not run shell commands in the grader")
        return self._left_out(shown)

    def begin_cell_magic(self, name, args):
        """The start of a ``%%capture`` or ``%%time`` body (:func:`translate`)."""
        stack = self.namespace.setdefault(_OPEN, [])
        if name == "capture":
            keep_stdout, bound = _capture_options(args)
            captured = io.StringIO()
            redirect = contextlib.redirect_stdout(captured)
            if keep_stdout:
                redirect.__enter__()
            stack.append((name, (redirect if keep_stdout else None, captured, bound)))
        elif name == "time":
            stack.append((name, (time.process_time(), time.perf_counter())))
        else:
            raise MagicNotInJudge(f"%%{name}: the trusted judge cannot carry out this magic in the grader")

    def end_cell_magic(self, name):
        """The end of the body that :meth:`begin_cell_magic` began."""
        stack = self.namespace.get(_OPEN) or []
        if not stack or stack[-1][0] != name:
            raise MagicNotInJudge(f"%%{name}: its end without its start")
        _, state = stack.pop()
        if not stack:
            del self.namespace[_OPEN]
        if name == "capture":
            from IPython.utils.capture import CapturedIO

            redirect, captured, bound = state
            if redirect is not None:
                redirect.__exit__(None, None, None)
            if bound:
                self.namespace[bound] = CapturedIO(captured, io.StringIO(), [])
        else:  # as IPython's %%time: the times, then the value of the body's last expression, its result
            cpu, wall = time.process_time() - state[0], time.perf_counter() - state[1]
            print(f"CPU times: total: {cpu:.3g} s\nWall time: {wall:.3g} s")
            return self.namespace.pop(TIME_VALUE, None)
        return None

    @staticmethod
    def _left_out(shown):
        print(f"[{shown}: only shows something; the trusted judge leaves it out, and the kernel runs it]")

    def _reset(self, soft, targets):
        """``%reset``: every name the notebook defined, or (`soft`) those not starting with ``_``; with
        `targets`, only the numpy arrays (``array``; the histories ``in``, ``out``, ``dhist`` are the kernel's)."""
        import numpy

        if targets:
            doomed = [n for n, v in self.namespace.items() if "array" in targets and not n.startswith("_")
                      and isinstance(v, numpy.ndarray)]
        else:
            doomed = [n for n in self.namespace if n not in _KEPT and not n.startswith("__hardened_grading")
                      and not (soft and n.startswith("_"))]
        for name in doomed:
            del self.namespace[name]

