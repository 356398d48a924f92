"""Courses nobody here wrote grade with the engine exactly as with stock nbgrader.

Each course (nbgrader's own two are read from the installed nbgrader package: tests/helpers/foreign_courses.py)
is graded twice in one test run, in two course folders: with stock nbgrader's configuration, and with the same plus the
engine's adoption lines (the first ``python`` block under ``## Adopting it`` in ``docs/engine.md``). One
``nbgrader autograde`` run per folder grades every submission of the course (module fixture); the tests
then compare the two gradebooks and ``autograded/`` folders, submission by submission:

- an honest submission, or one whose tests stock nbgrader restores, scores the same: per notebook
  (``code_score``) and per grade cell (``auto_score``);
- a cheat attempt never scores more with the engine than with stock nbgrader;
- the engine grades every submission: a row in its gradebook, a folder in ``autograded/``, with every
  file stock nbgrader leaves there (those the notebook itself wrote included).

The expected scores are always stock nbgrader's in the same run, never numbers of the engine's.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from ..helpers.cells import nbgrader_cell as _cell
from ..helpers.foreign_courses import (APPS_FILES, Course, ENGINES, NBGRADER_SAYS, PORT_TAKEN, USER_GUIDE,
                                       adoption_lines, nbgrader, read_gradebook, run_python)


# A course written here, in nbgrader's own ways that the two above do not show -----------------------

SHAPES_ANSWER = "def area(w, h):\n    ### BEGIN SOLUTION\n    return w * h\n    ### END SOLUTION\n"


def shapes_notebook(answer=SHAPES_ANSWER, between=True):
    """A notebook of the course ``shapes``: a set-up cell that reads a data file beside the notebook; with
    `between`, a cell between the answer and its tests that uses the answer (so that the trusted judge, when
    on, leaves the tests to the kernel); a test cell that grades itself (its last value, nbgrader's partial
    credit); a test cell of plain asserts with hidden tests; a manually graded answer."""
    return nbformat.v4.new_notebook(cells=[
        _cell("code", "sizes = [tuple(map(int, line.split(','))) for line in open('sizes.csv').read().split()]",
              grade_id="setup", locked=True),
        _cell("code", answer, grade_id="area", solution=True),
        *([_cell("code", "print(area(2, 3))")] if between else []),
        _cell("code", "passed = sum(area(w, h) == w * h for w, h in sizes)\npassed / len(sizes) * 2",
              grade_id="area_partial", grade=True, locked=True, points=2),
        _cell("code", "assert area(1, 1) == 1\n### BEGIN HIDDEN TESTS\nassert area(0, 5) == 0\n### END HIDDEN TESTS",
              grade_id="area_asserts", grade=True, locked=True, points=1),
        _cell("markdown", "Why is area symmetric?", grade_id="why", grade=True, solution=True, points=1),
    ])


def make_shapes_course(folder):
    """Write the course ``shapes`` (one assignment ``ps1``, a header and a footer notebook) into `folder`."""
    source = folder / "source" / "ps1"
    source.mkdir(parents=True)
    for name, between in SHAPES_NOTEBOOKS.items():
        nbformat.write(shapes_notebook(between=between), str(source / name))
    (source / "sizes.csv").write_text("1,1\n2,3\n4,4\n5,0\n")
    for part in ("header", "footer"):
        nbformat.write(nbformat.v4.new_notebook(cells=[_cell("markdown", f"The course's {part}.")]),
                       str(folder / "source" / f"{part}.ipynb"))
    for student, answer in SHAPES_ANSWERS.items():
        submitted = folder / "submitted" / student / "ps1"
        submitted.mkdir(parents=True)
        (submitted / "sizes.csv").write_text((source / "sizes.csv").read_text())
        for name, between in SHAPES_NOTEBOOKS.items():
            mine = answer.replace("    ### BEGIN SOLUTION\n", "").replace("    ### END SOLUTION\n", "")
            notebook = shapes_notebook(mine, between)
            for cell in notebook.cells:  # as the student has it: no hidden tests
                cell.source = cell.source.split("\n### BEGIN HIDDEN TESTS")[0]
            nbformat.write(notebook, str(submitted / name))


#: The notebooks of ``shapes``'s one assignment: ``{name: with a cell between answer and tests}``.
SHAPES_NOTEBOOKS = {"shapes.ipynb": True, "areas.ipynb": False}


#: The students of ``shapes`` and their answers: each scores what stock nbgrader gives it.
SHAPES_ANSWERS = {
    "right": SHAPES_ANSWER,
    "alternative": "area = lambda w, h: h * w",
    "half": "def area(w, h):\n    return w * h if w < 3 else w + h",  # right for 2 of the 4 sizes
    "wrong": "def area(w, h):\n    return w + h",
    "blank": "# YOUR CODE HERE\nraise NotImplementedError()",
}


#: nbgrader's own ways, in a course written here: a header and a footer notebook, a data file beside the
#: notebook that a set-up cell reads, a test cell whose last value is its partial credit, plain asserts with
#: hidden tests, a cell that uses the answer between it and its tests, and a manually graded answer.
SHAPES = Course(name="shapes", make=make_shapes_course, submissions=dict.fromkeys(SHAPES_ANSWERS),
                config='c.IncludeHeaderFooter.header = "source/header.ipynb"\n'
                       'c.IncludeHeaderFooter.footer = "source/footer.ipynb"')


# A course written here whose students change their kernel's state: the verdict is a plain run's ---------------

#: The set-up cell of ``faithful``: warnings show on standard output, as this course's own notebooks have them.
FAITHFUL_SETUP = """import os
import random
import sys
import warnings

import numpy as np


def _on_stdout(message, category, filename, lineno, file=None, line=None):
    sys.stdout.write(warnings.formatwarning(message, category, filename, lineno, line))


warnings.showwarning = _on_stdout"""

#: ``faithful``'s exercises: (grade id, reference answer, test cell). Each test reads a piece of the kernel's
#: state that a student's code can change: numpy's error state (softmax underflows), the warning filters (an
#: empty mean warns; a test that silences it), the global random generators a test seeds, numpy's print options,
#: the working folder, and what an answer prints, to stdout or stderr.
FAITHFUL_EXERCISES = [
    ("softmax", "def softmax(x):\n    e = np.exp(x - np.max(x))\n    return e / e.sum()",
     "assert np.allclose(softmax(np.array([0.0, 0.0])), [0.5, 0.5])\n### BEGIN HIDDEN TESTS\n"
     "assert np.allclose(softmax(np.array([-1000.0, 0.0])), [0.0, 1.0])\n### END HIDDEN TESTS"),
    ("mean_of", "def mean_of(x):\n    return float(np.mean(x))",
     "assert mean_of(np.array([1.0, 3.0])) == 2.0\nassert np.isnan(mean_of(np.array([])))"),
    ("mean_of_quiet", None,
     "with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n    assert np.isnan(mean_of(np.array([])))"),
    ("jitter", "def jitter(x, scale=0.1):\n    return x + scale * np.random.normal(size=np.shape(x))",
     "np.random.seed(3)\ngot = jitter(np.zeros(4))\nnp.random.seed(3)\nassert np.allclose(got, 0.1 * np.random.normal(size=4))\n"
     "after = np.random.normal()\nnp.random.seed(3)\nnp.random.normal(size=4)\nassert after == np.random.normal()"),
    ("pick", "def pick(items):\n    return random.choice(items)",
     "random.seed(5)\ngot = [pick('abcdef') for _ in range(5)]\nrandom.seed(5)\n"
     "assert got == [random.choice('abcdef') for _ in range(5)]"),
    ("describe", "def describe(x):\n    return f'x = {x}'",
     "x = np.array([1 / 3, 2 / 3])\nassert describe(x) == f'x = {x}', describe(x)"),
    ("save", "def save(text, name='answer.txt'):\n    with open(name, 'w') as file:\n        file.write(text)",
     "save('hello')\nwith open('answer.txt') as file:\n    assert file.read() == 'hello'"),
    ("shout", "def shout(word):\n    return word.upper()",
     "assert shout('a') == 'A'\nassert [shout(w) for w in 'bc'] == ['B', 'C']"),
]

#: ``faithful``'s students: ``{student: (a cell they add below the set-up cell, {grade id: their answer})}``.
FAITHFUL_STUDENTS = {
    "right": ("", {}),
    "numpy-raises": ("np.seterr(all='raise')", {}),
    "warnings-raise": ("warnings.simplefilter('error')", {}),
    "print-options": ("np.set_printoptions(precision=3)", {}),
    "moved-folder": ("os.makedirs('work', exist_ok=True)\nos.chdir('work')", {}),
    "prints-stdout": ("", {"shout": "def shout(word):\n    print('debug: shout', word)\n    return word.upper()"}),
    "prints-stderr": ("", {"shout": "def shout(word):\n    print('debug: shout', word, file=sys.stderr)\n"
                                    "    return word.upper()"}),
    # the same prints, with stderr pointed at stdout: nothing on stderr, no point lost
    "stderr-on-stdout": ("sys.stderr = sys.stdout", {"shout": "def shout(word):\n    print('debug: shout', word, "
                                                              "file=sys.stderr)\n    return word.upper()"}),
}


def faithful_notebook(answers=None, habit=""):
    """The notebook of ``faithful``: the source (`answers` None) or a student's (their `answers` by grade id, the
    rest the reference's; their `habit` cell below the set-up; no hidden tests)."""
    cells = [_cell("code", FAITHFUL_SETUP, grade_id="setup", locked=True)]
    if habit:
        cells.append(nbformat.v4.new_code_cell(habit))
    for name, answer, test in FAITHFUL_EXERCISES:
        if answer is not None:
            if answers is None:
                body = answer.split("\n", 1)
                cells.append(_cell("code", f"{body[0]}\n    ### BEGIN SOLUTION\n{body[1]}\n    ### END SOLUTION",
                                   grade_id=name, solution=True))
            else:
                cells.append(_cell("code", answers.get(name, answer), grade_id=name, solution=True))
        if answers is not None:
            test = test.split("\n### BEGIN HIDDEN TESTS")[0]
        cells.append(_cell("code", test, grade_id=f"{name}_test", grade=True, locked=True, points=1))
    return nbformat.v4.new_notebook(cells=cells)


def make_faithful_course(folder):
    """Write the course ``faithful`` (one notebook, ``ps1/state.ipynb``) and its students into `folder`."""
    (folder / "source" / "ps1").mkdir(parents=True)
    nbformat.write(faithful_notebook(), str(folder / "source" / "ps1" / "state.ipynb"))
    for student, (habit, answers) in FAITHFUL_STUDENTS.items():
        (folder / "submitted" / student / "ps1").mkdir(parents=True)
        nbformat.write(faithful_notebook(answers, habit), str(folder / "submitted" / student / "ps1" / "state.ipynb"))


#: A course whose students change their kernel's state (FAITHFUL_STUDENTS): each scores what stock gives it with the
#: trusted judge (without it, the kernel runs the tests, as stock's does).
FAITHFUL = Course(name="faithful", config="", make=make_faithful_course, submissions=dict.fromkeys(FAITHFUL_STUDENTS),
                  flavours=("stock", "engine-trusted"))


# A course with IPython magics in its set-up cells, graded in an environment of its own --------------------

MAGICS_SET_UP = """%reset -f
%matplotlib inline
%config InlineBackend.figure_format = "png"
%load_ext autoreload
%autoreload 2
import math
import os
import numpy as np
print("environment:", os.environ.get("LANG"), os.environ.get("TZ"), "POSENC_SECRET_TOKEN" in os.environ)
"""
MAGICS_ANSWER = ("import stats_helpers\n\n\ndef mean(xs):\n    ### BEGIN SOLUTION\n"
                 "    return stats_helpers.total(xs) / len(xs)\n    ### END SOLUTION\n")
#: The students of ``magics``: a wrong answer that patches the checks the tests use scores all in a kernel.
MAGICS_ANSWERS = {
    "right": MAGICS_ANSWER,
    "wrong": "import stats_helpers\n\n\ndef mean(xs):\n    return stats_helpers.total(xs)\n",
    "patched": ("import math\nimport numpy\nimport stats_helpers\n\nmath.isclose = lambda *args, **kwargs: True\n"
                "numpy.allclose = lambda *args, **kwargs: True\n\n\ndef mean(xs):\n    return stats_helpers.total(xs)\n"),
}
#: The graders' environment for ``magics``: no bytecode, a locale and a time zone the sandbox's kernel must see as
#: they are (its own default LANG is C.UTF-8), and a secret it must not see.
MAGICS_ENVIRONMENT = {"PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.utf8", "TZ": "Pacific/Chatham",
                      "POSENC_SECRET_TOKEN": "not-for-students"}


def magics_notebook(answer=MAGICS_ANSWER):
    """The notebook of ``magics``: set-up cells with magics (``%reset -f``, ``%matplotlib inline``, ``%config``,
    ``%load_ext``, ``%%capture`` around ``!pip list``), one that prints what the kernel's environment holds, an
    answer that imports a helper module beside the notebook, a test cell of ``math.isclose`` and ``np.allclose``,
    and a test cell with a magic the trusted judge cannot carry out (``%env NAME=value``): it alone runs in the
    kernel."""
    return nbformat.v4.new_notebook(cells=[
        _cell("code", MAGICS_SET_UP, grade_id="setup", locked=True),
        _cell("code", "%%capture\n!pip list\nTOLERANCE = 1e-9\n", grade_id="setup_capture", locked=True),
        _cell("code", answer, grade_id="mean", solution=True),
        _cell("code", "assert math.isclose(mean([1, 2, 3]), 2.0, rel_tol=TOLERANCE)\n"
                      "assert np.allclose(mean(np.array([0.5, 1.5])), 1.0)",
              grade_id="test_mean", grade=True, locked=True, points=2),
        _cell("code", "%env CHECKING=1\nassert math.isclose(mean([2, 4]), 3.0)",
              grade_id="test_mean_env", grade=True, locked=True, points=1),
    ])


def make_magics_course(folder):
    """Write the course ``magics`` (one assignment ``ps1``: ``stats.ipynb`` and ``stats_helpers.py``) into `folder`."""
    source = folder / "source" / "ps1"
    source.mkdir(parents=True)
    nbformat.write(magics_notebook(), str(source / "stats.ipynb"))
    helpers = "def total(xs):\n    return sum(xs)\n"
    (source / "stats_helpers.py").write_text(helpers)
    for student, answer in MAGICS_ANSWERS.items():
        submitted = folder / "submitted" / student / "ps1"
        submitted.mkdir(parents=True)
        (submitted / "stats_helpers.py").write_text(helpers)
        mine = answer.replace("    ### BEGIN SOLUTION\n", "").replace("    ### END SOLUTION\n", "")
        nbformat.write(magics_notebook(mine), str(submitted / "stats.ipynb"))


#: Magics in set-up cells, as many courses have them, graded with the trusted judge (and stock), by graders whose
#: environment has PYTHONDONTWRITEBYTECODE, a locale, a time zone and a secret.
MAGICS = Course(name="magics", config="", make=make_magics_course, submissions=dict.fromkeys(MAGICS_ANSWERS),
                cheats=("patched",), flavours=("stock", "engine-trusted"), environment=MAGICS_ENVIRONMENT)


COURSES = {course.name: course for course in (USER_GUIDE, APPS_FILES, SHAPES, FAITHFUL, MAGICS)}
SUBMISSIONS = [pytest.param(course, student, id=f"{course.name}/{student}")
               for course in COURSES.values() for student in course.students]
#: ``(course, student, flavour)`` of each submission graded by the engine.
ENGINE_SUBMISSIONS = [pytest.param(course, student, flavour, id=f"{flavour}-{course.name}/{student}")
                      for course in COURSES.values() for flavour in course.flavours if flavour in ENGINES
                      for student in course.students]


# Grading -----------------------------------------------------------------------------------------

@dataclass
class Graded:
    """One course graded with one configuration.

    Attributes
    ----------
    folder : pathlib.Path
        The course folder.
    log : str
        ``nbgrader autograde``'s output.
    returncode : int
        Its exit status.
    notebooks : dict
        ``{student: {notebook: Notebook}}`` from the gradebook, for every student with a submission.
    """

    folder: Path
    log: str
    returncode: int
    notebooks: dict


def grade(course, flavour, folder):
    """Lay out `course` in `folder`, configured as `flavour`, and autograde it; return a Graded."""
    config = ["c = get_config()  # noqa: F821", f'c.CourseDirectory.course_id = "{course.name}"', course.config]
    if flavour in ENGINES:
        config += [adoption_lines(), ENGINES[flavour]]
    (folder / "nbgrader_config.py").write_text("\n".join(config) + "\n", encoding="utf-8")
    course.lay_out(folder)
    generated = nbgrader(folder, "generate_assignment", course.assignment)
    assert generated.returncode == 0, f"{flavour}: generate_assignment failed:\n{generated.stdout}"
    if flavour == "engine-grade-class":
        graded = run_python(folder, "-m", "hardened_grading.class_grading.command", course.assignment, "--jobs", "1",
                            environment=course.environment)
    else:
        graded = nbgrader(folder, "autograde", course.assignment, environment=course.environment)
        if flavour == "stock" and graded.returncode and PORT_TAKEN in graded.stdout:  # once more (PORT_TAKEN)
            graded = nbgrader(folder, "autograde", course.assignment, "--force", environment=course.environment)
    (folder / "autograde.log").write_text(graded.stdout, encoding="utf-8")  # to read after a failure
    notebooks = read_gradebook(folder, course.assignment) if (folder / "gradebook.db").exists() else {}
    return Graded(folder, graded.stdout, graded.returncode, notebooks)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """``{(course name, flavour): Graded}``: every course graded with each configuration, in parallel."""
    adoption_lines()  # a missing block stops here, with its reason, before anything is graded
    runs = [(course, flavour) for course in COURSES.values() for flavour in course.flavours]
    with ThreadPoolExecutor(len(runs)) as pool:
        futures = {(course.name, flavour): pool.submit(grade, course, flavour,
                                                       tmp_path_factory.mktemp(f"{course.name}-{flavour}"))
                   for course, flavour in runs}
        results = {key: future.result() for key, future in futures.items()}
    for name in COURSES:
        stock = results[name, "stock"]
        assert stock.returncode == 0, f"stock nbgrader failed to autograde {name}:\n{stock.log}"
    return results


def _log_of(graded, student):
    """The lines of `graded`'s autograde log about `student`: from nbgrader's line that starts their
    submission to the next such line (the whole log's end when nbgrader never started it)."""
    lines = graded.log.splitlines()
    start = [i for i, line in enumerate(lines) if f"student with ID '{student}'" in line]
    if not start:
        return "\n".join(lines[-60:])
    end = next((i for i in range(start[0] + 1, len(lines)) if "Creating/updating student with ID" in lines[i]),
               len(lines))
    return "\n".join(lines[start[0]:end])


# The tests ---------------------------------------------------------------------------------------

def test_adoption_lines_are_found():
    """The engine's adoption lines exist and configure nbgrader's autograde."""
    assert "c.Autograde." in adoption_lines()


@pytest.mark.parametrize(("name", "flavour"), [(name, flavour) for name, course in COURSES.items()
                                                for flavour in course.flavours if flavour in ENGINES])
def test_engine_autograde_succeeds(graded, name, flavour):
    """The engine's ``nbgrader autograde`` run ends without an error, as stock nbgrader's does."""
    engine = graded[name, flavour]
    assert engine.returncode == 0, f"the engine's autograde of {name} failed:\n{engine.log}"


@pytest.mark.parametrize("name", NBGRADER_SAYS)
def test_stock_run_scores_as_nbgrader_says(graded, name):
    """Sanity check of the stock run: the scores nbgrader's docs and tests give these submissions."""
    stock = graded[name, "stock"].notebooks
    scores = {student: sum(nb.code_score for nb in stock.get(student, {}).values())
              for student in NBGRADER_SAYS[name]}
    assert scores == NBGRADER_SAYS[name]


@pytest.mark.parametrize(("course", "student", "flavour"), ENGINE_SUBMISSIONS)
def test_engine_grades_every_submission(graded, course, student, flavour):
    """The engine grades the submission: a gradebook row per notebook and a folder in autograded/."""
    stock, engine = graded[course.name, "stock"], graded[course.name, flavour]
    assert student in stock.notebooks, f"stock nbgrader did not grade {student}:\n{_log_of(stock, student)}"
    assert (engine.folder / "autograded" / student / course.assignment).is_dir(), \
        f"the engine left no autograded/{student}/{course.assignment}:\n{_log_of(engine, student)}"
    assert student in engine.notebooks, \
        f"the engine's gradebook has no submission of {student}:\n{_log_of(engine, student)}"
    assert sorted(engine.notebooks[student]) == sorted(stock.notebooks[student])


@pytest.mark.parametrize(("course", "student", "flavour"), ENGINE_SUBMISSIONS)
def test_engine_scores_as_stock(graded, course, student, flavour):
    """Automatic scores per notebook and per grade cell: equal to stock's, or for a cheat attempt at most."""
    stock, engine = graded[course.name, "stock"], graded[course.name, flavour]
    expected = stock.notebooks[student]
    got = engine.notebooks.get(student)
    assert got is not None, f"the engine did not grade {student}:\n{_log_of(engine, student)}"
    for name, want in expected.items():
        assert name in got, f"the engine's gradebook has no {name} of {student}:\n{_log_of(engine, student)}"
        have = got[name]
        scores = {"stock": want, "engine": have}
        assert have.max_code_score == want.max_code_score, scores
        assert sorted(have.auto_scores) == sorted(want.auto_scores), scores
        if student not in course.cheats:  # the same cells wait for the instructor
            assert have.manual == want.manual, f"{name}: needs manual grading: {scores}"
        if student in course.cheats:
            assert have.code_score <= want.code_score, f"{name}: the cheat scores more with the engine: {scores}"
            for cell, score in want.auto_scores.items():
                assert (have.auto_scores[cell] or 0) <= (score or 0), f"{name}, cell {cell}: {scores}"
        else:
            assert (have.code_score, have.auto_scores) == (want.code_score, want.auto_scores), \
                f"{name}: {scores}\nthe engine's log:\n{_log_of(engine, student)}"


@pytest.mark.parametrize("course", [c for c in COURSES.values() if "engine-grade-class" in c.flavours],
                         ids=[n for n, c in COURSES.items() if "engine-grade-class" in c.flavours])
def test_hardened_grade_grades_each_student_after_the_first_in_a_kernel_started_ahead(graded, course):
    """The proof that ``engine-grade-class``'s scores and files are those of kernels started ahead: its log says so
    for every student but the first (nbgrader grades them in sorted order); none failed to start or answer."""
    log = "\n".join(path.read_text() for path in (graded[course.name, "engine-grade-class"].folder / "logs").glob("*.log"))
    used = {line.split("'")[1] for line in log.splitlines() if "the kernel started ahead is used" in line}
    assert used == set(sorted(course.students)[1:]), log[-3000:]
    assert "could not be started ahead" not in log and "did not answer" not in log


def _files(graded, folder):
    """``{path relative to folder: path}`` of every file in `graded`'s course `folder`."""
    folder = graded.folder / folder
    return {str(path.relative_to(folder)): path for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize(("course", "student", "flavour"), ENGINE_SUBMISSIONS)
def test_engine_keeps_the_files_stock_keeps(graded, course, student, flavour):
    """autograded/STUDENT/ASSIGNMENT holds the files stock nbgrader leaves there (the notebook's own
    included), with the same content, and no other file that is not hidden; submitted/ is left as it was."""
    submission = Path(student, course.assignment)
    assert sorted(_files(graded[course.name, flavour], "submitted" / submission)) \
        == sorted(_files(graded[course.name, "stock"], "submitted" / submission))
    stock = _files(graded[course.name, "stock"], "autograded" / submission)
    engine = _files(graded[course.name, flavour], "autograded" / submission)
    lists = f"stock keeps {sorted(stock)}, the engine {sorted(engine)}"
    assert sorted(stock.keys() - engine.keys()) == [], lists
    # the engine may add hidden files of its own (a mark that grading finished), nothing else
    assert [name for name in engine.keys() - stock.keys() if not Path(name).name.startswith(".")] == [], lists
    for name, path in stock.items():
        if path.suffix != ".ipynb":
            assert engine[name].read_bytes() == path.read_bytes(), f"{name} differs"


def _printed_by_shout(graded, student):
    """``[(stream name, line), ...]`` of what ``faithful``'s ``shout`` printed, in `student`'s graded notebook."""
    notebook = nbformat.read(graded.folder / "autograded" / student / FAITHFUL.assignment / "state.ipynb", as_version=4)
    return [(output.name, line) for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
            if output.output_type == "stream" for line in output.text.splitlines() if "debug: shout" in line]


@pytest.mark.parametrize("flavour", FAITHFUL.flavours[1:])
@pytest.mark.parametrize("student", ["prints-stdout", "prints-stderr", "stderr-on-stdout"])
def test_what_an_answer_prints_while_tested_is_in_the_graded_notebook_as_stock_has_it(graded, student, flavour):
    """What the student's function prints while a test calls it reaches the graded notebook, on its own stream and
    in order, as in stock's: the trusted judge once lost it all (the kernel sent it after the call's reply)."""
    stock = _printed_by_shout(graded["faithful", "stock"], student)
    assert [line for _, line in stock] == ["debug: shout a", "debug: shout b", "debug: shout c"], stock
    assert _printed_by_shout(graded["faithful", flavour], student) == stock


def test_magics_in_set_up_cells_leave_the_tests_to_the_trusted_judge(graded):
    """``%matplotlib inline``, ``%reset -f``, ``%%capture`` and the like in the set-up cells no longer send a
    notebook's tests to the kernel: with ``trusted_tests``, a wrong answer that patches ``math.isclose`` and
    ``numpy.allclose`` in its kernel (which passes every test there, as stock nbgrader shows) scores what the plain
    wrong answer scores, and the right one scores full. Only the test cell with a magic the judge cannot carry out
    (``%env CHECKING=1``) runs in the kernel, as stock's: there the patch still works, and the log says so in one
    line."""
    stock, engine = graded["magics", "stock"], graded["magics", "engine-trusted"]
    full = {"test_mean": 2.0, "test_mean_env": 1.0}
    assert stock.notebooks["patched"]["stats"].auto_scores == full, "the patch works in a kernel"
    assert stock.notebooks["wrong"]["stats"].auto_scores == {"test_mean": 0.0, "test_mean_env": 0.0}
    scores = {student: engine.notebooks[student]["stats"].auto_scores for student in MAGICS_ANSWERS}
    assert scores["right"] == full, engine.log[-3000:]
    assert scores["patched"]["test_mean"] == scores["wrong"]["test_mean"] == 0.0, engine.log[-3000:]
    assert scores["patched"]["test_mean_env"] == 1.0  # the one cell run in the kernel
    said = [line for line in engine.log.splitlines() if "magics the trusted judge cannot carry out" in line]
    assert len(said) == 1 and "test cell 5 (test_mean_env) `%env CHECKING=1`: it runs in the kernel" in said[0], said
    assert "set-up cell cannot run in the grader" not in engine.log


def _printed(graded, student, grade_id):
    """What the cell `grade_id` of `student`'s graded ``stats.ipynb`` printed."""
    notebook = nbformat.read(str(graded.folder / "autograded" / student / "ps1" / "stats.ipynb"), as_version=4)
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_the_sandboxed_kernel_inherits_only_the_harmless_part_of_the_graders_environment(graded):
    """The sandboxed kernel sees the grader's LANG and TZ, as stock's kernel does, but not a variable off the list
    (``POSENC_SECRET_TOKEN``); with PYTHONDONTWRITEBYTECODE in the grader's environment it leaves no
    ``__pycache__`` beside the helper module the answer imports (test_engine_keeps_the_files_stock_keeps: no file
    stock's does not leave)."""
    stock, engine = graded["magics", "stock"], graded["magics", "engine-trusted"]
    assert _printed(stock, "right", "setup") == "environment: C.utf8 Pacific/Chatham True\n"
    assert _printed(engine, "right", "setup") == "environment: C.utf8 Pacific/Chatham False\n"
    assert not list((engine.folder / "autograded").rglob("__pycache__"))
