"""The first assignment's graded class, as a table, and how its submissions are made, graded and checked.

:data:`CLASS`: each row names a student, says how the submission is built, which exercises must lose points,
and what the graded notebook and the log must say (tests/grading/test_grading.py grades it); rows that cannot
change each other's scores share a submission (:func:`grade_together`). Points come from the source notebook's
metadata, never typed here. Used by the grading tests of every assignment (tests/helpers/later_assignments.py)
and by those that grade a few of its students (the sandbox, the hostile ones, the class grader)."""

import ast
import copy
import functools
import inspect
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Callable

import nbformat

from posenc_course.course import ROOT, nbgrader_env
from posenc_course.layout import (ASSIGNMENT, NOTEBOOK, SOURCE_NOTEBOOK, exercise_of, points_per_exercise,
                                  points_per_test_cell)
from posenc_course.submissions import (MARKER, find_function_cell, grade_id, is_answer_cell, is_test_cell,
                                       make_submission, write_submission)
from posenc_solutions import EXERCISES

from . import alternative_solutions, children
from .student_alternatives import STUDENT_ALTERNATIVES
from .wrong_solutions import WRONG, WRONG_CONCEPTS

# Points come from the source notebook's metadata, never typed here.

SOURCE = nbformat.read(SOURCE_NOTEBOOK, as_version=4)
MAX_POINTS = points_per_exercise(SOURCE)
TEST_POINTS = points_per_test_cell(SOURCE)

SOME = None  #: ``loses={exercise: SOME}``: the exercise scores below its maximum
ALL = {exercise: points for exercise, points in MAX_POINTS.items()}  #: every exercise scores 0


def some(*exercises):
    return {exercise: SOME for exercise in exercises}


@dataclass(frozen=True)
class Student:
    """A student of the graded class: how the submission is built, and what grading makes of it."""

    name: str
    #: ``build(kit)`` -> the submitted notebook, or the ``str``/``bytes`` of a file that is not one.
    #: ``kit`` has ``course``, ``answers`` (the reference answers) and ``release`` (the notebook's path).
    build: Callable
    #: ``{exercise: points lost}``, or ``SOME`` points; every other exercise keeps full marks.
    loses: dict = field(default_factory=dict)
    says: str = ""  #: shown in the graded notebook: an error's name, or a sentence
    logs: str = ""  #: on autograde's log line about this student
    filename: str = NOTEBOOK  #: the name the notebook is submitted under
    honest: bool = False  #: plain code that must mean the same in autograde as in the student's own kernel


# How submissions are built -----------------------------------------------------------------------

@dataclass(frozen=True)
class Answered:
    """Builds the reference answers, with `functions` replaced and `answers` cells overridden, then `edit`ed."""

    functions: dict = None  #: ``{function_name: code}``
    answers: dict = None  #: ``{answer cell grade_id: code}``
    edit: Callable = None  #: ``edit(notebook, kit)`` -> the notebook

    def __call__(self, kit):
        notebook = make_submission({**kit.answers, **(self.answers or {})}, self.functions, release_notebook=kit.release)
        return self.edit(notebook, kit) if self.edit else notebook


def answered(functions=None, answers=None, edit=None):
    """The reference answers, with `functions` replaced and `answers` cells overridden, then `edit`ed."""
    return Answered(functions, answers, edit)


def blank(kit):
    return make_submission(release_notebook=kit.release)


def prefixed(cell_id, code, functions=None):
    """Reference answers with `code` (or ``code(kit)``) put first in answer cell `cell_id`."""
    def edit(notebook, kit):
        [cell] = [c for c in notebook.cells if grade_id(c) == cell_id]
        cell.source = (code(kit) if callable(code) else code) + "\n\n" + cell.source
        return notebook
    return answered(functions, edit=edit)


def raw(content):
    """A file that is not a notebook, or not a whole one: `content` or ``content(kit)``."""
    return lambda kit: content(kit) if callable(content) else content


def alternative_code(name):
    """Source of an alternative answer, with the private helpers it calls."""
    function = getattr(alternative_solutions, name)
    source = inspect.getsource(function)
    helpers = [h for h in dir(alternative_solutions) if h.startswith("_") and not h.startswith("__")
               and re.search(rf"\b{h}\(", source)]
    return "\n\n".join([inspect.getsource(getattr(alternative_solutions, h)) for h in helpers] + [source])


def ids_of_tests(notebook):
    return [grade_id(c) for c in notebook.cells if is_test_cell(c)]


def edit_tests(prefix, new_source):
    def edit(notebook, kit):
        for cell in notebook.cells:
            if is_test_cell(cell) and grade_id(cell).startswith(prefix):
                cell.source = new_source
        return notebook
    return edit


def drop_tests(choose):
    """Delete the test cells ``choose(ids)`` picks from the notebook's test cell ids."""
    def edit(notebook, kit):
        dropped = set(choose(ids_of_tests(notebook)))
        notebook.cells = [c for c in notebook.cells if grade_id(c) not in dropped]
        return notebook
    return edit


def reverse_and_repeat_tests(notebook, kit):
    tests = [c for c in notebook.cells if is_test_cell(c)]
    notebook.cells = [c for c in notebook.cells if not is_test_cell(c)] + tests[::-1] + tests[:5]
    return notebook


def wrong_then_right_copy(cell_id, wrong_code):
    """The answer cell `cell_id` twice: a wrong first copy, then the right one."""
    def edit(notebook, kit):
        [index] = [i for i, c in enumerate(notebook.cells) if grade_id(c) == cell_id]
        first = nbformat.from_dict(copy.deepcopy(notebook.cells[index]))
        first.source = wrong_code
        notebook.cells.insert(index, first)
        return notebook
    return edit


def own_cell_before(cell_id, code):
    def edit(notebook, kit):
        [index] = [i for i, c in enumerate(notebook.cells) if grade_id(c) == cell_id]
        notebook.cells.insert(index, nbformat.v4.new_code_cell(code))
        return notebook
    return edit


def half_of_the_reference(kit):
    text = nbformat.writes(answered()(kit))
    return text[: len(text) // 2]


# The class ---------------------------------------------------------------------------------------

ROPE_WRONG = WRONG["rope_half_split"][1]
TWO_WRONG = {**WRONG["rope_half_split"][1], **WRONG["strict_causal"][1]}  # ex05 and ex03
SWALLOW = "    while True:\n        try:\n            while True:\n                pass\n        except KeyboardInterrupt:\n            pass"
FAKE_PASSES = ("np.allclose = lambda *args, **kwargs: True\n"
               "np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, dtype=bool)\n"
               "np.array_equal = lambda *args, **kwargs: True\n"
               "np.testing.assert_allclose = lambda *args, **kwargs: None\n"
               "np.testing.assert_array_equal = lambda *args, **kwargs: None")

# Right but for one check of a ten-check cell: alibi_slopes(-2) is not refused. ex07_alibi_slopes_test
# is worth 3 points, so exactly 3/10 of a point is lost, and nothing else.
ONE_CHECK_WRONG = """def alibi_slopes(num_heads):
    if num_heads == 0:
        raise ValueError("num_heads must be positive")
    num_heads = abs(num_heads)

    def power_of_two(n):
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    closest = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = power_of_two(closest) + power_of_two(2 * closest)[0::2][: num_heads - closest]
    return np.array(slopes, dtype=np.float64)"""

CLASS = [
    Student("reference", answered(), honest=True),
    Student("partial-one-check", answered({"alibi_slopes": ONE_CHECK_WRONG}), loses={"ex07": 0.3}),
    Student("blank", blank, loses=ALL, honest=True),
    *(Student(f"wrong-{label}", answered(functions), loses=some(exercise), honest=True)
      for label, (exercise, functions) in WRONG.items()),
    *(Student(f"alt-{exercise}", answered({name: alternative_code(name) for name in names}), honest=True)
      for exercise, names in EXERCISES.items()),
    # numpy or Python scalars, other error messages, HF's float32 arithmetic, reused functions
    *(Student(f"student-{label}", answered(functions), honest=True) for label, functions in STUDENT_ALTERNATIVES.items()),
    *(Student(f"concept-{label}", answered(answers=wrong_answers), loses={exercise: 1}, honest=True)
      for label, (exercise, wrong_answers) in WRONG_CONCEPTS.items()),

    # Tampering: test cells emptied, deleted, reordered or duplicated, with right and wrong answers;
    # every one is graded with the original tests.
    Student("tamper-edited-right", answered(edit=edit_tests("ex0", "pass"))),
    Student("tamper-edited-wrong", answered(ROPE_WRONG, edit=edit_tests("ex05", "assert True")), loses=some("ex05")),
    Student("tamper-deleted-right", answered(edit=drop_tests(lambda ids: ids[::2])), logs="test cell(s) deleted"),
    Student("tamper-deleted-wrong", answered(ROPE_WRONG, edit=drop_tests(lambda ids: [i for i in ids if i.startswith("ex05")])),
            loses=some("ex05"), logs="test cell(s) deleted"),
    Student("tamper-reordered-wrong", answered(ROPE_WRONG, edit=reverse_and_repeat_tests), loses=some("ex05"),
            logs="test cells duplicated"),
    # an answer cell duplicated: a wrong first copy, then the right one, which is what ran last
    Student("tamper-duplicated-answer",
            answered(edit=wrong_then_right_copy("ex03_causal_mask", WRONG["strict_causal"][1]["causal_mask"])),
            logs="answer cell ex03_causal_mask appears more than once"),
    Student("own-helper-cell", answered(
        {"rotation_2d": "def rotation_2d(angle):\n    return my_rotation(angle)"},
        edit=own_cell_before("ex06_rotation_2d", "def my_rotation(a):\n"
                                                 "    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])"))),

    # Cells that loop, kill the kernel, exhaust its memory, or sleep forever, each in one exercise.
    Student("endless-loop", prefixed("ex03_causal_mask", "while True:\n    pass"), loses=some("ex03"),
            says="CellTimeoutError"),
    Student("hostile-exit", prefixed("ex04_clipped_relative_bias", "import os\nos._exit(1)"), loses=some("ex04"),
            says="KernelDied"),
    Student("hostile-segfault", prefixed("ex06_rotation_2d", "import ctypes\nctypes.string_at(0)"), loses=some("ex06"),
            says="KernelDied"),
    Student("hostile-growing-list", prefixed("ex08_interpolate_position_table",
                                             "hog = []\nwhile True:\n    hog.append(bytearray(10**7))"),
            loses=some("ex08"), says="MemoryError"),
    Student("hostile-huge-array", prefixed("ex02_add_positions", "big = np.ones((10**6, 10**5))"), loses=some("ex02"),
            says="MemoryError"),
    Student("hostile-sleep", prefixed("ex09_decode_position_ids", "import time\ntime.sleep(10**6)"), loses=some("ex09"),
            says="CellTimeoutError"),
    Student("hostile-swallow", prefixed("ex04_clipped_relative_bias", "if True:\n" + SWALLOW), loses=some("ex04"),
            says="CellTimeoutError"),
    # The same, but only when the tests call the answer: the tests run outside the kernel and call
    # it there. The last one swallows the interrupt that stops it.
    Student("hostile-call-exit", answered({"rotation_2d": "def rotation_2d(angle):\n    import os\n    os._exit(1)"}),
            loses=some("ex06"), says="KernelDied"),
    Student("hostile-call-memory", answered({"interpolate_position_table": (
        "def interpolate_position_table(*args, **kwargs):\n    hog = []\n    while True:\n        hog.append(bytearray(10**7))")}),
        loses=some("ex08"), says="MemoryError"),
    Student("hostile-call-loop", answered({"decode_position_ids": "def decode_position_ids(*args, **kwargs):\n    while True:\n        pass"}),
            loses=some("ex09"), says="CellTimeoutError"),
    Student("hostile-call-swallow", answered({"causal_mask": "def causal_mask(query_positions, key_positions):\n" + SWALLOW}),
            loses=some("ex03"), says="CellTimeoutError"),

    # Peeking: each tries to read what grading keeps private, or to write outside its folder.
    Student("peek-import", prefixed("ex01_sinusoidal_row", "from posenc_solutions import sinusoidal_row as _reference"),
            loses=some("ex01")),
    Student("peek-source", prefixed("ex02_add_positions", lambda kit: (
        f"_text = open({str(kit.course / 'source' / 'posenc' / NOTEBOOK)!r}).read()")), loses=some("ex02")),
    Student("peek-gradebook", prefixed("ex03_causal_mask", lambda kit: (
        f"import sqlite3\n_rows = sqlite3.connect('file:{kit.course / 'gradebook.db'}?mode=ro', uri=True)"
        ".execute('select * from grade_cells').fetchall()\nassert _rows")), loses=some("ex03")),
    Student("peek-others", prefixed("ex04_clipped_relative_bias",
                                    lambda kit: f"import os\nassert len(os.listdir({str(kit.course / 'submitted')!r})) > 1"),
            loses=some("ex04")),
    Student("peek-write", prefixed("ex05_apply_rope", lambda kit: (
        f"open({str(ROOT / 'posenc_course' / 'evil.py')!r}, 'w').write('x = 1')\n"
        f"open({str(kit.course / 'release' / 'evil.py')!r}, 'w').write('x = 1')")), loses=some("ex05")),

    # Faked passes, with ex03 and ex05 answered wrongly: numpy's comparisons replaced; every check_*
    # helper rebound to a no-op and every error swallowed; or every later cell that calls a check
    # blanked. The tests run outside the kernel, so the wrong answers still lose.
    Student("fake-passes", prefixed("ex01_sinusoidal_row", FAKE_PASSES, TWO_WRONG), loses=some("ex03", "ex05")),
    Student("fake-checks", prefixed("ex01_sinusoidal_row",
                                    "for _name in [n for n in dir() if n.startswith('check_')]:\n"
                                    "    globals()[_name] = lambda *args, **kwargs: None\n"
                                    "get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)",
                                    TWO_WRONG), loses=some("ex03", "ex05")),
    Student("fake-cells", prefixed("ex01_sinusoidal_row",
                                   "get_ipython().input_transformers_cleanup.append(\n"
                                   "    lambda lines: [] if any('check_' in line for line in lines) else lines)",
                                   TWO_WRONG), loses=some("ex03", "ex05")),
    # The kernel's agent, once served, answers a request that passes a function of the tests (ex10's
    # shift_invariance_gap) in one short cell; a submission that takes it away gets it sent again.
    Student("tamper-agent", prefixed("ex10_shift_invariance_gap", "get_ipython().kernel.hardened_grading_agent = None")),

    # Files that are not notebooks, a notebook of another assignment, and a renamed notebook.
    *(Student(name, raw(content), loses=ALL, says="could not be graded as sent", logs=reason)
      for name, content, reason in [
          ("malformed", '{"cells": [{"cell_type": "code", "source": "truncated', "NotJSONError"),
          ("bad-truncated", half_of_the_reference, "NotJSONError"),
          ("bad-empty", "", "NotJSONError"),
          ("bad-binary", bytes(range(256)) * 8, "UnicodeDecodeError")]),
    Student("bad-other-assignment", lambda kit: nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("answer = 42")]),
            loses=ALL, logs="a notebook of another assignment"),
    Student("renamed", answered(), filename="exercises (1).ipynb",
            logs="submitted 'exercises (1).ipynb' instead of 'exercises.ipynb'"),
]
STUDENTS = {student.name: student for student in CLASS}
assert len(STUDENTS) == len(CLASS), "two rows of CLASS have the same name"


# Rows graded together ------------------------------------------------------------------------------
#
# Most rows change one exercise's answers and keep the reference's everywhere else. Each exercise is
# scored by its own test cells, so rows that change different exercises, where neither's code names
# what the other's defines, can be one submission: each row's exercises score as its row says, and
# every exercise no row of the submission changed keeps full marks. The class is graded in far fewer
# kernels, and each row's test still names the row.

@dataclass(frozen=True)
class Submission:
    """One submitted notebook of a graded class: one row of a table, or several rows together."""

    name: str  #: the student id it is submitted under
    rows: tuple  #: the rows of the table it holds

    @property
    def filename(self):
        return self.rows[0].filename

    @property
    def honest(self):
        return all(row.honest for row in self.rows)

    def build(self, kit):
        if len(self.rows) == 1:
            return self.rows[0].build(kit)
        functions = {name: code for row in self.rows for name, code in (row.build.functions or {}).items()}
        answers = {cell_id: code for row in self.rows for cell_id, code in (row.build.answers or {}).items()}
        return answered(functions, answers)(kit)


def _defined(code):
    """The top-level names `code` defines (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _words(code):
    return set(re.findall(r"[A-Za-z_]\w*", code))


def _footprint(row, notebook):
    """(exercises, names defined, names used) of a row that only answers differently, or None for a row that
    must be graded alone (any other build, or one that the notebook or the log must speak of)."""
    build = row.build
    if not isinstance(build, Answered) or build.edit or not (build.functions or build.answers) \
            or row.says or row.logs or row.filename != NOTEBOOK:
        return None
    cells = {grade_id(cell): cell for cell in notebook.cells if grade_id(cell)}
    exercises = {exercise_of(cell_id) for cell_id in build.answers or {}}
    exercises |= {exercise_of(grade_id(find_function_cell(notebook, name))) for name in build.functions or {}}
    code = "\n".join([*(build.functions or {}).values(), *(build.answers or {}).values()])
    # and the reference's cells of those exercises: what their answers define, what their answers and tests use
    mine = [cell for cell_id, cell in cells.items() if exercise_of(cell_id) in exercises]
    answers = [MARKER.sub("", cell.source) for cell in mine if is_answer_cell(cell)]
    defined = set().union(_defined(code), *map(_defined, answers))
    return exercises, defined, _words(code) | set().union(*(_words(cell.source) for cell in mine))


@functools.lru_cache(maxsize=None)
def _read_source(path):
    return nbformat.read(str(path), as_version=4)


def grade_together(rows, source_notebook):
    """The submissions of a class: each row that only answers differently (:func:`_footprint`) joins the first
    submission whose rows change none of its exercises, share no name with it, and are as honest as it (an
    honest submission's verdicts are checked in a plain kernel too); every other row is a submission of its
    own, under its own name. `source_notebook` is the assignment's, with its answers."""
    notebook = _read_source(source_notebook)
    alone, groups = [], []  # groups: [(rows, footprints)]
    for row in rows:
        footprint = _footprint(row, notebook)
        if footprint is None:
            alone.append(Submission(row.name, (row,)))
            continue
        exercises, defined, used = footprint
        for members, footprints in groups:
            if members[0].honest == row.honest and \
                    all(not (exercises & e) and not (defined & u) and not (d & used) for e, d, u in footprints):
                members.append(row)
                footprints.append(footprint)
                break
        else:
            groups.append(([row], [footprint]))
    together = [Submission(f"together-{number:02d}" if len(members) > 1 else members[0].name, tuple(members))
                for number, (members, _) in enumerate(groups, 1)]
    return alone + together


def changed_by_others(submission, row, source_notebook):
    """The exercises the other rows of `row`'s submission change: the row says nothing of them."""
    notebook = _read_source(source_notebook)
    return set().union(*(_footprint(other, notebook)[0] for other in submission.rows if other is not row))


SUBMISSIONS = grade_together(CLASS, SOURCE_NOTEBOOK)
SUBMITTED_AS = {row.name: submission for submission in SUBMISSIONS for row in submission.rows}


def submit(student, kit):
    """Write `student`'s submission into the course (to ``kit.assignment``, posenc unless it says
    otherwise); return its path."""
    assignment = getattr(kit, "assignment", ASSIGNMENT)
    content = student.build(kit)
    if isinstance(content, nbformat.NotebookNode):
        return write_submission(content, kit.course / "submitted", student.name, assignment, student.filename)
    path = kit.course / "submitted" / student.name / assignment / student.filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    return path


def grade_whole_class(course, assignment, jobs=2):
    """Grade every submission of `assignment` in `course` with the course's parallel grader (``posenc-grade
    ASSIGNMENT --jobs JOBS --force``), as an instructor grades a large class. Return its CompletedProcess,
    with nbgrader's log of every submission (the run's log file, which posenc-grade names on stderr)
    after its own output in ``stdout``."""
    result = children.run([sys.executable, "-m", "posenc_course.instructor.grade", assignment, "--jobs", str(jobs), "--force"],
                        cwd=course, env=nbgrader_env(), capture_output=True, text=True, timeout=1800)
    named = re.search(r"; log: (\S+\.log)$", result.stderr, re.MULTILINE)
    assert named, f"posenc-grade named no log:\n{result.stdout}\n{result.stderr}"
    result.stdout += "\n" + open(named.group(1)).read()
    return result



def score_problems(got, loses, maxima=None):
    """How ``{exercise: score}`` differs from the maximum (`maxima`, posenc's unless given) less what
    `loses` says; empty when it does not."""
    problems = []
    for exercise, maximum in (maxima or MAX_POINTS).items():
        lost = loses.get(exercise, 0)
        if lost is SOME and not got[exercise] < maximum:
            problems.append(f"{exercise}: {got[exercise]:g} of {maximum:g}, but it must lose points")
        elif lost is not SOME and not math.isclose(got[exercise], maximum - lost, abs_tol=1e-9):
            problems.append(f"{exercise}: {got[exercise]:g} of {maximum:g}, but it must score {maximum - lost:g}")
    return problems


def assert_scores(scores, student, loses, maxima=None):
    got = {exercise: score for exercise, (score, _) in scores[student].items()}
    problems = score_problems(got, loses, maxima)
    assert not problems, f"{student}: " + "; ".join(problems)


def assert_row_scores(scores, row, submissions, source_notebook=SOURCE_NOTEBOOK, maxima=None):
    """`row` of a class table scores what it says, in the submission that holds it (`submissions`: the
    class's :func:`grade_together`): every exercise but those the submission's other rows change."""
    [submission] = [s for s in submissions if row in s.rows]
    others = changed_by_others(submission, row, source_notebook)
    kept = {exercise: points for exercise, points in (maxima or MAX_POINTS).items() if exercise not in others}
    got = {exercise: score for exercise, (score, _) in scores[submission.name].items()}
    problems = score_problems(got, row.loses, kept)
    where = f" (graded in {submission.name}, whose other rows change {', '.join(sorted(others))})" if others else ""
    assert not problems, f"{row.name}{where}: " + "; ".join(problems)


def shown(notebook):
    """What a graded notebook shows its reader: markdown, and every output's text and error."""
    parts = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts += [output.get("ename", ""), output.get("evalue", ""), str(output.get("text", ""))]
    return "\n".join(parts)


def log_lines(result, student):
    return [line for line in (result.stdout + result.stderr).splitlines() if f"hardened_grading: student '{student}'" in line]


def verdicts_of(notebook):
    """``{grade_id: points}`` of a notebook's test cells, as nbgrader scores their outputs (an error,
    or anything on stderr, scores 0)."""
    from nbgrader.utils import determine_grade

    return {grade_id(c): determine_grade(c)[0] for c in notebook.cells if is_test_cell(c)}


def run_in_plain_kernel(notebook, folder):
    """A copy of `notebook` run top to bottom in a plain python3 kernel started in `folder`, as a student runs
    it (Run All, on past errors). The kernel is stopped at once at the end: its verdicts are in by then."""
    from .plain_kernel import execute

    return execute(copy.deepcopy(notebook), folder, timeout=60, allow_errors=True, shutdown_kernel="immediate")
