"""A student's ordinary habits never change a score: autograde agrees with Validate.

Each row of :data:`HABITS` is a correct submission (the reference answers) worked with one habit that
real students have: cells added at the top, between an answer and its test, after a test and at the
end; an edited set-up cell; a wrong first draft above a function that a later exercise reuses; helpers
in a cell of their own; markdown notes; saved outputs; a copy of an answer cell below its test, edited
into an experiment or not; a notebook saved by VS Code (nbformat 4.4, no cell ids). The rows that say
``verdict=False`` are habits whose top-to-bottom run really fails (a wrong draft *below* the right
answer): there, autograde must take points too. One ``nbgrader autograde`` run grades the class and one ``nbgrader validate`` run
validates every submission; each row asserts that

- the score is full exactly when Validate says "Success!";
- every cell the student added is in the graded notebook exactly once, where the student put it
  (between the same neighbours);
- the graded notebook is the student's cells in the student's order, the locked ones restored: nothing is
  moved that the student did not move.

No log line of the autograde run, nor of a ``generate_feedback`` run of the notebook saved as nbformat 4.4,
says a notebook is invalid, and every graded notebook validates.
"""

import copy
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable

import nbformat
import pytest

from hardened_grading.cells import META
from hardened_grading.preprocessors.model_answers import MODEL_ANSWER
from posenc_course import report
from posenc_course.course import generate, new_course
from posenc_course.layout import ASSIGNMENT, NOTEBOOK, SOURCE_NOTEBOOK, points_per_exercise
from posenc_course.submissions import grade_id, make_submission, reference_answers, write_submission

from ..helpers import plain_kernel
from ..helpers.children import run_nbgrader
from ..helpers.student_alternatives import STUDENT_ALTERNATIVES
from ..helpers.wrong_solutions import WRONG

MAX_POINTS = points_per_exercise(nbformat.read(SOURCE_NOTEBOOK, as_version=4))
REUSES_CAUSAL_MASK = {"alibi_attention": STUDENT_ALTERNATIVES["reuses_earlier_functions"]["alibi_attention"]}
WRONG_DRAFT = WRONG["strict_causal"][1]["causal_mask"]


def mark(habit, index=0):
    """The comment that makes an added cell findable: ``# habit: NAME #INDEX``."""
    return f"habit: {habit} #{index}"


def index_of(notebook, cell_id):
    [index] = [i for i, cell in enumerate(notebook.cells) if grade_id(cell) == cell_id]
    return index


def code(habit, text, index=0):
    return nbformat.v4.new_code_cell(f"# {mark(habit, index)}\n{text}")


def insert(where, make):
    """Insert ``make(notebook)``'s cells at ``where(notebook)``: an index, counted before insertion."""
    def edit(notebook):
        at = where(notebook)
        notebook.cells[at:at] = make(notebook)
        return notebook
    return edit


def before(cell_id):
    return lambda notebook: index_of(notebook, cell_id)


def after(cell_id):
    return lambda notebook: index_of(notebook, cell_id) + 1


def at_top(notebook):
    return 0


def at_end(notebook):
    return len(notebook.cells)


def below_setup(notebook):
    """Right under the notebook's first code cell, its imports."""
    return next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code") + 1


def edit_setup(notebook):
    setup = notebook.cells[below_setup(notebook) - 1]
    setup.source = setup.source.replace("import numpy as np", "import matplotlib.pyplot as plt\nimport numpy as np", 1)
    assert "matplotlib" in setup.source
    return notebook


def markdown_notes(notebook):
    for index, at in enumerate(sorted([at_top(notebook), after("ex02_add_positions")(notebook),
                                       before("ex05_apply_rope")(notebook), at_end(notebook)], reverse=True)):
        notebook.cells.insert(at, nbformat.v4.new_markdown_cell(f"<!-- {mark('markdown-notes', index)} -->\nTo self: "
                                                                "the offset is key minus query."))
    return notebook


def saved_outputs(notebook):
    """Run All in the student's kernel, and save the notebook with its outputs, as JupyterLab does."""
    executed = copy.deepcopy(notebook)
    plain_kernel.execute(executed, timeout=120, allow_errors=True)
    assert any(cell.get("outputs") for cell in executed.cells)
    return executed


PAIR_NORMS_EXPERIMENT = """def pair_norms(x):
    # trying it without hypot: are the squares enough?
    x = np.asarray(x)
    return x[..., 0::2] ** 2 + x[..., 1::2] ** 2

print(pair_norms([3.0, 4.0, 0.0, 2.0]))"""


def copy_answer_below_its_test(name, habit=None, source=None):
    """Copy answer cell `name` right below its test cell, as JupyterLab's copy and paste does (the nbgrader
    metadata kept, a new cell id); with `source`, the copy is edited into that (marked as the `habit`'s)."""
    def edit(notebook):
        copied = nbformat.from_dict(copy.deepcopy(notebook.cells[index_of(notebook, name)]))
        copied.id = nbformat.v4.new_code_cell().id
        if source is not None:
            copied.source = f"# {mark(habit)}\n{source}"
        notebook.cells.insert(index_of(notebook, f"{name}_test") + 1, copied)
        return notebook
    return edit


SAVED_AS_4_4 = "saved-as-nbformat-4.4"


def saved_as_nbformat_4_4(notebook):
    """Saved by VS Code (or an older Jupyter): nbformat 4.4, whose cells have no ids."""
    notebook.nbformat_minor = 4
    for cell in notebook.cells:
        cell.pop("id", None)
    nbformat.validate(notebook)
    return notebook


@dataclass(frozen=True)
class Habit:
    name: str
    edit: Callable  #: ``edit(notebook)`` -> the notebook, worked with the habit
    functions: dict = field(default_factory=dict)  #: answers replaced, as in ``make_submission``
    verdict: bool = True  #: what Validate says: "Success!" (True) or failing tests
    loses: tuple = ()  #: the exercises that lose points when the verdict is a failure


HABITS = [
    Habit("scratch-at-top", insert(at_top, lambda nb: [code("scratch-at-top", "print('trying things out')")])),
    Habit("cell-between-answer-and-test", insert(after("ex03_causal_mask"), lambda nb: [code(
        "cell-between-answer-and-test", "mask = causal_mask(np.arange(3), np.arange(3))\nprint(mask)")])),
    Habit("cell-after-a-test", insert(after("ex05_apply_rope_test"), lambda nb: [code(
        "cell-after-a-test", "x = apply_rope(np.ones((4, 8)), np.arange(4))\nprint(x.shape)")])),
    Habit("cell-at-end", insert(at_end, lambda nb: [code("cell-at-end", "print('done, I think')")])),
    Habit("edited-setup-cell", edit_setup),
    # a wrong first draft of causal_mask near the top; the right one in ex03; ex07 reuses it
    Habit("wrong-draft-above", insert(below_setup, lambda nb: [code("wrong-draft-above", WRONG_DRAFT)]),
          functions=REUSES_CAUSAL_MASK),
    # the same draft below ex03's tests: the top-to-bottom run really uses it in ex07
    Habit("wrong-draft-below", insert(after("ex03_causal_mask_test"), lambda nb: [code("wrong-draft-below", WRONG_DRAFT)]),
          functions=REUSES_CAUSAL_MASK, verdict=False, loses=("ex07",)),
    Habit("helpers-in-own-cells", insert(before("ex06_rotation_2d"), lambda nb: [
        code("helpers-in-own-cells", "def my_rotation(a):\n    c, s = np.cos(a), np.sin(a)\n    return np.array([[c, -s], [s, c]])"),
        code("helpers-in-own-cells", "def my_angles(d, base):\n    return base ** (-np.arange(0, d, 2) / d)", 1)]),
        functions={"rotation_2d": "def rotation_2d(angle):\n    return my_rotation(angle)"}),
    Habit("markdown-notes", markdown_notes),
    Habit("saved-outputs", saved_outputs),
    # an experiment below ex05's test: the top-to-bottom run tests the answer above, and nothing later uses it
    Habit("edited-answer-copy-below-its-test", copy_answer_below_its_test(
        "ex05_pair_norms", "edited-answer-copy-below-its-test", PAIR_NORMS_EXPERIMENT)),
    Habit("answer-copy-below-its-test", copy_answer_below_its_test("ex05_pair_norms")),
    Habit(SAVED_AS_4_4, saved_as_nbformat_4_4),
]


def build(habit, kit):
    notebook = make_submission(kit.answers, habit.functions, release_notebook=kit.release)
    return habit.edit(notebook)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every habit submitted, autograded in one run and validated in one run."""
    course = new_course(tmp_path_factory.mktemp("course"))
    kit = SimpleNamespace(release=generate(course), answers=reference_answers(course / "source" / ASSIGNMENT / NOTEBOOK))
    submitted = {habit.name: build(habit, kit) for habit in HABITS}
    paths = {name: write_submission(notebook, course / "submitted", name) for name, notebook in submitted.items()}
    result = run_nbgrader(course, "autograde", ASSIGNMENT, "--force")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return SimpleNamespace(course=course, submitted=submitted, log=result.stdout + result.stderr,
                           scores=report.exercise_scores(course / "gradebook.db"),
                           verdicts=verdicts(paths, tmp_path_factory.mktemp("validated")))


def verdicts(paths, folder):
    """``{student: True for "Success!", False for failing tests}``, as the notebook's Validate button
    says: nbgrader's own ``Validator``, which its server extension runs for the button.

    Validate refuses a notebook with a grade id twice (a copied answer cell: "Duplicate grade id"): it is
    validated with the nbgrader metadata of each later copy removed, which changes nothing of its
    top-to-bottom run, the verdict."""
    from nbgrader.validator import Validator

    found = {}
    for student, path in paths.items():
        notebook, seen = nbformat.read(path, as_version=4), set()
        for cell in notebook.cells:
            if grade_id(cell) and grade_id(cell) in seen:
                del cell.metadata["nbgrader"]
            seen.add(grade_id(cell))
        nbformat.write(notebook, folder / f"{student}.ipynb")
        result = Validator().validate(str(folder / f"{student}.ipynb"))
        assert set(result) <= {"failed"}, f"{student}: Validate says {sorted(result)}"  # not changed/locked cells
        found[student] = not result.get("failed")
    return found


def added_cells(notebook, habit):
    """The cells of `notebook` that the habit added, with their neighbours' sources."""
    return [(i, cell) for i, cell in enumerate(notebook.cells) if f"habit: {habit}" in cell.source]


@pytest.mark.parametrize("habit", HABITS, ids=lambda h: h.name)
def test_validate_says_what_the_habit_does(graded, habit):
    """The table's own premise: Validate's verdict is the row's (so the next test compares like with like)."""
    assert graded.verdicts[habit.name] is habit.verdict


@pytest.mark.parametrize("habit", HABITS, ids=lambda h: h.name)
def test_the_score_is_full_exactly_when_validate_says_success(graded, habit):
    scores = {exercise: score for exercise, (score, _) in graded.scores[habit.name].items()}
    lost = {exercise for exercise, maximum in MAX_POINTS.items() if scores[exercise] < maximum - 1e-9}
    if graded.verdicts[habit.name]:
        assert not lost, f"{habit.name}: Validate says Success! but autograde took points in {sorted(lost)}: {scores}"
    else:
        assert lost == set(habit.loses), f"{habit.name}: points lost in {sorted(lost)}, expected {list(habit.loses)}"


@pytest.mark.parametrize("habit", HABITS, ids=lambda h: h.name)
def test_each_added_cell_is_graded_once_where_the_student_put_it(graded, habit):
    mine = graded.submitted[habit.name]
    autograded = nbformat.read(graded.course / "autograded" / habit.name / ASSIGNMENT / NOTEBOOK, as_version=4)
    sent, got = added_cells(mine, habit.name), added_cells(autograded, habit.name)
    assert [c.source for _, c in got] == [c.source for _, c in sent], "added cells lost, doubled or reordered"

    def neighbours(notebook, index):
        return [notebook.cells[j].source for j in (index - 1, index + 1) if 0 <= j < len(notebook.cells)
                and f"habit: {habit.name}" not in notebook.cells[j].source]

    for (i, _), (j, cell) in zip(sent, got):
        # a neighbour that is a locked cell is the gradebook's (hidden tests put back): compare ids then
        expected = [s for s in neighbours(mine, i)]
        actual = neighbours(autograded, j)
        ids_sent = [grade_id(mine.cells[k]) for k in (i - 1, i + 1) if 0 <= k < len(mine.cells)]
        ids_got = [grade_id(autograded.cells[k]) for k in (j - 1, j + 1) if 0 <= k < len(autograded.cells)]
        assert ids_got == ids_sent or actual == expected, f"{cell.source[:60]!r} moved: was between {ids_sent}, now {ids_got}"


def test_the_graded_notebook_runs_the_students_cells_and_nothing_twice(graded):
    """No cell of the graded notebook appears more often than in the student's (the rebuild once copied cells
    47 times)."""
    def code_sources(notebook):
        return [cell.source for cell in notebook.cells if cell.cell_type == "code" and cell.source.strip()]

    for habit in HABITS:
        sent = code_sources(graded.submitted[habit.name])
        sources = code_sources(autograded_notebook(graded, habit))
        doubled = {s[:60] for s in sources if sources.count(s) > max(1, sent.count(s))}
        assert not doubled, f"{habit.name}: cells graded more than once: {sorted(doubled)[:3]}"


def autograded_notebook(graded, habit):
    return nbformat.read(graded.course / "autograded" / habit.name / ASSIGNMENT / NOTEBOOK, as_version=4)


@pytest.mark.parametrize("habit", HABITS, ids=lambda h: h.name)
def test_the_graded_notebook_is_the_students_cells_in_the_students_order(graded, habit):
    """Nothing is moved that the student did not move: cell for cell, the graded notebook is the student's (a
    locked cell named by its grade id: its hidden tests are put back). A copy of an answer cell stays where the
    student put it, as an ordinary cell, and its test stays where it was. The grader's own cells (the model answer
    below each reflection, for formgrader: ModelAnswersForGraders) are the engine's, not the student's."""
    def cells(notebook):
        return [grade_id(cell) if cell.metadata.get("nbgrader", {}).get("locked") else cell.source
                for cell in notebook.cells if MODEL_ANSWER not in cell.metadata.get(META, {})]

    assert cells(autograded_notebook(graded, habit)) == cells(graded.submitted[habit.name])


@pytest.mark.parametrize("student", ["edited-answer-copy-below-its-test", "answer-copy-below-its-test"])
def test_the_log_says_in_one_line_which_copy_of_an_answer_is_graded_and_what_to_do(graded, student):
    lines = [line for line in graded.log.splitlines() if f"student {student!r}: answer cell" in line]
    assert len(lines) == 1, lines
    assert "answer cell ex05_pair_norms appears more than once" in lines[0]
    assert "the copy with the release's cell id above its test, is graded as the answer" in lines[0]
    assert lines[0].endswith(f"nbgrader autograde {ASSIGNMENT} --student {student} --force")


@pytest.fixture(scope="module")
def feedback(graded):
    """One ``nbgrader generate_feedback``, of the notebook saved as nbformat 4.4 (of the class: 20 s more)."""
    result = run_nbgrader(graded.course, "generate_feedback", ASSIGNMENT, "--student", SAVED_AS_4_4, "--force")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def test_no_notebook_is_said_invalid_and_the_graded_notebooks_and_feedback_are_valid(graded, feedback):
    """nbgrader logs "Notebook JSON is invalid" when a step writes or reads a notebook its nbformat version does
    not allow (cell ids in nbformat 4.4, the version VS Code saves): neither run says it, every graded notebook
    validates, and the feedback of the notebook saved as 4.4 is made."""
    said = [line for line in (graded.log + feedback).splitlines() if "invalid" in line.lower()]
    assert not said, said[:3]
    for habit in HABITS:
        nbformat.validate(autograded_notebook(graded, habit))
    page = graded.course / "feedback" / SAVED_AS_4_4 / ASSIGNMENT / NOTEBOOK.replace(".ipynb", ".html")
    assert "pair_norms" in page.read_text(encoding="utf-8")


def test_restoring_the_tests_makes_no_checksum_warning(graded):
    """The locked cells are restored from the gradebook (hidden tests included): nbgrader's OverwriteCells
    finds nothing to restore and logs no "Attribute 'checksum' ... has changed!"."""
    assert "has changed!" not in graded.log, [line for line in graded.log.splitlines() if "has changed!" in line][:3]
