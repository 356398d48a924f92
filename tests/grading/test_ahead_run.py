"""The next submission's kernel started ahead (:mod:`hardened_grading.sandbox.ahead`), in a real ``posenc-grade`` run with
one worker: every submission but the first gets the kernel started while the one before it was graded, and scores as
it must. The hand-over itself, on folders and processes made in memory, is tests/unit/test_ahead.py's.
"""

import sys

import pytest

from hardened_grading.hooks.submission import GRADED_MARKER

from ..helpers.grade_class import assert_expected_scores, db_url_of, make_course, posenc_grade
from ..helpers.grading import STUDENTS

# A real run ------------------------------------------------------------------------------------------

CLASS = [STUDENTS[name] for name in ("reference", "wrong-strict_causal", "hostile-exit", "blank")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
def test_one_worker_grades_each_next_submission_in_the_kernel_it_started_ahead(tmp_path):
    """One worker, four students in turn: the three after the first each get the kernel started while the one
    before was graded (the one that crashes its kernel included, and the one after it); the scores are those the
    table says; no staging folder is left."""
    course = make_course(tmp_path / "course", CLASS)
    result = posenc_grade(course, "--jobs", "1")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert_expected_scores(db_url_of(course), CLASS)
    log = next((course / "logs").glob("grade-*.log")).read_text()
    used = sorted(line.split("'")[1] for line in log.splitlines() if "the kernel started ahead is used" in line)
    first = sorted(s.name for s in CLASS)[0]
    assert used == sorted(s.name for s in CLASS if s.name != first), log[-3000:]
    assert "could not be started ahead" not in log and "did not answer" not in log, log[-3000:]
    assert sorted(p.name for p in (course / "autograded").iterdir()) == sorted(s.name for s in CLASS)
    assert all((course / "autograded" / s.name / "posenc" / GRADED_MARKER).exists() for s in CLASS)
    modes = {s.name: (course / "autograded" / s.name / "posenc").stat().st_mode for s in CLASS}
    assert set(modes.values()) == {modes[first]}, f"a kernel's staging folder keeps nbgrader's folder mode: {modes}"
