"""Habits that change the student's kernel, or print, in each assignment: autograde agrees with stock nbgrader.

tests/grading/test_habits.py holds habits that change the notebook; these change what runs in it. Each row is a correct
submission (the reference answers) with one habit:

- ``numpy-raises``: ``np.seterr(all="raise")`` in a cell of its own under the imports, as a student who
  hunts a NaN does. numpy's underflows in the answers then raise, in the student's own run and in stock
  nbgrader's; the trusted judge once ran each call under the grader's error state, and gave full marks.
- ``prints-stderr``: a debug ``print(..., file=sys.stderr)`` inside the assignment's first function. A test cell
  that writes to stderr fails in nbgrader (and in Validate): the judge once lost those lines and gave full marks.
- ``prints-stdout``: the same print on stdout, which costs nothing: its lines reach the graded notebook (in the
  first assignment only: the others add nothing but time).
- ``edited-answer-copy``: the assignment's last answer cell copied below its test (JupyterLab keeps its nbgrader
  metadata) and edited into an experiment. Its test, above the copy, tests the answer in a plain run; the engine
  once graded the copy instead. Stock nbgrader and Validate refuse such a notebook (a grade id twice): the row is
  graded by the engine only, against Validate's verdict on the same cells run as ordinary ones.
- ``saved-as-nbformat-4.4``: the notebook as VS Code saves it, nbformat 4.4 without cell ids. It costs nothing, and
  the graded notebook is valid (the engine once wrote the release's ids into it: "Notebook JSON is invalid").

Every other row is graded in all three assignments, twice in one run each: by this course's configuration (the judge,
credit per check) and by stock nbgrader (a plain configuration, the same gradebook). Validate runs each
submission too. Each row asserts that the test cells that lose points with the engine are exactly those that stock
nbgrader fails (stock scores a failed cell 0; the engine gives the share of its checks that passed), that every
test cell Validate fails loses points, and that what the habit printed is in the graded notebook as in stock's.
"""

import ast
import copy
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from hardened_grading.class_grading.grade_table import graded_by_hand
from posenc_course.course import generate, new_course
from posenc_course.layout import GRADED, NOTEBOOK, NOTEBOOK_ID, exercise_functions, source_notebook
from posenc_course.submissions import grade_id, make_submission, reference_answers, write_submission

from ..helpers.children import run_nbgrader
from ..helpers.foreign_courses import PORT_TAKEN

#: Stock nbgrader's configuration: the course's id and the course's cell time limit, nothing of the engine's.
STOCK_CONFIG = 'c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = "posenc"\nc.Execute.timeout = 20\n'
HABITS = ("numpy-raises", "prints-stderr", "prints-stdout", "saved-as-nbformat-4.4", "edited-answer-copy")
#: Habits stock nbgrader refuses to grade (a grade id twice: it stops with a KeyError; Validate says "Duplicate grade
#: id"): graded by the engine only, their verdict Validate's on the plain run (the copy as an ordinary cell).
STOCK_REFUSES = ("edited-answer-copy",)
DEBUG = "debug: called"  #: what the print habits print


def last_function(assignment):
    """The last function of the assignment's exercises: no later exercise can reuse it."""
    return [name for names in exercise_functions(assignment).values() for name in names][-1]


def first_function(assignment):
    """The first function of the assignment's exercises (not a concept question's name)."""
    return next(name for names in exercise_functions(assignment).values() for name in names)


def with_print(code, name, stream):
    """`code` with a debug print to `stream` as the first statement of function `name` (after its docstring)."""
    lines = code.split("\n")
    [function] = [node for node in ast.parse(code).body if isinstance(node, ast.FunctionDef) and node.name == name]
    body = function.body
    docstring = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
    target = body[1] if docstring and len(body) > 1 else body[0]
    line = f"{' ' * target.col_offset}print({DEBUG!r}, {name!r}, file=__import__('sys').{stream})"
    return "\n".join(lines[:target.lineno - 1] + [line] + lines[target.lineno - 1:])


def submission(habit, assignment, release, answers):
    """The reference answers in `release`, worked with `habit`."""
    if habit == "numpy-raises":
        notebook = make_submission(answers, release_notebook=release)
        setup = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
        notebook.cells.insert(setup + 1, nbformat.v4.new_code_cell("np.seterr(all='raise')  # find that NaN"))
        return notebook
    if habit == "saved-as-nbformat-4.4":  # VS Code's, or an older Jupyter's: no cell ids (tests/grading/test_habits.py)
        notebook = make_submission(answers, release_notebook=release)
        notebook.nbformat_minor = 4
        for cell in notebook.cells:
            cell.pop("id", None)
        return notebook
    if habit == "edited-answer-copy":  # copied below its test and made into an experiment, as JupyterLab pastes it
        notebook = make_submission(answers, release_notebook=release)
        name = last_function(assignment)
        [answer] = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code" and grade_id(cell) in answers
                    and any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.parse(cell.source).body)]
        test = next(i for i in range(answer + 1, len(notebook.cells)) if grade_id(notebook.cells[i]))
        copied = nbformat.from_dict(copy.deepcopy(notebook.cells[answer]))
        copied.id = nbformat.v4.new_code_cell().id
        copied.source = f"def {name}(*args, **kwargs):  # an experiment of mine\n    raise RuntimeError('not yet')"
        notebook.cells.insert(test + 1, copied)
        return notebook
    name = first_function(assignment)
    [cell_id] = [cell_id for cell_id, code in answers.items()
                 if any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.parse(code).body)]
    stream = {"prints-stderr": "stderr", "prints-stdout": "stdout"}[habit]
    return make_submission({**answers, cell_id: with_print(answers[cell_id], name, stream)}, release_notebook=release)


def scores_per_test_cell(folder, assignment):
    """``{student: {test cell: (score, max score)}}`` of the gradebook in `folder` (the written reflections, graded by
    hand, are no test cells)."""
    found = {}
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        for student in gradebook.students:
            try:
                notebook = gradebook.find_submission_notebook(NOTEBOOK_ID, assignment, student.id)
            except MissingEntry:  # a habit not tried in this assignment
                continue
            by_hand = graded_by_hand(notebook.notebook)
            found[student.id] = {grade.name: (grade.score, grade.max_score) for grade in notebook.grades
                                 if grade.max_score and grade.name not in by_hand}
    return found


def printed(folder, student, assignment):
    """``[(stream name, line), ...]`` of the habit's debug lines in the graded notebook."""
    notebook = nbformat.read(folder / "autograded" / student / assignment / NOTEBOOK, as_version=4)
    return [(output.name, line) for cell in notebook.cells if cell.cell_type == "code"
            for output in cell.get("outputs", []) if output.output_type == "stream"
            for line in output.text.splitlines() if DEBUG in line]


def validate_failures(path, plain_run=False):
    """The test cells (grade ids) that nbgrader's Validate (its button's ``Validator``) says fail; with `plain_run`,
    of the notebook with the nbgrader metadata of each answer cell's later copies removed (Validate refuses a grade
    id twice), which runs the same cells from top to bottom."""
    from nbgrader.validator import Validator

    if plain_run:
        notebook, seen = nbformat.read(str(path), as_version=4), set()
        for cell in notebook.cells:
            if grade_id(cell) and grade_id(cell) in seen:
                cell.metadata.pop("nbgrader")
            seen.add(grade_id(cell))
        path = Path(path).with_name("plain-run.ipynb")
        nbformat.write(notebook, str(path))
    result = Validator().validate(str(path))
    assert set(result) <= {"failed"}, result
    notebook = nbformat.read(str(path), as_version=4)
    by_source = {cell.source: grade_id(cell) for cell in notebook.cells if cell.cell_type == "code"}
    return {by_source.get(failure["source"], failure["source"][:40]) for failure in result.get("failed", [])}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every habit in every assignment, autograded by the engine and by stock nbgrader (each one run per
    assignment, the two configurations at once), and validated meanwhile."""
    engine = new_course(tmp_path_factory.mktemp("engine"))
    paths = {}
    for assignment in GRADED:
        release = generate(engine, assignment)
        answers = reference_answers(source_notebook(assignment, engine))
        for habit in (habit for habit in HABITS if assignment in TRIED_IN[habit]):
            paths[habit, assignment] = write_submission(submission(habit, assignment, release, answers),
                                                        engine / "submitted", habit, assignment)
    stock = tmp_path_factory.mktemp("stock")
    for part in ("source", "release", "submitted"):
        shutil.copytree(engine / part, stock / part)
    for (habit, assignment), path in paths.items():
        if habit in STOCK_REFUSES:
            shutil.rmtree(stock / "submitted" / habit / assignment)
    shutil.copy(engine / "gradebook.db", stock / "gradebook.db")
    (stock / "nbgrader_config.py").write_text(STOCK_CONFIG)

    logs = {}

    def autograde(course):  # one assignment after another (two runs at once is tests/grading/test_two_graders.py's)
        for assignment in GRADED:
            result = run_nbgrader(course, "autograde", assignment, "--force")
            if course is stock and result.returncode and PORT_TAKEN in result.stdout + result.stderr:
                result = run_nbgrader(course, "autograde", assignment, "--force")  # stock's TCP port race, once more
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
            if course is engine:
                logs[assignment] = result.stdout + result.stderr

    def validate_all():  # meanwhile, one submission after another
        return {key: validate_failures(path, key[0] in STOCK_REFUSES) for key, path in paths.items()}

    with ThreadPoolExecutor(3) as pool:
        validated = pool.submit(validate_all)
        for future in [pool.submit(autograde, course) for course in (engine, stock)]:
            future.result()
        validate = validated.result()
    return SimpleNamespace(engine=engine, stock=stock, log=logs, validate=validate,
                           scores={(course, a): scores_per_test_cell(folder, a) for a in GRADED
                                   for course, folder in (("engine", engine), ("stock", stock))})


#: ``{habit: the assignments it is tried in}``: a print on stdout, which costs nothing, in the first only.
TRIED_IN = {"numpy-raises": GRADED, "prints-stderr": GRADED, "prints-stdout": GRADED[:1], "saved-as-nbformat-4.4": GRADED,
            "edited-answer-copy": GRADED}
ROWS = [pytest.param(habit, assignment, id=f"{habit}-{assignment}") for habit in HABITS for assignment in TRIED_IN[habit]]


def lost(scores):
    return {cell for cell, (score, maximum) in scores.items() if score < maximum - 1e-9}


@pytest.mark.parametrize(("habit", "assignment"), ROWS)
def test_the_engine_takes_points_in_the_cells_stock_nbgrader_fails(graded, habit, assignment):
    engine = graded.scores["engine", assignment][habit]
    if habit in STOCK_REFUSES:  # the plain run passes every test: the copy, below its test, is no later one's
        assert not lost(engine) and not graded.validate[habit, assignment], sorted(lost(engine))
        return
    stock = graded.scores["stock", assignment][habit]
    assert lost(stock) == {cell for cell, (score, _) in stock.items() if score == 0}, "stock scores a cell 0 or full"
    assert lost(engine) == lost(stock), f"engine: {sorted(lost(engine))}, stock: {sorted(lost(stock))}"
    if habit in ("prints-stdout", "saved-as-nbformat-4.4"):
        assert not lost(stock), f"{habit} costs nothing"
    else:
        assert lost(stock), f"{habit} fails cells in stock nbgrader's run: the row tests something"


@pytest.mark.parametrize(("habit", "assignment"), ROWS)
def test_each_cell_validate_fails_loses_points(graded, habit, assignment):
    assert graded.validate[habit, assignment] <= lost(graded.scores["engine", assignment][habit])


@pytest.mark.parametrize("assignment", GRADED)
def test_a_notebook_saved_as_nbformat_4_4_is_graded_into_a_valid_notebook(graded, assignment):
    graded_notebook = graded.engine / "autograded" / "saved-as-nbformat-4.4" / assignment / NOTEBOOK
    nbformat.validate(nbformat.read(graded_notebook, as_version=4))
    assert "is invalid" not in graded.log[assignment], [line for line in graded.log[assignment].splitlines()
                                                         if "is invalid" in line][:3]


@pytest.mark.parametrize(("habit", "assignment"), [row for row in ROWS if row.values[0].startswith("prints")])
def test_what_the_answer_printed_is_in_the_graded_notebook_as_in_stocks(graded, habit, assignment):
    stock = printed(graded.stock, habit, assignment)
    assert stock, "the function is called by the tests: its print shows in stock's graded notebook"
    assert printed(graded.engine, habit, assignment) == stock
