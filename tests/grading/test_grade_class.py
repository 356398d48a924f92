"""Grading a class in parallel (``posenc-grade``): the same scores as serial ``nbgrader autograde``.

Each test is one scenario in a temporary course directory, in the shape of nbgrader's own test suite:
real submissions (right, wrong, hostile and broken ones, from :mod:`tests.helpers.grading`'s table), the
real command in a subprocess, and assertions on the gradebook, SQLite or a real PostgreSQL server.

The PostgreSQL server is Debian's ``postgresql`` (``make install`` installs it as root), started here
with ``initdb`` and ``pg_ctl`` in a temporary folder, on a Unix socket only, and stopped afterwards.
Without it, those tests are skipped and say why.

The runs of the command itself (interrupted, killed, selected, reported) are
:mod:`tests.grading.test_grade_class_runs`, whose tests share nothing and run on any worker.
"""

import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest


from posenc_course.course import generate, load_config, nbgrader_env, new_course
from posenc_course.submissions import reference_answers

from ..helpers import children
from ..helpers.children import run_nbgrader
from ..helpers.grade_class import db_url_of, grades, make_course, posenc_grade, serial_scores
from ..helpers.grading import STUDENTS
from ..helpers.postgres import postgresql  # noqa: F401 (a fixture: this module's own server)

# Right, wrong, partly right, blank, tampered, hostile (each of its own kind) and unreadable submissions.
CLASS = [STUDENTS[name] for name in (
    "reference", "blank", "partial-one-check", "wrong-rope_half_split", "wrong-strict_causal", "alt-ex05",
    "tamper-deleted-wrong", "hostile-exit", "hostile-segfault", "hostile-call-memory", "hostile-huge-array",
    "peek-gradebook", "fake-checks", "malformed", "bad-binary", "renamed")]


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The class graded by plain ``nbgrader autograde``, one submission after another: the reference."""
    return serial_scores(tmp_path_factory.mktemp("serial") / "course", CLASS)


# A PostgreSQL server of the test's own (tests/helpers/postgres.py) ------------------------------------

def database(backend, request):
    return request.getfixturevalue("postgresql")() if backend == "postgresql" else None


# The scenarios -------------------------------------------------------------------------------------

def test_parallel_scores_equal_serial_scores(serial, tmp_path):
    """Two workers on one gradebook give every student the very scores of a serial run, hostile and broken
    submissions included; one line per submission when the output is not a terminal; a summary. (On a
    PostgreSQL gradebook: the shards' test below, whose every shard runs two workers.)"""
    course = make_course(tmp_path / "course", CLASS)
    result = posenc_grade(course, "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr[-5000:]
    scores, rows = grades(db_url_of(course))
    assert scores == serial
    assert rows == len(CLASS), "one submission row per student"
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == len(CLASS) and all(": graded in " in line for line in lines), result.stderr
    assert {line.split("] ")[1].split(":")[0] for line in lines} == {s.name for s in CLASS}
    assert f"graded:  {len(CLASS)}" in result.stdout and "failed:  0" in result.stdout, result.stdout
    log = Path(result.stdout.split("log:")[1].strip())
    assert log.parent == course / "logs" and log.read_text().count("\n=== ") == len(CLASS)
    assert "database is locked" not in log.read_text()


def test_shards_on_one_postgresql_gradebook_equal_a_serial_run(serial, postgresql, tmp_path):
    """Three shards started at once, as a Kubernetes Indexed Job starts them, each grading its part of the
    class with two workers into one PostgreSQL gradebook: together, the scores of a serial run."""
    course = make_course(tmp_path / "course", CLASS, postgresql())
    shards = [children.popen([sys.executable, "-m", "posenc_course.instructor.grade", "--shard", f"{i}/3", "--jobs", "2"],
                             cwd=course, env=nbgrader_env(), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for i in range(3)]
    outputs = [shard.communicate(timeout=900) for shard in shards]
    assert [shard.returncode for shard in shards] == [0, 0, 0], outputs
    parts = [int(out.split(" submissions of posenc")[0].rsplit(" ", 1)[1]) for out, _ in outputs]
    assert sum(parts) == len(CLASS) and max(parts) - min(parts) <= 1, parts
    scores, rows = grades(db_url_of(course))
    assert scores == serial and rows == len(CLASS)
    assert len(list((course / "logs").glob("grade-*-shard-*-of-3.log"))) == 3


# The gradebook under load: far more writers than a class ever has ---------------------------------

def gradebook_writer(db_url, students, errors):
    """What nbgrader's autograde does to the gradebook for each of `students`: open it six times, create
    the student and the submission, and write every grade (each student's own scores)."""
    import warnings

    from nbgrader.api import Gradebook

    warnings.filterwarnings("ignore")
    try:
        for student in students:
            for step in ("student", "assignment", "submission", "notebook", "assignment", "grades"):
                with Gradebook(db_url, "posenc") as gradebook:
                    if step == "student":
                        gradebook.update_or_create_student(student)
                    elif step == "submission":
                        gradebook.update_or_create_submission("posenc", student)
                    elif step == "grades":
                        notebook = gradebook.find_submission_notebook("exercises", "posenc", student)
                        for grade in notebook.grades:
                            grade.auto_score = expected_score(student, grade.name, grade.max_score)
                        gradebook.db.commit()
                    else:
                        gradebook.find_assignment("posenc")
    except Exception as error:  # reported to the test, which shows them all
        errors.put(f"{type(error).__name__}: {error}")


def expected_score(student, cell, max_score):
    return max_score * (sum(map(ord, student + cell)) % 5) / 4


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_gradebook_loses_nothing_under_many_concurrent_writers(backend, request, tmp_path):
    """Eight processes, on two cores, write 120 submissions' grades as autograde writes them, into the URL
    posenc-grade gives its workers: no error (no 'database is locked'), no row lost, every score right."""
    course = make_course(tmp_path / "course", [], database(backend, request))
    db_url = db_url_of(course)
    context = multiprocessing.get_context("spawn")
    errors = context.Queue()
    writers = [context.Process(target=gradebook_writer,
                               args=(db_url, [f"w{w}-s{s:02d}" for s in range(15)], errors)) for w in range(8)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=600)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert not found, found
    assert [writer.exitcode for writer in writers] == [0] * 8
    scores, rows = grades(db_url)
    assert rows == 120 and len(scores) == 120
    from nbgrader.api import Gradebook

    with Gradebook(db_url, "posenc") as gradebook:
        maximum = {cell.name: cell.max_score for cell in gradebook.find_notebook("exercises", "posenc").grade_cells}
    for student, cells in scores.items():
        assert cells == {cell: expected_score(student, cell, maximum[cell]) for cell in maximum}, student
