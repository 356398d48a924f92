"""The assignment grades right: real nbgrader commands, real kernels, a real SQLite gradebook.

One class of students is autograded in a single ``nbgrader autograde`` run (module fixture):
the reference answers, the blank release, every wrong answer of ``wrong_solutions``, an
alternative correct answer per exercise, tampered tests, hostile cells and answers (crashes,
memory bombs, endless loops, peeking, faked checks) and malformed files. Each test then asserts
on the gradebook, in the shape of nbgrader's own test suite.
"""

import copy
import csv
import inspect
import os
import pwd
import re

import nbformat
import pytest

from posenc_course import report
from posenc_course.course import ROOT, generate, nbgrader_env, new_course, run_nbgrader
from posenc_course.layout import SOURCE_NOTEBOOK, points_per_exercise, points_per_test_cell
from posenc_course.submissions import grade_id, is_test_cell, make_submission, reference_answers, write_submission
from posenc_solutions import EXERCISES

from . import alternative_solutions
from .student_alternatives import STUDENT_ALTERNATIVES
from .wrong_solutions import WRONG, WRONG_CONCEPTS

# Points come from the source notebook's metadata, never typed here.
SOURCE = nbformat.read(SOURCE_NOTEBOOK, as_version=4)
MAX_POINTS = points_per_exercise(SOURCE)
TEST_POINTS = points_per_test_cell(SOURCE)


def alternative_code(name):
    """Source of an alternative answer, with the private helpers it calls."""
    function = getattr(alternative_solutions, name)
    source = inspect.getsource(function)
    helpers = [h for h in dir(alternative_solutions) if h.startswith("_") and not h.startswith("__")
               and re.search(rf"\b{h}\(", source)]
    return "\n\n".join([inspect.getsource(getattr(alternative_solutions, h)) for h in helpers] + [source])


def drop_cells(notebook, grade_ids):
    notebook.cells = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in grade_ids]
    return notebook


def edit_cells(notebook, prefix, new_source):
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id", "").startswith(prefix):
            cell.source = new_source
    return notebook


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Autograde a whole class once; yield (course, scores, autograde result, submitted names)."""
    course = new_course(tmp_path_factory.mktemp("course"))
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    submitted = course / "submitted"

    def submit(student, notebook):
        write_submission(notebook, submitted, student)

    submit("reference", make_submission(answers, release_notebook=release))
    submit("blank", make_submission(release_notebook=release))
    for label, (_, functions) in WRONG.items():
        submit(f"wrong-{label}", make_submission(answers, functions, release_notebook=release))
    for exercise, names in EXERCISES.items():
        functions = {name: alternative_code(name) for name in names}
        submit(f"alt-{exercise}", make_submission(answers, functions, release_notebook=release))
    for label, functions in STUDENT_ALTERNATIVES.items():
        submit(f"student-{label}", make_submission(answers, functions, release_notebook=release))
    for label, (_, wrong_answers) in WRONG_CONCEPTS.items():
        submit(f"concept-{label}", make_submission({**answers, **wrong_answers}, release_notebook=release))

    # Tampering: test cells emptied or deleted, with right and with wrong answers.
    rope_wrong = WRONG["rope_half_split"][1]
    submit("tamper-edited-right", edit_cells(make_submission(answers, release_notebook=release), "ex0", "pass"))
    submit("tamper-edited-wrong", edit_cells(make_submission(answers, rope_wrong, release_notebook=release), "ex05", "assert True"))
    all_tests = [c.metadata.nbgrader["grade_id"] for c in make_submission(release_notebook=release).cells
                 if c.metadata.get("nbgrader", {}).get("grade")]
    submit("tamper-deleted-right", drop_cells(make_submission(answers, release_notebook=release), all_tests[::2]))
    submit("tamper-deleted-wrong", drop_cells(make_submission(answers, rope_wrong, release_notebook=release),
                                             [t for t in all_tests if t.startswith("ex05")]))

    # An endless loop at the top of one answer cell: ex03's causal_mask is never defined.
    looping = make_submission(answers, release_notebook=release)
    [cell] = [c for c in looping.cells if grade_id(c) == "ex03_causal_mask"]
    cell.source = "while True:\n    pass\n\n" + cell.source
    submit("endless-loop", looping)

    # Cells that kill the kernel, exhaust its memory, or sleep forever, each in one exercise.
    for student, cell_id, code in [
        ("hostile-exit", "ex04_clipped_relative_bias", "import os\nos._exit(1)"),
        ("hostile-segfault", "ex06_rotation_2d", "import ctypes\nctypes.string_at(0)"),
        ("hostile-growing-list", "ex08_interpolate_position_table", "hog = []\nwhile True:\n    hog.append(bytearray(10**7))"),
        ("hostile-huge-array", "ex02_add_positions", "big = np.ones((10**6, 10**5))"),
        ("hostile-sleep", "ex09_decode_position_ids", "import time\ntime.sleep(10**6)"),
        # Peeking: each tries to read what grading keeps private, or to change the grading environment.
        ("peek-import", "ex01_sinusoidal_row", "from posenc_solutions import sinusoidal_row as _reference"),
        ("peek-source", "ex02_add_positions", f"_text = open({str(course / 'source' / 'posenc' / 'exercises.ipynb')!r}).read()"),
        ("peek-gradebook", "ex03_causal_mask",
         f"import sqlite3\n_rows = sqlite3.connect('file:{course / 'gradebook.db'}?mode=ro', uri=True)"
         ".execute('select * from grade_cells').fetchall()\nassert _rows"),
        ("peek-others", "ex04_clipped_relative_bias", f"import os\nassert len(os.listdir({str(course / 'submitted')!r})) > 1"),
        ("peek-write", "ex05_apply_rope", f"open({str(ROOT / 'posenc_course' / 'evil.py')!r}, 'w').write('x = 1')\n"
                                          f"open({str(course / 'release' / 'evil.py')!r}, 'w').write('x = 1')"),
    ]:
        notebook = make_submission(answers, release_notebook=release)
        [cell] = [c for c in notebook.cells if grade_id(c) == cell_id]
        cell.source = code + "\n\n" + cell.source
        submit(student, notebook)

    # The same, but only when the tests call the answer: the tests run outside the kernel and
    # call it there. The last two loops swallow the interrupt that stops them.
    swallow = "    while True:\n        try:\n            while True:\n                pass\n        except KeyboardInterrupt:\n            pass"
    for student, name, code in [
        ("hostile-call-exit", "rotation_2d", "def rotation_2d(angle):\n    import os\n    os._exit(1)"),
        ("hostile-call-memory", "interpolate_position_table",
         "def interpolate_position_table(*args, **kwargs):\n    hog = []\n    while True:\n        hog.append(bytearray(10**7))"),
        ("hostile-call-loop", "decode_position_ids", "def decode_position_ids(*args, **kwargs):\n    while True:\n        pass"),
        ("hostile-call-swallow", "causal_mask", "def causal_mask(query_positions, key_positions):\n" + swallow),
    ]:
        submit(student, make_submission(answers, {name: code}, release_notebook=release))
    swallowing = make_submission(answers, release_notebook=release)
    [cell] = [c for c in swallowing.cells if grade_id(c) == "ex04_clipped_relative_bias"]
    cell.source = "if True:\n" + swallow + "\n\n" + cell.source
    submit("hostile-swallow", swallowing)

    # Faked passes: replace numpy's comparison helpers with always-pass versions, then answer wrongly.
    fake = make_submission(answers, {**WRONG["rope_half_split"][1], **WRONG["strict_causal"][1]}, release_notebook=release)
    [cell] = [c for c in fake.cells if grade_id(c) == "ex01_sinusoidal_row"]
    cell.source = (
        "np.allclose = lambda *args, **kwargs: True\n"
        "np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, dtype=bool)\n"
        "np.array_equal = lambda *args, **kwargs: True\n"
        "np.testing.assert_allclose = lambda *args, **kwargs: None\n"
        "np.testing.assert_array_equal = lambda *args, **kwargs: None\n\n" + cell.source)
    submit("fake-passes", fake)
    # ... and go further, at the kernel's own checks: rebind every check_* helper to a no-op and
    # swallow every error; or blank every later cell that calls a check. Both used to pass all.
    for student, code in [
        ("fake-checks", "for _name in [n for n in dir() if n.startswith('check_')]:\n"
                        "    globals()[_name] = lambda *args, **kwargs: None\n"
                        "get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)"),
        ("fake-cells", "get_ipython().input_transformers_cleanup.append(\n"
                       "    lambda lines: [] if any('check_' in line for line in lines) else lines)"),
    ]:
        notebook = make_submission(answers, {**WRONG["rope_half_split"][1], **WRONG["strict_causal"][1]},
                                   release_notebook=release)
        [cell] = [c for c in notebook.cells if grade_id(c) == "ex01_sinusoidal_row"]
        cell.source = code + "\n\n" + cell.source
        submit(student, notebook)

    # Files that are not notebooks, a notebook of another assignment, and a renamed notebook.
    reference_text = nbformat.writes(make_submission(answers, release_notebook=release))
    for student, content in [("malformed", '{"cells": [{"cell_type": "code", "source": "truncated'),
                             ("bad-truncated", reference_text[: len(reference_text) // 2]),
                             ("bad-empty", ""),
                             ("bad-binary", bytes(range(256)) * 8)]:
        path = write_submission(make_submission(release_notebook=release), submitted, student)
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    submit("bad-other-assignment", nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("answer = 42")]))
    renamed = write_submission(make_submission(answers, release_notebook=release), submitted, "renamed")
    renamed.rename(renamed.with_name("exercises (1).ipynb"))

    # Test cells reordered and duplicated, with a wrong answer in ex05; an answer cell duplicated
    # (a wrong first copy, then the right one); a helper cell of the student's own.
    reordered = make_submission(answers, rope_wrong, release_notebook=release)
    tests = [c for c in reordered.cells if c.metadata.get("nbgrader", {}).get("grade")]
    reordered.cells = [c for c in reordered.cells if not c.metadata.get("nbgrader", {}).get("grade")] + tests[::-1] + tests[:5]
    submit("tamper-reordered-wrong", reordered)
    duplicated = make_submission(answers, release_notebook=release)
    [index] = [i for i, c in enumerate(duplicated.cells) if grade_id(c) == "ex03_causal_mask"]
    first_copy = nbformat.from_dict(copy.deepcopy(duplicated.cells[index]))
    first_copy.source = WRONG["strict_causal"][1]["causal_mask"]
    duplicated.cells.insert(index, first_copy)
    submit("tamper-duplicated-answer", duplicated)
    helper = make_submission(answers, {"rotation_2d": "def rotation_2d(angle):\n    return my_rotation(angle)"},
                             release_notebook=release)
    [index] = [i for i, c in enumerate(helper.cells) if grade_id(c) == "ex06_rotation_2d"]
    helper.cells.insert(index, nbformat.v4.new_code_cell(
        "def my_rotation(a):\n    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])"))
    submit("own-helper-cell", helper)

    result = run_nbgrader(course, "autograde", "posenc", "--force")
    scores = report.exercise_scores(course / "gradebook.db")
    yield course, scores, result


def assert_scores(scores, student, expected):
    got = {ex: score for ex, (score, _) in scores[student].items()}
    assert got == expected, f"{student}: expected {expected}, got {got}"


@pytest.mark.parametrize("assignment, notebook", [("posenc", "exercises.ipynb"), ("theory", "theory.ipynb")])
def test_committed_release_is_what_generate_assignment_makes(tmp_path, assignment, notebook):
    course = new_course(tmp_path)
    result = run_nbgrader(course, "generate_assignment", assignment, "--force")
    assert result.returncode == 0, result.stdout + result.stderr
    made = course / "release" / assignment / notebook
    assert made.read_text() == (ROOT / "release" / assignment / notebook).read_text(), (
        "release/ is stale: run `make release`")


def test_committed_source_notebook_is_built_from_the_spec_and_the_package():
    from posenc_course import notebook
    assert notebook.main(["--check"]) == 0, "source/posenc/exercises.ipynb is stale: run `make notebook`"


def test_release_holds_no_solution_and_no_hidden_test():
    text = (ROOT / "release" / "posenc" / "exercises.ipynb").read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "Model answer"):
        assert marker not in text
    release = nbformat.reads(text, as_version=4)
    source = nbformat.read(ROOT / "source" / "posenc" / "exercises.ipynb", as_version=4)
    hidden_lines = set()
    for cell in source.cells:
        for block in re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", cell.source, re.S):
            hidden_lines |= {line.strip() for line in block.splitlines() if len(line.strip()) > 25}
    for answer in reference_answers().values():
        # the body of every reference answer: lines after its docstring
        hidden_lines |= {line.strip() for line in answer.split('"""')[-1].splitlines() if len(line.strip()) > 25}
    released_lines = {line.strip() for c in release.cells if c.cell_type == "code" for line in c.source.splitlines()}
    leaked = sorted(hidden_lines & released_lines)
    assert not leaked, f"release shows hidden tests or solution code: {leaked[:5]}"
    stubs = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("solution")]
    answers_in_source = [c for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert len(stubs) == len(answers_in_source) and all("raise NotImplementedError()" in c.source for c in stubs)


def test_every_cell_id_belongs_to_its_exercise():
    for cell in SOURCE.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") or meta.get("solution"):
            assert re.match(r"ex\d\d_", meta["grade_id"]), meta["grade_id"]
    assert list(MAX_POINTS) == sorted(MAX_POINTS) and len(MAX_POINTS) == len(EXERCISES)


def test_the_whole_class_is_graded_in_one_run_without_errors(graded):
    course, scores, result = graded
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    students = {p.name for p in (course / "submitted").iterdir()}
    assert set(scores) == students
    for student in students:
        assert (course / "autograded" / student / "posenc" / "exercises.ipynb").exists(), student


@pytest.mark.parametrize("student, reason", [
    ("malformed", "NotJSONError"), ("bad-truncated", "NotJSONError"), ("bad-empty", "NotJSONError"),
    ("bad-binary", "UnicodeDecodeError"), ("bad-other-assignment", "a notebook of another assignment"),
])
def test_a_bad_file_scores_0_with_a_logged_reason(graded, student, reason):
    course, scores, result = graded
    log = result.stdout + result.stderr
    [line] = [line for line in log.splitlines() if f"posenc: student '{student}'" in line]
    assert reason in line, line
    assert_scores(scores, student, {ex: 0 for ex in MAX_POINTS})
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert not gradebook.find_submission("posenc", student).needs_manual_grade
    if student != "bad-other-assignment":
        graded_nb = nbformat.read(course / "autograded" / student / "posenc" / "exercises.ipynb", as_version=4)
        assert "could not be graded as sent" in graded_nb.cells[0].source and reason in graded_nb.cells[0].source


def test_bad_files_are_left_untouched(graded):
    course, _, _ = graded
    assert (course / "submitted" / "bad-empty" / "posenc" / "exercises.ipynb").read_text() == ""
    assert (course / "submitted" / "bad-binary" / "posenc" / "exercises.ipynb").read_bytes() == bytes(range(256)) * 8


def test_a_renamed_notebook_is_graded(graded):
    course, scores, result = graded
    assert_scores(scores, "renamed", MAX_POINTS)
    assert (course / "submitted" / "renamed" / "posenc" / "exercises (1).ipynb").exists(), "the original is kept"
    assert "submitted 'exercises (1).ipynb' instead of 'exercises.ipynb'" in result.stdout + result.stderr


def test_reordered_and_duplicated_test_cells_are_graded_with_the_original_tests(graded):
    _, scores, _ = graded
    got = {ex: score for ex, (score, _) in scores["tamper-reordered-wrong"].items()}
    assert got["ex05"] < MAX_POINTS["ex05"]
    assert {ex: s for ex, s in got.items() if ex != "ex05"} == {ex: m for ex, m in MAX_POINTS.items() if ex != "ex05"}


def test_a_duplicated_answer_cell_is_graded_by_its_last_copy(graded):
    _, scores, _ = graded
    assert_scores(scores, "tamper-duplicated-answer", MAX_POINTS)


def test_cells_a_student_adds_are_kept(graded):
    _, scores, _ = graded
    assert_scores(scores, "own-helper-cell", MAX_POINTS)


def test_reference_gets_full_marks_and_blank_gets_zero(graded):
    _, scores, _ = graded
    assert_scores(scores, "reference", MAX_POINTS)
    assert_scores(scores, "blank", {ex: 0 for ex in MAX_POINTS})


@pytest.mark.parametrize("label", sorted(WRONG))
def test_wrong_answer_loses_points_in_its_own_exercise_only(graded, label):
    _, scores, _ = graded
    exercise = WRONG[label][0]
    got = {ex: score for ex, (score, _) in scores[f"wrong-{label}"].items()}
    assert got[exercise] < MAX_POINTS[exercise], f"{label} was not caught by the tests of {exercise}"
    assert {ex: s for ex, s in got.items() if ex != exercise} == {ex: m for ex, m in MAX_POINTS.items() if ex != exercise}


@pytest.mark.parametrize("label", sorted(WRONG_CONCEPTS))
def test_a_wrong_concept_answer_loses_its_point_only(graded, label):
    _, scores, _ = graded
    exercise = WRONG_CONCEPTS[label][0]
    got = {ex: score for ex, (score, _) in scores[f"concept-{label}"].items()}
    assert got == {**MAX_POINTS, exercise: MAX_POINTS[exercise] - 1}, f"{label}: {got}"


def test_at_least_two_wrong_answers_per_exercise():
    per_exercise = {ex: sum(1 for e, _ in WRONG.values() if e == ex) for ex in MAX_POINTS}
    assert min(per_exercise.values()) >= 2, per_exercise


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_alternative_correct_answers_get_full_marks(graded, exercise):
    _, scores, _ = graded
    assert_scores(scores, f"alt-{exercise}", MAX_POINTS)


@pytest.mark.parametrize("label", sorted(STUDENT_ALTERNATIVES))
def test_correct_answers_written_as_students_write_them_get_full_marks(graded, label):
    """numpy or Python scalars, other error messages, HF's float32 arithmetic, reused functions."""
    _, scores, _ = graded
    assert_scores(scores, f"student-{label}", MAX_POINTS)


def test_edited_test_cells_are_graded_with_the_original_tests(graded):
    _, scores, _ = graded
    assert_scores(scores, "tamper-edited-right", MAX_POINTS)
    got = scores["tamper-edited-wrong"]
    assert got["ex05"][0] < MAX_POINTS["ex05"]


def test_deleted_test_cells_are_graded_with_the_original_tests(graded):
    course, scores, _ = graded
    assert_scores(scores, "tamper-deleted-right", MAX_POINTS)
    assert scores["tamper-deleted-wrong"]["ex05"][0] < MAX_POINTS["ex05"]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in ("tamper-deleted-right", "tamper-deleted-wrong", "tamper-edited-right"):
            submission = gradebook.find_submission("posenc", student)
            assert not submission.needs_manual_grade, f"{student} was left for manual grading"


def test_endless_loop_costs_only_its_exercise(graded):
    course, scores, _ = graded
    got = {ex: score for ex, (score, _) in scores["endless-loop"].items()}
    assert got["ex03"] < MAX_POINTS["ex03"]
    assert {ex: s for ex, s in got.items() if ex != "ex03"} == {ex: m for ex, m in MAX_POINTS.items() if ex != "ex03"}
    graded_nb = nbformat.read(course / "autograded" / "endless-loop" / "posenc" / "exercises.ipynb", as_version=4)
    [cell] = [c for c in graded_nb.cells if grade_id(c) == "ex03_causal_mask"]
    assert any(o.get("ename") == "CellTimeoutError" or "Interrupt" in o.get("ename", "") for o in cell.outputs), cell.outputs


@pytest.mark.parametrize("student, exercise, ename", [
    ("hostile-exit", "ex04", "KernelDied"), ("hostile-segfault", "ex06", "KernelDied"),
    ("hostile-growing-list", "ex08", "MemoryError"), ("hostile-huge-array", "ex02", "MemoryError"),
    ("hostile-sleep", "ex09", "CellTimeoutError"), ("hostile-swallow", "ex04", "CellTimeoutError"),
    ("hostile-call-exit", "ex06", "KernelDied"), ("hostile-call-memory", "ex08", "MemoryError"),
    ("hostile-call-loop", "ex09", "CellTimeoutError"), ("hostile-call-swallow", "ex03", "CellTimeoutError"),
])
def test_a_hostile_cell_costs_only_its_exercise(graded, student, exercise, ename):
    course, scores, _ = graded
    got = {ex: score for ex, (score, _) in scores[student].items()}
    assert got[exercise] < MAX_POINTS[exercise]
    assert {ex: s for ex, s in got.items() if ex != exercise} == {ex: m for ex, m in MAX_POINTS.items() if ex != exercise}
    graded_nb = nbformat.read(course / "autograded" / student / "posenc" / "exercises.ipynb", as_version=4)
    enames = [o.get("ename") for c in graded_nb.cells if c.cell_type == "code" for o in c.outputs]
    assert ename in enames, "the graded notebook shows the student what happened"


@pytest.mark.parametrize("student, exercise", [
    ("peek-import", "ex01"), ("peek-source", "ex02"), ("peek-gradebook", "ex03"), ("peek-others", "ex04"),
    ("peek-write", "ex05"),
])
def test_student_code_cannot_peek_or_write_outside_its_folder(graded, student, exercise):
    course, scores, _ = graded
    got = {ex: score for ex, (score, _) in scores[student].items()}
    assert got[exercise] < MAX_POINTS[exercise], f"{student} could do it"
    assert {ex: s for ex, s in got.items() if ex != exercise} == {ex: m for ex, m in MAX_POINTS.items() if ex != exercise}
    assert not (ROOT / "posenc_course" / "evil.py").exists()
    assert not (course / "release" / "evil.py").exists()


@pytest.mark.parametrize("student", ["fake-passes", "fake-checks", "fake-cells"])
def test_faking_the_checks_gains_nothing(graded, student):
    """numpy's comparisons replaced, the notebook's check_* helpers rebound, errors swallowed,
    or test cells blanked: the tests run outside the kernel, so the wrong answers still lose."""
    _, scores, _ = graded
    got = {ex: score for ex, (score, _) in scores[student].items()}
    assert got["ex05"] < MAX_POINTS["ex05"] and got["ex03"] < MAX_POINTS["ex03"]
    assert {ex: s for ex, s in got.items() if ex not in ("ex03", "ex05")} == {
        ex: m for ex, m in MAX_POINTS.items() if ex not in ("ex03", "ex05")}


def test_the_grading_kernel_has_a_memory_limit(tmp_path):
    from nbclient import NotebookClient
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20)")])
    NotebookClient(notebook, kernel_name="posenc-grader", timeout=60).execute()
    limit_mb = int(notebook.cells[0].outputs[0].text)
    assert 0 < limit_mb <= 8192, limit_mb


HONEST = ["reference", "blank", *(f"wrong-{label}" for label in WRONG), *(f"alt-{exercise}" for exercise in EXERCISES),
          *(f"student-{label}" for label in STUDENT_ALTERNATIVES), *(f"concept-{label}" for label in WRONG_CONCEPTS)]


def verdicts_of(notebook):
    """``{grade_id: points}`` of a notebook's test cells, as nbgrader scores their outputs (an error,
    or anything on stderr, scores 0)."""
    from nbgrader.utils import determine_grade

    return {grade_id(c): determine_grade(c)[0] for c in notebook.cells if is_test_cell(c)}


@pytest.mark.parametrize("student", HONEST)
def test_a_test_cell_means_the_same_in_autograde_and_in_the_students_own_kernel(graded, student, tmp_path):
    """Each test cell's verdict under nbgrader autograde (the judge, the sandbox) equals its verdict
    when the same graded notebook runs top to bottom in a plain python3 kernel, as a student runs it."""
    from nbclient import NotebookClient

    course, _, _ = graded
    autograded = nbformat.read(course / "autograded" / student / "posenc" / "exercises.ipynb", as_version=4)
    in_kernel = copy.deepcopy(autograded)
    NotebookClient(in_kernel, kernel_name="python3", timeout=60, allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    graded_verdicts, kernel_verdicts = verdicts_of(autograded), verdicts_of(in_kernel)
    release = nbformat.read(course / "release" / "posenc" / "exercises.ipynb", as_version=4)
    assert graded_verdicts.keys() == kernel_verdicts.keys() == {grade_id(c) for c in release.cells if is_test_cell(c)}
    differ = {gid: f"{graded_verdicts[gid]:g} points in autograde, {kernel_verdicts[gid]:g} in the kernel"
              for gid in graded_verdicts if graded_verdicts[gid] != kernel_verdicts[gid]}
    assert not differ, f"{student}: {differ}"


def test_visible_tests_fail_with_a_message_not_a_bare_assertion(graded):
    course, _, _ = graded
    graded_nb = nbformat.read(course / "autograded" / "wrong-rope_half_split" / "posenc" / "exercises.ipynb", as_version=4)
    [cell] = [c for c in graded_nb.cells if grade_id(c) == "ex05_apply_rope_test"]
    [error] = [o for o in cell.outputs if o.output_type == "error"]
    assert error.ename == "AssertionError" and "expected" in error.evalue and "got" in error.evalue, error.evalue


def test_full_exchange_cycle(tmp_path):
    """release, fetch, submit, collect, autograde, feedback, export, with Exchange.root in tmp."""
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    course = new_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    home = tmp_path / "student-home"
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\nc.CourseDirectory.course_id = 'posenc'\n")
    student_env = nbgrader_env(HOME=str(home))
    student = pwd.getpwuid(os.getuid()).pw_name  # the exchange names a submission after the OS user

    def ok(result):
        assert result.returncode == 0, result.stdout + result.stderr
        return result

    generate(course)
    ok(run_nbgrader(course, "release_assignment", "posenc"))
    ok(run_nbgrader(home, "fetch_assignment", "posenc", env=student_env))
    fetched = home / "posenc" / "exercises.ipynb"
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    nbformat.write(make_submission(answers, release_notebook=fetched), str(fetched))
    ok(run_nbgrader(home, "submit", "posenc", env=student_env))
    ok(run_nbgrader(course, "collect", "posenc"))
    assert (course / "submitted" / student / "posenc" / "exercises.ipynb").exists()
    ok(run_nbgrader(course, "autograde", "posenc"))
    ok(run_nbgrader(course, "generate_feedback", "posenc"))
    assert (course / "feedback" / student / "posenc" / "exercises.html").exists()
    ok(run_nbgrader(course, "export"))
    rows = list(csv.DictReader(open(course / "grades.csv")))
    [row] = [r for r in rows if r["student_id"] == student]
    assert float(row["score"]) == sum(MAX_POINTS.values()) == float(row["max_score"])


def test_an_interrupted_run_is_finished_by_running_it_again(tmp_path):
    """Kill autograde part-way, run it again without --force: same scores as one clean run."""
    import signal
    import subprocess
    import sys
    import time

    course = new_course(tmp_path / "course")
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    class_ = {"a-reference": {}, "b-wrong": WRONG["strict_causal"][1], "c-wrong": WRONG["rope_clockwise"][1],
              "d-reference": {}, "e-wrong": WRONG["entropy_in_bits"][1]}
    for student, functions in class_.items():
        write_submission(make_submission(answers, functions, release_notebook=release), course / "submitted", student)
    run = subprocess.Popen([sys.executable, "-m", "nbgrader", "autograde", "posenc"], cwd=course,
                           env=nbgrader_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not (course / "autograded" / "b-wrong" / "posenc" / "exercises.ipynb").exists():
        assert run.poll() is None and time.monotonic() < deadline, "autograde ended before it could be interrupted"
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)  # b-wrong is half-graded: sanitized, not yet run
    run.wait()
    result = run_nbgrader(course, "autograde", "posenc")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "left half-graded by an interrupted run" in result.stdout + result.stderr
    scores = report.exercise_scores(course / "gradebook.db")
    assert set(scores) == set(class_)
    assert_scores(scores, "a-reference", MAX_POINTS)
    assert_scores(scores, "d-reference", MAX_POINTS)
    assert_scores(scores, "b-wrong", {**MAX_POINTS, "ex03": MAX_POINTS["ex03"] - TEST_POINTS["ex03_causal_mask_test"]})
    assert scores["c-wrong"]["ex05"][0] < MAX_POINTS["ex05"] and scores["e-wrong"]["ex10"][0] < MAX_POINTS["ex10"]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert len(gradebook.assignment_submissions("posenc")) == len(class_), "one submission row per student"
