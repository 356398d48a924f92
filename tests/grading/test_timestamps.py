"""A submission whose ``timestamp.txt`` is not a time is graded, with a warning that names the file and says what to
do: real ``nbgrader autograde`` of a course of one answer and one test cell, adopting the engine
(:mod:`hardened_grading.hooks.timestamps`). Stock nbgrader 0.9 fails there (``'CourseDirectory' object has no
attribute 'fail'``) and grades nothing of the submission.

Below, the reading of one file, in a temporary folder (milliseconds).
"""

import logging
from datetime import datetime
from types import SimpleNamespace

import nbformat
import pytest

from hardened_grading.hooks.timestamps import read_timestamp

from ..helpers.cells import answer_cell, grade_cell
from ..helpers.foreign_courses import adoption_lines, nbgrader, read_gradebook

ANSWER = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
TIMESTAMPS = {"on-time": "2026-11-20 10:00:00.000000 UTC", "not-a-time": "submitted on friday",
              "not-text": b"\xff\xfe\x00garbage"}


def course_notebook(answer=ANSWER):
    return nbformat.v4.new_notebook(cells=[answer_cell(answer, "double"),
                                           grade_cell("assert double(2) == 4", "double_test", 1, locked=True)])


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The course graded once, and then again without ``--force`` (nbgrader reads the timestamps again then)."""
    folder = tmp_path_factory.mktemp("timestamps")
    (folder / "nbgrader_config.py").write_text(
        "\n".join(["c = get_config()  # noqa: F821", 'c.CourseDirectory.course_id = "timestamps"',
                   adoption_lines()]) + "\n", encoding="utf-8")
    (folder / "source" / "ps1").mkdir(parents=True)
    nbformat.write(course_notebook(), str(folder / "source" / "ps1" / "p1.ipynb"))
    for student, timestamp in TIMESTAMPS.items():
        submitted = folder / "submitted" / student / "ps1"
        submitted.mkdir(parents=True)
        nbformat.write(course_notebook("def double(x):\n    return x + x\n"), str(submitted / "p1.ipynb"))
        (submitted / "timestamp.txt").write_bytes(timestamp if isinstance(timestamp, bytes) else timestamp.encode())
    generated = nbgrader(folder, "generate_assignment", "ps1")
    assert generated.returncode == 0, generated.stdout[-3000:]
    first = nbgrader(folder, "autograde", "ps1")
    again = nbgrader(folder, "autograde", "ps1")
    return SimpleNamespace(first=first, again=again, scores=read_gradebook(folder, "ps1"), folder=folder)


def test_every_submission_is_graded_whatever_its_timestamp_file_holds(graded):
    assert graded.first.returncode == 0, graded.first.stdout[-3000:]
    assert "has no attribute 'fail'" not in graded.first.stdout
    assert {student: notebooks["p1"].code_score for student, notebooks in graded.scores.items()} == {
        "on-time": 1.0, "not-a-time": 1.0, "not-text": 1.0}


def test_the_warning_names_each_file_that_is_not_a_time_and_says_what_to_do(graded):
    for student in ("not-a-time", "not-text"):
        path = graded.folder / "submitted" / student / "ps1" / "timestamp.txt"
        warned = [line for line in graded.first.stdout.splitlines() if "WARNING" in line and str(path) in line]
        assert len(warned) == 1 and "cannot be read as a time" in warned[0], graded.first.stdout
        assert "put the time the student submitted in it" in warned[0] and "--force" in warned[0], warned
    assert not [line for line in graded.first.stdout.splitlines()
                if "WARNING" in line and "on-time/ps1/timestamp.txt" in line], graded.first.stdout


def test_grading_again_without_force_reads_the_files_again_and_does_not_fail(graded):
    assert graded.again.returncode == 0, graded.again.stdout[-3000:]
    assert "has no attribute 'fail'" not in graded.again.stdout


# The reading of one file -------------------------------------------------------------------------

@pytest.mark.parametrize("content, expected, warned", [
    ("2026-11-20 10:00:00.000000 UTC", datetime(2026, 11, 20, 10), False),
    ("2026-11-20T11:00:00+01:00", datetime(2026, 11, 20, 10), False),
    ("  \n", None, False),  # nbgrader's own "Empty timestamp file" (not a time to fix: no submission time)
    ("submitted on friday", None, True),
    (b"\xff\xfe\x00garbage", None, True),
    ("99999-99-99 99:99", None, True),
])
def test_a_timestamp_file_is_its_time_or_none_with_a_warning(tmp_path, caplog, content, expected, warned):
    path = tmp_path / "timestamp.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with caplog.at_level(logging.WARNING):
        assert read_timestamp(str(path), logging.getLogger("test")) == expected
    assert any("cannot be read as a time" in r.getMessage() and str(path) in r.getMessage()
               for r in caplog.records) is warned


def test_a_timestamp_file_that_is_a_link_is_not_followed(tmp_path, caplog):
    (tmp_path / "elsewhere.txt").write_text("2026-11-20 10:00:00 UTC")
    (tmp_path / "timestamp.txt").symlink_to(tmp_path / "elsewhere.txt")
    with caplog.at_level(logging.WARNING):
        assert read_timestamp(str(tmp_path / "timestamp.txt"), logging.getLogger("test")) is None
    assert "symbolic link" in caplog.text


def test_no_timestamp_file_is_no_time_and_no_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        assert read_timestamp(str(tmp_path / "timestamp.txt"), logging.getLogger("test")) is None
    assert not caplog.records
