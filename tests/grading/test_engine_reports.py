"""The engine's class report and grade table on a course nobody here wrote: nbgrader's documentation course.

The course (``USER_GUIDE`` of :mod:`tests.helpers.foreign_courses`: its two students, ``hacker`` and ``bitdiddle``)
is graded once with the engine's adoption lines (docs/engine.md), plus a third student, ``blank``, who submits the
release as it is. Then ``hardened-report`` and ``hardened-scores`` (:mod:`hardened_grading.class_grading.report`,
:mod:`hardened_grading.class_grading.grade_table`) run on it with a part pattern of that course's own grade ids:
``problem1.ipynb``'s cells ``squares``, ``correct_squares``, ``squares_invalid_input`` are the part ``squares``;
``sum_of_squares``, ``correct_sum_of_squares``, ``sum_of_squares_uses_squares`` ... the part ``sum_of_squares``.

The expected totals are nbgrader's own (its ``Gradebook`` API), never the engine's; nothing the engine writes names
this course (``posenc``) or its parts' name here (``exercise``).
"""

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from nbgrader.api import Gradebook

from hardened_grading.class_grading import grade_table, report
from hardened_grading.class_grading.course import part_function

from ..helpers.foreign_courses import USER_GUIDE, nbgrader, user_guide_with_engine

ASSIGNMENT, NOTEBOOK = USER_GUIDE.assignment, "problem1"
#: Its first group names a cell's part: the function that its answer defines and its tests test.
PART_PATTERN = r"(?P<part>sum_of_squares|squares)"
PARTS = {"squares": ("squares", "correct_squares", "squares_invalid_input"),
         "sum_of_squares": ("sum_of_squares", "correct_sum_of_squares", "sum_of_squares_uses_squares",
                            "sum_of_squares_equation", "sum_of_squares_application")}
TASK = "cell-938593c4a215c6cc"  #: problem1's task cell (graded by hand): a part of its own, as the pattern misses it
STUDENTS = ("bitdiddle", "blank", "hacker")
COURSE_WORDS = re.compile(r"posenc|exercise", re.IGNORECASE)  #: what the engine's output must never say


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """nbgrader's documentation course, graded with the engine: its students and ``blank`` (the release, unchanged)."""
    folder = user_guide_with_engine(tmp_path_factory.mktemp("user_guide"))
    shutil.copytree(folder / "release" / ASSIGNMENT, folder / "submitted" / "blank" / ASSIGNMENT)
    graded = nbgrader(folder, "autograde", ASSIGNMENT)
    assert graded.returncode == 0, graded.stdout[-3000:]
    return folder


def nbgrader_totals(folder, notebook=NOTEBOOK):
    """``{student: (score, max_score)}`` of `notebook`, as nbgrader's own Gradebook API sums them."""
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        return {student: (gradebook.find_submission_notebook(notebook, ASSIGNMENT, student).score,
                          gradebook.find_submission_notebook(notebook, ASSIGNMENT, student).max_score)
                for student in STUDENTS}


def run_command(module, course, *args):
    """``python -m MODULE COURSE ARGS`` (what ``hardened-report`` and ``hardened-scores`` run); the finished process."""
    return subprocess.run([sys.executable, "-m", module, str(course), *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def reported(course):
    """The report (its text and HTML page) and the grade table of problem1, by part, from the commands."""
    done = run_command("hardened_grading.class_grading.report", course, "--notebook", NOTEBOOK,
                       "--part-pattern", PART_PATTERN)
    assert done.returncode == 0, done.stdout + done.stderr
    table = run_command("hardened_grading.class_grading.grade_table", course, "--notebook", NOTEBOOK,
                        "--part-pattern", PART_PATTERN)
    assert table.returncode == 0, table.stdout + table.stderr
    page = course / "reports" / "class_report.html"  # the course's only assignment: the plain name
    return SimpleNamespace(text=done.stdout, page=page.read_text(encoding="utf-8"), table=table.stdout)


def sections(text):
    """The parts the report's text has a section of: ``{part: its lines}``."""
    found = {}
    for block in text.split("\n\n")[1:]:
        head = re.match(r"([\w-]+): mean ", block)
        if head:
            found[head.group(1)] = block
    return found


def table_rows(table):
    """``{student: {column: value}}`` of the grade table's rows (``(max)`` included), totals as ``(score, max)``."""
    lines = table.strip().splitlines()
    columns = lines[0].split()
    rows = {}
    for line in [lines[1], *lines[3:]]:
        values = line.split()
        row = dict(zip(columns, values))
        if "/" in row["total"]:
            score, maximum = row["total"].split("/")
            row["total"] = (float(score), float(maximum))
        rows[values[0]] = row
    return rows


def test_the_report_has_one_section_per_part_that_the_pattern_names(reported):
    assert sorted(sections(reported.text)) == sorted([*PARTS, TASK]), reported.text
    for part in PARTS:
        assert f"<section id='{part}'>" in reported.page
    assert reported.page.count("data:image/png;base64,") == len(PARTS) + 1
    for cell in ("correct_squares", "squares_invalid_input", "correct_sum_of_squares", "sum_of_squares_uses_squares"):
        assert f"<section id='{cell}'>" not in reported.page, f"{cell} is in a part, not a part of its own"


def test_a_mistake_is_under_its_part_with_the_students_who_made_it(reported):
    """bitdiddle's ``squares`` and ``sum_of_squares`` start at 0: the first assert of each test fails, and is
    grouped under its part, said as the cell's own assert."""
    found = sections(reported.text)
    assert re.search(r"^\s+1 x correct_squares: failed: assert squares\(1\) == \[1\]\s+\[bitdiddle\]$",
                     found["squares"], re.M), found["squares"]
    assert re.search(r"^\s+1 x correct_sum_of_squares: failed: assert sum_of_squares\(1\) == 1\s+\[bitdiddle\]$",
                     found["sum_of_squares"], re.M), found["sum_of_squares"]
    assert "hacker" not in reported.text.split("\n\n", 1)[1], "hacker's tests pass: no mistake of theirs"


def test_the_release_s_stubs_are_not_attempted_not_mistakes(reported):
    """``blank`` submitted the release: each answer still the release's cell, so every part with tests is not
    attempted, and blank attempted nothing; its NotImplementedError is no mistake."""
    assert "attempted nothing (every answer still the stub): 1: blank" in reported.text
    for part in PARTS:
        assert "not attempted 1;" in sections(reported.text)[part]
    assert "NotImplementedError" not in reported.text and "[blank" not in reported.text and ", blank" not in reported.text


def test_without_the_release_nbgrader_s_checksums_tell_the_same_stubs(course):
    """The graded notebooks alone (no ``release/`` folder): an answer cell whose checksum is still the one nbgrader
    stored is a stub (:mod:`hardened_grading.attempts`), so ``blank`` attempted no part, and the others every
    part."""
    import nbformat

    from hardened_grading.attempts import stub_answers

    data, groups, part_of = report.ClassData({}), {}, part_function(PART_PATTERN)
    for student in STUDENTS:
        graded = nbformat.read(str(course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"), as_version=4)
        stubs = stub_answers(graded)
        assert stubs >= {"squares", "sum_of_squares"} if student == "blank" else not stubs & {"squares"}, stubs
        report.sort_notebook(graded, student, data, groups, part_of=part_of, stubs=None)
    assert {part: data.not_attempted.get(part) for part in PARTS} == {part: {"blank"} for part in PARTS}
    assert not data.started and "blank" not in {s for group in groups.values() for s in group.students}


def test_the_table_has_one_row_per_student_with_nbgrader_s_totals(course, reported):
    rows = table_rows(reported.table)
    assert sorted(rows) == sorted([*STUDENTS, "(max)"]), reported.table
    totals = nbgrader_totals(course)
    for student in STUDENTS:
        assert rows[student]["total"] == pytest.approx(totals[student]), (student, reported.table)
    assert sorted(rows["(max)"]) == sorted(["student", *PARTS, TASK, "total"])


def test_each_part_sums_its_cells_as_nbgrader_scores_them(course):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        cells = {student: {g.name: (g.score or 0.0, g.max_score)
                           for g in gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student).grades}
                 for student in STUDENTS}
    scores = grade_table.part_scores(course / "gradebook.db", ASSIGNMENT, NOTEBOOK,
                                     part_of=part_function(PART_PATTERN))
    for student in STUDENTS:
        for part, names in PARTS.items():
            assert scores[student][part] == pytest.approx(
                (sum(s for n, (s, _) in cells[student].items() if n in names),
                 sum(m for n, (_, m) in cells[student].items() if n in names))), (student, part)


def test_nothing_the_engine_writes_names_a_course_of_its_own(reported):
    for name, output in (("text", reported.text), ("page", reported.page), ("table", reported.table)):
        assert not COURSE_WORDS.search(output), (name, COURSE_WORDS.search(output).group(0))
    assert "<title>ps1: class report</title>" in reported.page and "<th>part</th>" in reported.page


def test_without_a_part_pattern_each_grade_cell_is_a_part(course):
    """The default (the course has no FeedbackSummary.part_pattern): the sections are the test cells' and other grade
    cells' own ids, which the tests above would fail on, had the pattern been ignored."""
    path, text = report.write_report(course=course, notebook=NOTEBOOK, out="reports/each-cell.html")
    assert sorted(sections(text)) == sorted({*PARTS["squares"][1:], *PARTS["sum_of_squares"][1:], TASK})
    assert "squares" not in sections(text) and path.name == "each-cell.html"


def test_an_assignment_with_several_notebooks_asks_which(course):
    done = run_command("hardened_grading.class_grading.report", course)
    assert done.returncode == 2 and "2 notebooks in" in done.stderr and "give --notebook" in done.stderr, done.stderr
    done = run_command("hardened_grading.class_grading.grade_table", course, "--notebook", NOTEBOOK,
                       "--part-pattern", "(")
    assert done.returncode == 2 and "not a regular expression" in done.stderr, done.stderr


def test_the_engine_s_own_batch_scripts_are_installed_with_it():
    from hardened_grading.class_grading import slurm

    for script in (slurm.ENGINE_SCRIPTS.grade, slurm.ENGINE_SCRIPTS.finish):
        text = Path(script).read_text(encoding="utf-8")
        assert "hardened-grade" in text and not COURSE_WORDS.search(text), script


def fake_programs(folder, names):
    """Programs of `names` that each append their name and arguments to ``calls`` and exit 0."""
    folder.mkdir(exist_ok=True)
    for name in names:
        script = folder / name
        script.write_text(f'#!/bin/bash\necho "{name} $*" >> "$(dirname "$0")/calls"\n')
        script.chmod(0o755)
    return folder


def test_the_engine_s_batch_scripts_grade_report_and_name_the_notebook(tmp_path):
    """The engine's scripts run hardened-grade (a task: its shard), nbgrader export and hardened-report with the
    notebook the submission names; without an assignment they say how to give one."""
    from hardened_grading.class_grading import slurm

    bin_folder = fake_programs(tmp_path / "bin", slurm.ENGINE_SCRIPTS.programs)
    env = {"PATH": "/usr/bin:/bin", "HARDENED_BIN": str(bin_folder), "HARDENED_COURSE": str(tmp_path),
           "HARDENED_ASSIGNMENT": "ps1", "HARDENED_NOTEBOOK": "problem1", "SLURM_CPUS_PER_TASK": "2"}
    task = subprocess.run(["bash", str(slurm.ENGINE_SCRIPTS.grade)], capture_output=True, text=True, timeout=60,
                          env={**env, "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3"})
    finish = subprocess.run(["bash", str(slurm.ENGINE_SCRIPTS.finish)], capture_output=True, text=True, timeout=60,
                            env=env)
    assert task.returncode == finish.returncode == 0, task.stderr + finish.stderr
    assert (bin_folder / "calls").read_text().splitlines() == [
        f"hardened-grade ps1 --course {tmp_path} --shard 1/3 --jobs 2",
        f"hardened-grade ps1 --course {tmp_path} --jobs 2",
        "nbgrader export --assignment=ps1 --log-level=WARN",
        f"hardened-report {tmp_path} --assignment ps1 --notebook problem1"]
    env.pop("HARDENED_ASSIGNMENT")
    refused = subprocess.run(["bash", str(slurm.ENGINE_SCRIPTS.finish)], capture_output=True, text=True, timeout=60,
                             env=env)
    assert refused.returncode == 2 and "hardened-slurm ASSIGNMENT" in refused.stderr


def test_hardened_slurm_passes_the_notebook_and_the_engine_s_variables(tmp_path, monkeypatch):
    from hardened_grading.class_grading import slurm

    monkeypatch.delenv("PGPASSFILE", raising=False)
    grade, finish = slurm.sbatch_commands(tmp_path, tasks=2, cpus=1, assignment="ps1", notebook="problem1",
                                          bin_folder="/venv/bin")
    export = next(part for part in finish if part.startswith("--export="))
    assert export == (f"--export=ALL,HARDENED_COURSE={tmp_path},HARDENED_ASSIGNMENT=ps1,HARDENED_BIN=/venv/bin,"
                      "HARDENED_SHARDS=2,HARDENED_NOTEBOOK=problem1")
    assert grade[-1] == str(slurm.ENGINE_SCRIPTS.grade) and finish[-1] == str(slurm.ENGINE_SCRIPTS.finish)


def test_the_defaults_are_the_course_s_only_assignment_and_notebook(tmp_path):
    from hardened_grading.class_grading import course as defaults
    from hardened_grading.errors import UsageError

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    (tmp_path / "source" / "ps1").mkdir(parents=True)
    (tmp_path / "source" / "ps1" / "problem1.ipynb").write_text("{}")
    assert defaults.default_assignment(tmp_path) == "ps1" and defaults.default_notebook(tmp_path, "ps1") == "problem1"
    assert defaults.configured_parts(tmp_path) == ("", "part")
    (tmp_path / "source" / "ps2").mkdir()
    (tmp_path / "source" / "ps2" / "a.ipynb").write_text("{}")
    with pytest.raises(UsageError, match=r"2 assignments in .* \(ps1, ps2\): give --assignment"):
        defaults.default_assignment(tmp_path)
    assert report.only_assignment(tmp_path) is None
    assert report.report_path(tmp_path, "ps2").name == "class_report-ps2.html"
    assert report.report_path(tmp_path, "ps1", default_assignment="ps1").name == "class_report.html"
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n"
                                                 "c.FeedbackSummary.part_pattern = '^(q\\\\d+)_'\n"
                                                 "c.FeedbackSummary.part_name = 'question'\n")
    assert defaults.configured_parts(tmp_path) == (r"^(q\d+)_", "question")


def test_the_points_given_by_hand_can_be_left_out_or_put_apart(course):
    """``part_scores(by_hand=...)``: problem1's answers graded by hand (``sum_of_squares_equation``,
    ``sum_of_squares_application``, and the task) are in their parts by default; left out with False, so that the parts
    hold the automatic points alone; in one part of their own with a name. The totals are nbgrader's each time."""
    hand = {"sum_of_squares_equation", "sum_of_squares_application", TASK}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "hacker").notebook
        assert grade_table.graded_by_hand(notebook) == hand
        hand_max = sum(c.max_score for c in [*notebook.grade_cells, *notebook.task_cells] if c.name in hand)
    part_of = part_function(PART_PATTERN)
    within = grade_table.part_scores(course / "gradebook.db", ASSIGNMENT, NOTEBOOK, part_of=part_of)
    left_out = grade_table.part_scores(course / "gradebook.db", ASSIGNMENT, NOTEBOOK, part_of=part_of, by_hand=False)
    apart = grade_table.part_scores(course / "gradebook.db", ASSIGNMENT, NOTEBOOK, part_of=part_of, by_hand="by hand")
    totals = nbgrader_totals(course)
    for student in STUDENTS:
        for scores in (within, apart):
            assert math.isclose(sum(s for s, _ in scores[student].values()), totals[student][0])
            assert math.isclose(sum(m for _, m in scores[student].values()), totals[student][1])
        assert TASK not in left_out[student] and "by hand" not in left_out[student]
        assert math.isclose(sum(m for _, m in left_out[student].values()), totals[student][1] - hand_max)
        assert apart[student]["by hand"][1] == hand_max and TASK not in apart[student]
        assert apart[student]["sum_of_squares"][1] == within[student]["sum_of_squares"][1] - hand_max + \
            within[student][TASK][1]
