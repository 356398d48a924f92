"""The assignment grades right: real nbgrader commands, real kernels, a real SQLite gradebook.

One class of students is graded in a single run of the course's parallel grader, ``posenc-grade --jobs
2`` (module fixture), which runs nbgrader's autograde in each worker: the large class is graded as an
instructor grades one (``tests/grading/test_grade_class.py`` proves it scores as serial ``nbgrader autograde``
does, and the tests below still run serial ``nbgrader autograde`` end to end). The class is one table, :data:`CLASS`: each row names a student, says how the submission is built, which
exercises must lose points, and what the graded notebook and the log must say. The fixture is made
from the table, and the table-driven tests assert on the gradebook, in the shape of nbgrader's own
test suite. The rows: the reference answers, the blank release, every wrong answer of
``wrong_solutions``, an alternative correct answer per exercise and the ways students write them,
tampered tests, hostile cells and answers (crashes, memory bombs, endless loops, peeking, faked
checks) and malformed files.
"""

import copy
import csv
import os
import pwd
import re
import sys
from types import SimpleNamespace

import nbformat
import pytest

from posenc_course import report
from posenc_course.course import ROOT, generate, nbgrader_env, new_course
from posenc_course.layout import (GRADED, NOTEBOOK, SOURCE_NOTEBOOK, points_by_hand)
from posenc_course.submissions import (grade_id, is_test_cell, is_written_answer, make_submission,
                                      reference_answers)
from posenc_solutions import EXERCISES

from ..helpers import children
from ..helpers.children import run_nbgrader
from ..helpers.grading import (ALL, CLASS, MAX_POINTS, SOURCE, STUDENTS, SUBMISSIONS, SUBMITTED_AS, TEST_POINTS,
                               Student, Submission, answered, assert_row_scores, assert_scores, grade_together,
                               grade_whole_class, log_lines, run_in_plain_kernel, score_problems, shown, some, submit,
                               verdicts_of)
from ..helpers.wrong_solutions import WRONG


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade the whole CLASS in one run; yield (course, scores, the run's result with its log)."""
    course = new_course(tmp_path_factory.mktemp("course"))
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / "exercises.ipynb"))
    for submission in SUBMISSIONS:
        submit(submission, kit)
    result = grade_whole_class(course, "posenc")
    yield course, report.exercise_scores(course / "gradebook.db"), result



@pytest.mark.parametrize("student", CLASS, ids=lambda s: s.name)
def test_each_student_scores_what_the_table_says(graded, student):
    _, scores, _ = graded
    assert_row_scores(scores, student, SUBMISSIONS)


@pytest.mark.parametrize("student", [s for s in CLASS if s.says], ids=lambda s: s.name)
def test_the_graded_notebook_tells_the_student_what_happened(graded, student):
    course, _, _ = graded
    graded_nb = nbformat.read(course / "autograded" / student.name / "posenc" / NOTEBOOK, as_version=4)
    assert student.says in shown(graded_nb)


@pytest.mark.parametrize("student", [s for s in CLASS if s.logs], ids=lambda s: s.name)
def test_the_log_says_why_a_submission_was_graded_as_it_was(graded, student):
    _, _, result = graded
    lines = log_lines(result, student.name)
    assert any(student.logs in line for line in lines), lines or "no log line about this student"


def test_the_score_check_can_fail():
    """The table's rules reject what they must: a full score where points must be lost, and the reverse."""
    full = dict(MAX_POINTS)
    assert score_problems(full, {}) == []
    assert score_problems(full, some("ex05")) and score_problems(full, {"ex05": 1})
    assert score_problems({**full, "ex03": 0}, some("ex05"))
    assert score_problems({exercise: 0 for exercise in MAX_POINTS}, ALL) == []


def test_rows_share_a_submission_only_when_neither_can_change_the_others_score():
    """grade_together keeps apart rows of one exercise, rows where one's code names what the other's
    defines (a call, a helper of the same name), and rows the notebook or the log must speak of."""
    def row(name, functions=None, answers=None, **kwargs):
        return Student(name, answered(functions, answers), **kwargs)

    causal = "def causal_mask(query_positions, key_positions):\n    return _shared(query_positions)"
    rope = "def rope_frequencies(head_dim, base=10000.0):\n    return _shared(head_dim)"
    rows = [row("a-helper", {"causal_mask": causal + "\n\n\ndef _shared(x):\n    return x"}),  # ex03
            row("b-helper", {"rope_frequencies": rope + "\n\n\ndef _shared(x):\n    return -x"}),  # ex05
            row("c-ex01", WRONG["exponent_i_over_d"][1]), row("d-ex03", WRONG["strict_causal"][1]),
            row("e-ex01", WRONG["table_starts_at_1"][1]),
            row("f-calls-ex03", {"rotation_2d": "def rotation_2d(angle):\n    return causal_mask(angle, angle)"}),
            row("g-says", WRONG["rope_clockwise"][1], says="something"),
            Student("h-edited", answered(edit=lambda notebook, kit: notebook)),
            row("i-concept", answers={"ex07_ratio_answer": "ex07_ratio = 2.0"}),
            row("j-honest", WRONG["rope_clockwise"][1], honest=True)]  # ex05, but checked in a plain kernel too
    together = {s.name: [r.name for r in s.rows] for s in grade_together(rows, SOURCE_NOTEBOOK)}
    assert together == {"g-says": ["g-says"], "h-edited": ["h-edited"],
                        "together-01": ["a-helper", "c-ex01", "i-concept"],
                        "together-02": ["b-helper", "d-ex03", "e-ex01"], "f-calls-ex03": ["f-calls-ex03"],
                        "j-honest": ["j-honest"]}, together
    assert sorted(row.name for s in SUBMISSIONS for row in s.rows) == sorted(STUDENTS), "each row in one submission"
    assert all(SUBMITTED_AS[row.name].honest for row in CLASS if row.honest), "every honest row's verdicts are checked"

    # A row is held to its own exercises and to those no row of its submission changes.
    submissions = grade_together(rows, SOURCE_NOTEBOOK)
    a, c = rows[0], rows[2]  # together-01, with i-concept: ex03, ex01 and ex07 changed
    full = {exercise: (points, points) for exercise, points in MAX_POINTS.items()}
    ex03_lost = {"together-01": {**full, "ex03": (0, MAX_POINTS["ex03"])}}
    a, c = Student("a-helper", a.build, loses=some("ex03")), Student("c-ex01", c.build, loses=some("ex01"))
    submissions = [Submission(s.name, tuple({"a-helper": a, "c-ex01": c}.get(r.name, r) for r in s.rows))
                   for s in submissions]
    assert_row_scores(ex03_lost, a, submissions)  # ex01 and ex07 are the other rows'
    own_kept = r"c-ex01 \(graded in together-01, whose other rows change ex03, ex07\): ex01: \S+ of \S+, but it must lose"
    with pytest.raises(AssertionError, match=own_kept):
        assert_row_scores(ex03_lost, c, submissions)  # its own exercise kept full marks
    with pytest.raises(AssertionError, match="ex02: 0 of"):
        assert_row_scores({"together-01": {**ex03_lost["together-01"], "ex02": (0, MAX_POINTS["ex02"])}}, a, submissions)


@pytest.mark.parametrize("assignment, notebook", [*((a, NOTEBOOK) for a in GRADED), ("theory", "theory.ipynb")])
def test_committed_release_is_what_generate_assignment_makes(tmp_path, assignment, notebook):
    course = new_course(tmp_path)
    result = run_nbgrader(course, "generate_assignment", assignment, "--force")
    assert result.returncode == 0, result.stdout + result.stderr
    made = course / "release" / assignment / notebook
    assert made.read_text() == (ROOT / "release" / assignment / notebook).read_text(), (
        "release/ is stale: run `make release`")


def test_committed_source_notebook_is_built_from_the_spec_and_the_package():
    from posenc_course.authoring import notebook
    assert notebook.main(["--check"]) == 0, "a source notebook is stale: run `make notebook`"


@pytest.mark.parametrize("assignment", GRADED)
def test_release_holds_no_solution_and_no_hidden_test(assignment):
    text = (ROOT / "release" / assignment / NOTEBOOK).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "Model answer"):
        assert marker not in text
    release = nbformat.reads(text, as_version=4)
    source = nbformat.read(ROOT / "source" / assignment / NOTEBOOK, as_version=4)
    hidden_lines = set()
    for cell in source.cells:
        for block in re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", cell.source, re.S):
            hidden_lines |= {line.strip() for line in block.splitlines() if len(line.strip()) > 25}
    for answer in reference_answers(ROOT / "source" / assignment / NOTEBOOK).values():
        # the body of every reference answer: lines after its docstring
        hidden_lines |= {line.strip() for line in answer.split('"""')[-1].splitlines() if len(line.strip()) > 25}
    released_lines = {line.strip() for c in release.cells if c.cell_type == "code" for line in c.source.splitlines()}
    leaked = sorted(hidden_lines & released_lines)
    assert not leaked, f"release shows hidden tests or solution code: {leaked[:5]}"
    stubs = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    answers_in_source = [c for c in source.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    assert len(stubs) == len(answers_in_source)
    # A written reflection's stub says its points, from its metadata, and holds nothing of the model answer.
    written = [c for c in release.cells if is_written_answer(c)]
    assert [grade_id(c) for c in written] == [grade_id(c) for c in source.cells if is_written_answer(c)] and written
    for cell in written:
        assert cell.source == f"*Write your answer here.* ({cell.metadata['nbgrader']['points']:g} points, graded by hand; " \
            "the model answer and what earns its points come with your feedback after the due date.)", cell.source
    # A function's stub raises "not answered yet" when called; a concept answer is `name = ...`, which
    # its test cell calls "not answered yet" (engine/hardened_grading/preprocessors/release.py).
    concept_stubs = [c for c in stubs if re.fullmatch(r"\w+ = \.\.\.  # YOUR ANSWER HERE", c.source.strip())]
    assert [grade_id(c) for c in concept_stubs] == [grade_id(c) for c in stubs if grade_id(c).endswith("_answer")]
    assert all('raise NotImplementedError("not answered yet' in c.source for c in stubs if c not in concept_stubs)


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
    assert set(scores) == students == {submission.name for submission in SUBMISSIONS}
    for student in students:
        assert (course / "autograded" / student / "posenc" / "exercises.ipynb").exists(), student


def test_bad_files_are_left_untouched(graded):
    course, _, _ = graded
    assert (course / "submitted" / "bad-empty" / "posenc" / "exercises.ipynb").read_text() == ""
    assert (course / "submitted" / "bad-binary" / "posenc" / "exercises.ipynb").read_bytes() == bytes(range(256)) * 8


def test_a_renamed_notebook_is_kept_as_sent(graded):
    course, _, _ = graded
    assert (course / "submitted" / "renamed" / "posenc" / "exercises (1).ipynb").exists()


def test_no_submission_is_left_for_manual_grading(graded):
    """Deleted or edited tests, bad files and crashes are all graded automatically: no test cell waits for a person.
    The written reflections do, where a student wrote one (nbgrader's manually graded answers), and only they."""
    from nbgrader.api import Gradebook

    course, _, _ = graded
    reflections = {grade_id(c) for c in SOURCE.cells if is_written_answer(c)}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        waiting = {(submission.student.id, grade.name)
                   for submission in gradebook.assignment_submissions("posenc")
                   for notebook in submission.notebooks for grade in notebook.grades if grade.needs_manual_grade}
    assert {name for _, name in waiting} <= reflections, sorted(waiting)
    assert (SUBMITTED_AS["reference"].name, "ex01_reflection") in waiting, "a reflection written waits for its grader"


def test_code_that_writes_outside_its_folder_leaves_nothing(graded):
    course, _, _ = graded
    assert not (ROOT / "posenc_course" / "evil.py").exists()
    assert not (course / "release" / "evil.py").exists()


def test_at_least_two_wrong_answers_per_exercise():
    per_exercise = {ex: sum(1 for e, _ in WRONG.values() if e == ex) for ex in MAX_POINTS}
    assert min(per_exercise.values()) >= 2, per_exercise


def test_the_grading_kernel_has_a_memory_limit(tmp_path):
    from traitlets.config import Config

    from hardened_grading.preprocessors.execute import ResilientExecute
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20)")])
    config = Config()
    config.ResilientExecute.memory_mb = 1000
    ResilientExecute(config=config, kernel_name="hardened-grading", timeout=60).preprocess(
        notebook, {"metadata": {"path": str(tmp_path)}})
    assert int(notebook.cells[0].outputs[0].text) == 1000


@pytest.mark.parametrize("mode", ["immediate", "graceful"])
def test_a_graded_kernel_is_stopped_as_the_setting_says(tmp_path, mode):
    """By default (``shutdown_kernel = "immediate"``) a kernel is killed once its notebook is graded, so that the
    next submission does not wait for it to shut down; ``"graceful"`` asks it to shut down and waits. Either
    way it is gone when grading returns. (What it saves is measured by ``make bench``, not here.)"""
    from traitlets.config import Config

    from hardened_grading.preprocessors.execute import ResilientExecute
    from hardened_grading.processes import ended

    stops = []

    class Watched(ResilientExecute):
        def create_kernel_manager(self):
            km = super().create_kernel_manager()
            shutdown = km.shutdown_kernel

            async def shutdown_kernel(now=False, restart=False):
                stops.append((now, km.provisioner.process.pid))
                return await shutdown(now=now, restart=restart)

            km.shutdown_kernel = shutdown_kernel
            return km

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    config = Config()
    if mode == "graceful":
        config.ResilientExecute.shutdown_kernel = "graceful"
    Watched(config=config, kernel_name="hardened-grading", timeout=60).preprocess(
        notebook, {"metadata": {"path": str(tmp_path)}})
    assert notebook.cells[0].outputs[0].text == "42\n"
    [(now, pid)] = stops
    assert now == (mode == "immediate")
    assert ended(pid)


HONEST = [submission.name for submission in SUBMISSIONS if submission.honest]


@pytest.mark.parametrize("student", HONEST)
def test_a_test_cell_means_the_same_in_autograde_and_in_the_students_own_kernel(graded, student, tmp_path):
    """Each test cell's verdict under nbgrader autograde (the judge, the sandbox) agrees with its verdict
    when the same graded notebook runs top to bottom in a plain python3 kernel, as a student runs it:
    full marks in one exactly when full marks in the other (where a check fails, autograde gives the
    share of checks that passed, and the kernel stops at the first failure)."""
    course, _, _ = graded
    autograded = nbformat.read(course / "autograded" / student / "posenc" / "exercises.ipynb", as_version=4)
    in_kernel = run_in_plain_kernel(autograded, tmp_path)
    graded_verdicts, kernel_verdicts = verdicts_of(autograded), verdicts_of(in_kernel)
    release = nbformat.read(course / "release" / "posenc" / "exercises.ipynb", as_version=4)
    assert graded_verdicts.keys() == kernel_verdicts.keys() == {grade_id(c) for c in release.cells if is_test_cell(c)}
    full = {gid: points for gid, points in TEST_POINTS.items()}
    differ = {gid: f"{graded_verdicts[gid]:g} points in autograde, {kernel_verdicts[gid]:g} in the kernel"
              for gid in graded_verdicts
              if (graded_verdicts[gid] == full[gid]) != (kernel_verdicts[gid] == full[gid])}
    assert not differ, f"{student}: {differ}"


def test_visible_tests_fail_with_a_message_not_a_bare_assertion(graded):
    course, _, _ = graded
    folder = course / "autograded" / SUBMITTED_AS["wrong-rope_half_split"].name / "posenc"
    graded_nb = nbformat.read(folder / "exercises.ipynb", as_version=4)
    [cell] = [c for c in graded_nb.cells if grade_id(c) == "ex05_apply_rope_test"]
    failed = [line for o in cell.outputs if o.output_type == "stream" for line in o.text.splitlines()
              if line.strip().startswith("FAILED")]
    assert failed and all("expected" in line and "got" in line for line in failed), failed


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
    # The automatic points in full; the reflections' wait for a grader, who has given none yet.
    assert float(row["score"]) == sum(MAX_POINTS.values())
    assert float(row["max_score"]) == sum(MAX_POINTS.values()) + points_by_hand(SOURCE)


def test_an_interrupted_run_is_finished_by_running_it_again(tmp_path):
    """Kill autograde part-way, run it again without --force: same scores as one clean run."""
    import signal
    import subprocess
    import sys
    import time

    course = new_course(tmp_path / "course")
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / "exercises.ipynb"))
    class_ = [Student("a-reference", answered()),
              Student("b-wrong", answered(WRONG["strict_causal"][1]), loses=some("ex03")),
              Student("c-wrong", answered(WRONG["rope_clockwise"][1]), loses=some("ex05")),
              Student("d-reference", answered()),
              Student("e-wrong", answered(WRONG["entropy_in_bits"][1]), loses=some("ex10"))]
    for student in class_:
        submit(student, kit)
    run = children.popen([sys.executable, "-m", "nbgrader", "autograde", "posenc"], cwd=course,
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
    assert set(scores) == {student.name for student in class_}
    for student in class_:
        assert_scores(scores, student.name, student.loses)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert len(gradebook.assignment_submissions("posenc")) == len(class_), "one submission row per student"


METADATA_CHANGES = {
    "valid": lambda meta: None,
    "points not a number": lambda meta: meta.update(points="three"),
    "negative points": lambda meta: meta.update(points=-1),
    "no grade_id": lambda meta: meta.pop("grade_id"),
    "an unknown key": lambda meta: meta.update(extra=1),
    "grade not a boolean": lambda meta: meta.update(grade="yes"),
    "an older schema": lambda meta: meta.update(schema_version=2),
    "a newer schema": lambda meta: meta.update(schema_version=9),
}


@pytest.mark.parametrize("change", METADATA_CHANGES, ids=str)
def test_the_faster_metadata_check_gives_nbgraders_verdict(change):
    """hardened_grading.preprocessors.metadata.CheckCellMetadata (its schema checked once) accepts and rejects exactly what
    nbgrader's does, with the same error."""
    from nbgrader.nbgraderformat import MetadataValidator

    from hardened_grading.preprocessors.metadata import OnceCheckedSchemaValidator

    def verdict(validator):
        cell = copy.deepcopy(next(c for c in SOURCE.cells if c.metadata.get("nbgrader", {}).get("grade")))
        METADATA_CHANGES[change](cell.metadata.nbgrader)
        try:
            validator.validate_cell(cell)
        except Exception as error:  # the verdict is the error's type and message
            return type(error).__name__, str(error)
        return "valid"

    expected = verdict(MetadataValidator())
    assert (expected == "valid") == (change == "valid")
    assert verdict(OnceCheckedSchemaValidator()) == expected


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kernel_folders_of_graders_that_are_gone_are_removed(tmp_path, monkeypatch):
    """A grader killed outright cannot remove its kernels' private folders: the next run removes those of
    graders that are gone, and leaves a live grader's (another course grading at the same time) alone."""
    import subprocess
    import tempfile

    from hardened_grading.hooks.unfinished import KERNEL_FOLDER, remove_kernel_folders

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ended = subprocess.Popen(["true"])
    ended.wait()
    # a grader killed with its command: exited, and not yet reaped by whoever inherits it (it still has a /proc/PID)
    zombie = subprocess.Popen(["true"])
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)
    gone, unreaped, alive, other = (
        tmp_path / f"{KERNEL_FOLDER}{ended.pid}-x1", tmp_path / f"{KERNEL_FOLDER}{zombie.pid}-x4",
        tmp_path / f"{KERNEL_FOLDER}{os.getpid()}-x2", tmp_path / "unrelated-7-x3")
    for folder in (gone, unreaped, alive, other):
        folder.mkdir()
        (folder / "kernel.json").write_text("{}")
    remove_kernel_folders()
    zombie.wait()
    assert not gone.exists() and not unreaped.exists() and alive.exists() and other.exists()
    remove_kernel_folders(os.getpid())  # a worker about to end removes its own
    assert not alive.exists() and other.exists()
