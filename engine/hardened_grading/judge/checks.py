"""Partial credit: each check of a test cell routed through the judge and weighed (``# weight N``)."""

import ast
import dataclasses
import functools
import re

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
    """``(the cell's statements with each check routed through RECORD, its checks)``: the checks new, not yet
    run; the statements shared by every call with this `source` (a class's test cells are the same for each
    student), to compile, never to change."""
    body, checks = _routed(source)
    return list(body), [dataclasses.replace(check) for check in checks]


@functools.lru_cache(maxsize=512)
def _routed(source):
    tree = ast.parse(source)
    router = _RouteChecks(source)
    body = []
    for number, statement in enumerate(tree.body):
        first = len(router.checks)
        body.append(ast.fix_missing_locations(router.visit(statement)))
        for check in router.checks[first:]:
            check.statement = number
    return tuple(body), tuple(router.checks)


def score_of(checks, points):
    """The weighted share of `checks` that passed, times `points`, to 2 decimals (all of it with no checks)."""
    total = sum(check.weight for check in checks)
    if not total:
        return float(points) if all(check.passed for check in checks) else 0.0
    return round(points * sum(check.weight for check in checks if check.passed) / total, 2)
