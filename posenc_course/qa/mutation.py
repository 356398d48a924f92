"""One-change mutants of the reference solutions: the raw material of ``make mutants``.

A mutant is a reference function with one small change, of the kinds mutation-testing tools make
(mutmut, cosmic-ray):

- an arithmetic operator swapped (``+`` and ``-``, ``*`` and ``/``, ``//`` to ``/``, ``%`` to ``//``,
  ``**`` to ``*``), in expressions and augmented assignments; on boolean arrays, ``&`` and ``|``;
- a comparison loosened or tightened (``<`` and ``<=``, ``>`` and ``>=``), or negated (``==`` and
  ``!=``, ``is`` and ``is not``, ``in`` and ``not in``); ``and`` and ``or`` swapped;
- a unary minus dropped;
- a number made one more and one less; ``True`` and ``False`` swapped;
- a numpy or math function, or an array method, swapped for its sibling (:data:`SIBLINGS`:
  ``maximum``/``minimum``, ``floor``/``ceil``, ``sum``/``mean``, ``sin``/``cos``, ...).

The change is made in the function's source text, at the place the AST points to, so the mutant keeps
its layout and comments and its diff is one line. Nothing inside a ``raise`` statement is changed: an
error's message is not graded.

:func:`dropped_guards` makes a mutant of another kind, *guard*: one input check of the contract taken out
(an ``if`` that only raises ValueError, made ``pass``): the answer of a student who forgot that check.
The tests catch it only if they try an input that the rest of the function accepts, not one that numpy's
own ValueError (a shape that does not broadcast) turns away for them (``tests/unit/test_input_checks.py``).
"""

import ast
import difflib
import hashlib
import inspect
import io
import tokenize
from dataclasses import dataclass

from ..layout import ASSIGNMENT, exercise_functions

ARITHMETIC = {"&": "|", "|": "&", "+": "-", "-": "+", "*": "/", "/": "*", "//": "/", "%": "//", "**": "*", "@": "*"}
COMPARISON = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
              "is": "is not", "is not": "is", "in": "not in", "not in": "in"}
BOOLEAN = {"and": "or", "or": "and"}
_PAIRS = [("maximum", "minimum"), ("max", "min"), ("amax", "amin"), ("argmax", "argmin"), ("fmax", "fmin"),
          ("floor", "ceil"), ("trunc", "ceil"), ("sum", "mean"), ("nansum", "nanmean"), ("cumsum", "cumprod"),
          ("sin", "cos"), ("exp", "expm1"), ("log", "log2"), ("log1p", "log"), ("sqrt", "square"),
          ("any", "all"), ("triu", "tril"), ("add", "subtract"), ("multiply", "divide"),
          ("isposinf", "isneginf"), ("float64", "float32"), ("abs", "negative"), ("round", "floor"),
          ("ones", "zeros"), ("ones_like", "zeros_like"), ("hstack", "vstack"), ("argsort", "sort")]
#: ``{name: sibling}``: a function or method swapped for the one a student might confuse it with.
SIBLINGS = {**{a: b for a, b in _PAIRS}, **{b: a for a, b in _PAIRS if b not in {x for x, _ in _PAIRS}}}
BUILTIN_SIBLINGS = {"max": "min", "min": "max"}
_OPERATOR_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
                     ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
                     ast.LShift: "<<", ast.RShift: ">>", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
                     ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
                     ast.NotIn: "not in", ast.And: "and", ast.Or: "or"}


@dataclass(frozen=True)
class Mutant:
    """One changed function. `line` is the changed line's number in the module's file."""

    exercise: str
    function: str
    module: str  #: the module of ``posenc_solutions`` that defines `function`
    kind: str  #: arithmetic, comparison, boolean, unary, number, bool or sibling
    line: int
    before: str  #: the changed line, before and after
    after: str
    source: str  #: the mutant function's whole source

    @property
    def name(self):
        """``function: `old line` -> `new line```: what an author reads and ``authoring/mutants.md`` names."""
        return f"{self.function}: `{self.before.strip()}` -> `{self.after.strip()}`"

    @property
    def key(self):
        """A short id, the same for the same change to the same function."""
        return self.function + "-" + hashlib.sha1(self.source.encode()).hexdigest()[:8]

    def diff(self, original):
        return "".join(difflib.unified_diff(original.splitlines(True), self.source.splitlines(True),
                                            f"reference {self.function}", f"mutant {self.key}", n=1))


class _Text:
    """A source text addressed the way the AST addresses it: line numbers from 1, UTF-8 byte columns."""

    def __init__(self, source):
        self.source = source
        self.lines = source.splitlines(True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno, byte_col):
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode()[:byte_col].decode(errors="replace"))

    def char_offset(self, lineno, char_col):
        return self.starts[lineno - 1] + char_col

    def line_at(self, offset):
        index = max(i for i, start in enumerate(self.starts[:-1]) if start <= offset)
        return index + 1

    def span(self, node):
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)


def _operator_tokens(source):
    """``[(start, end, text)]`` of every operator and keyword token, in character offsets; ``is not``
    and ``not in`` are one token each."""
    text = _Text(source)
    tokens = [(text.char_offset(*t.start), text.char_offset(*t.end), t.string)
              for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type in (tokenize.OP, tokenize.NAME)]
    merged = []
    for token in tokens:
        if merged and (merged[-1][2], token[2]) in {("is", "not"), ("not", "in")}:
            merged[-1] = (merged[-1][0], token[1], f"{merged[-1][2]} {token[2]}")
        else:
            merged.append(token)
    return merged


def _in_raise(tree):
    """The ids of every node inside a ``raise`` statement."""
    return {id(node) for statement in ast.walk(tree) if isinstance(statement, ast.Raise)
            for node in ast.walk(statement)}


def _docstring_nodes(tree):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) and ast.get_docstring(node) is not None:
            found.add(id(node.body[0].value))
    return found


def _edits(source):
    """``(kind, start, end, replacement)`` for every change the mutation operators can make in `source`."""
    tree = ast.parse(source)
    text, skipped = _Text(source), _in_raise(tree) | _docstring_nodes(tree)
    operators = _operator_tokens(source)

    def operator_between(after, before, symbol):
        return next(((s, e) for s, e, t in operators if after <= s and e <= before and t == symbol), None)

    edits = []

    def swap(kind, after, before, symbol, table):
        where = operator_between(after, before, symbol)
        if where and symbol in table:
            edits.append((kind, *where, table[symbol]))

    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.BinOp):
            swap("arithmetic", text.span(node.left)[1], text.span(node.right)[0], _OPERATOR_SYMBOLS[type(node.op)],
                 ARITHMETIC)
        elif isinstance(node, ast.AugAssign):
            symbol = _OPERATOR_SYMBOLS[type(node.op)]
            where = operator_between(text.span(node.target)[1], text.span(node.value)[0], symbol + "=")
            if where and symbol in ARITHMETIC:
                edits.append(("arithmetic", *where, ARITHMETIC[symbol] + "="))
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:]):
                swap("comparison", text.span(left)[1], text.span(right)[0], _OPERATOR_SYMBOLS[type(op)], COMPARISON)
        elif isinstance(node, ast.BoolOp):
            for left, right in zip(node.values, node.values[1:]):
                swap("boolean", text.span(left)[1], text.span(right)[0], _OPERATOR_SYMBOLS[type(node.op)], BOOLEAN)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            start, _ = text.span(node)
            edits.append(("unary", start, text.span(node.operand)[0], ""))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            edits.append(("bool", *text.span(node), repr(not node.value)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            for delta in (1, -1):
                edits.append(("number", *text.span(node), repr(node.value + delta)))
        elif isinstance(node, ast.Attribute) and node.attr in SIBLINGS:
            _, end = text.span(node)
            edits.append(("sibling", end - len(node.attr), end, SIBLINGS[node.attr]))
        elif isinstance(node, ast.Name) and node.id in BUILTIN_SIBLINGS:
            edits.append(("sibling", *text.span(node), BUILTIN_SIBLINGS[node.id]))
    return sorted(set(edits), key=lambda e: (e[1], e[2], e[0], e[3]))


def changes(source):
    """``(kind, line, mutated source)`` for every one-change mutant of `source` that still compiles,
    in source order, each distinct mutant once; `line` counts from 1 in `source`."""
    text, found, seen = _Text(source), [], {source}
    for kind, start, end, replacement in _edits(source):
        mutated = source[:start] + replacement + source[end:]
        if mutated in seen:
            continue
        seen.add(mutated)
        try:
            ast.parse(mutated)
        except SyntaxError:
            continue
        found.append((kind, text.line_at(start), mutated))
    return found


def mutants_of(function, exercise):
    """Every one-change mutant of `function`."""
    source = inspect.getsource(function)
    first_line = inspect.getsourcelines(function)[1]
    return [Mutant(exercise, function.__name__, function.__module__, kind, first_line + line - 1,
                   source.splitlines()[line - 1], mutated.splitlines()[line - 1], mutated)
            for kind, line, mutated in changes(source)]


def all_mutants(exercises=None, assignment=ASSIGNMENT):
    """Every mutant of every function a graded `assignment` asks for, or of its exercises named in `exercises`."""
    import posenc_solutions

    found = []
    for exercise, names in exercise_functions(assignment).items():
        if exercises and exercise not in exercises:
            continue
        for name in names:
            found += mutants_of(getattr(posenc_solutions, name), exercise)
    return found


def dropped_guards(function, exercise):
    """Every mutant of `function` with one input check taken out: a statement ``if ...: raise
    ValueError(...)`` (with no ``else``) replaced by ``pass``."""
    source = inspect.getsource(function)
    first_line = inspect.getsourcelines(function)[1]
    lines = source.splitlines(True)
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.If) and not node.orelse
                and all(isinstance(statement, ast.Raise) for statement in node.body)):
            continue
        raised = node.body[0].exc
        if getattr(getattr(raised, "func", raised), "id", None) != "ValueError":
            continue
        first = lines[node.lineno - 1]
        indent = first[:len(first) - len(first.lstrip())]
        mutated = "".join(lines[:node.lineno - 1] + [f"{indent}pass\n"] + lines[node.end_lineno:])
        found.append(Mutant(exercise, function.__name__, function.__module__, "guard", first_line + node.lineno - 1,
                            first.rstrip("\n"), f"{indent}pass", mutated))
    return found
