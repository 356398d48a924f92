"""Grading a class on a real Slurm cluster: ``deploy/slurm/`` submitted by ``python -m posenc_course.slurm``.

A one-node cluster (Debian's slurmctld, slurmd and munge, as root, on the loopback:
:mod:`posenc_course.qa.slurm_cluster`) runs the array of shards and the job that finishes the class, over a PostgreSQL gradebook of the test's own
(:func:`tests.helpers.postgres.postgresql`) whose role logs in with a password, read from a password file. The
class is right, wrong, blank, hostile and unreadable submissions; each run's scores are compared, grade cell by
grade cell, with serial ``nbgrader autograde``'s. Without root or Slurm, the tests are skipped and say why.
"""

import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from posenc_course import slurm
from posenc_course.course import nbgrader_env
from posenc_course.qa.slurm_cluster import one_node_cluster, processes_naming, program, unavailable

from ..helpers.grade_class import grades, make_course, serial_scores
from ..helpers.postgres import postgresql, postgresql_programs  # noqa: F401 (a fixture, this module's own server)
from ..helpers.grading import STUDENTS

# Right, wrong, partly right, blank, an alternative, a kernel killer, a segfault and an unreadable file.
SLURM_CLASS = [STUDENTS[name] for name in (
    "reference", "blank", "partial-one-check", "wrong-rope_half_split", "alt-ex05", "hostile-exit",
    "hostile-segfault", "malformed")]
PASSWORD = "s3cret-grader-pw"
ROLE = "grader"
FINISHED_WITHIN = 900  #: seconds for a class of eight to be graded on one node: about a minute on two idle cores


@pytest.fixture(scope="module")
def cluster():
    why = unavailable()
    if why:
        pytest.skip(why)
    with one_node_cluster() as env:
        yield env


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The class graded by plain serial ``nbgrader autograde``, on SQLite: the scores to match."""
    return serial_scores(tmp_path_factory.mktemp("serial") / "course", SLURM_CLASS)


@pytest.fixture
def gradebook(postgresql, tmp_path, monkeypatch):  # noqa: F811
    """A new PostgreSQL database owned by a role that must log in with a password; the URL has none. The password
    is in a password file (mode 0600) that PGPASSFILE names, in this test's environment and so in the jobs'."""
    url = postgresql()
    folder = parse_qs(urlparse(url).query)["host"][0]
    database = urlparse(url).path.lstrip("/")
    psql = [str(postgresql_programs() / "psql"), "-h", folder, "-U", "posenc", "-d", database, "-v",
            "ON_ERROR_STOP=1", "-q"]
    subprocess.run([*psql, "-c", f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN "
                    f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'; END IF; END $$;",
                    "-c", f"ALTER DATABASE {database} OWNER TO {ROLE}", "-c", f"GRANT ALL ON SCHEMA public TO {ROLE}"],
                   check=True, capture_output=True, text=True, timeout=60)
    hba = Path(folder) / "data" / "pg_hba.conf"
    if f"local all {ROLE} scram-sha-256" not in hba.read_text():
        hba.write_text(f"local all {ROLE} scram-sha-256\n" + hba.read_text())
        subprocess.run([*psql, "-c", "SELECT pg_reload_conf()"], check=True, capture_output=True, timeout=60)
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"*:*:{database}:{ROLE}:{PASSWORD}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    return f"postgresql://{ROLE}@/{database}?host={folder}"


def submit(course, cluster, *args):
    env = {**nbgrader_env(), **{k: v for k, v in cluster.items() if k in ("SLURM_CONF",)}}
    return subprocess.run([sys.executable, "-m", "posenc_course.slurm", *args], cwd=course, env=env,
                          capture_output=True, text=True, timeout=FINISHED_WITHIN)


def jobs_running(cluster, *jobs):
    return subprocess.run([program("squeue"), "-h", "-j", ",".join(jobs), "-o", "%i %T"], env=cluster,
                          capture_output=True, text=True, timeout=30).stdout.split()


def shard_logs(course, count):
    """``{shard: [student, ...]}`` graded by each array task, from posenc-grade's logs."""
    found = {}
    for log in (course / "logs").glob(f"grade-*-shard-*-of-{count}.log"):
        shard = int(re.search(r"-shard-(\d+)-of-", log.name).group(1))
        found.setdefault(shard, []).extend(re.findall(r"^=== (\S+): graded in ", log.read_text(), re.M))
    return found


def test_the_password_is_needed_and_read_from_the_file(gradebook, monkeypatch):
    """The role cannot log in without the password file: the runs below prove that the jobs read it."""
    from sqlalchemy import create_engine, text

    monkeypatch.delenv("PGPASSFILE")
    with pytest.raises(Exception, match="password"):
        with create_engine(gradebook).connect() as connection:
            connection.execute(text("select 1"))


def test_an_array_of_two_tasks_grades_the_class_as_serial_nbgrader(cluster, serial, gradebook, tmp_path):
    course = make_course(tmp_path / "course", SLURM_CLASS, gradebook)
    started = time.monotonic()
    done = submit(course, cluster, "--tasks", "2", "--cpus", "1", "--wait")
    seconds = time.monotonic() - started
    outputs = "".join(p.read_text() for p in (course / "logs").glob("slurm-*.out"))
    assert done.returncode == 0, done.stdout + done.stderr + outputs
    print(f"{len(SLURM_CLASS)} submissions, 2 array tasks of 1 CPU and the finish job, in {seconds:.0f} s\n"
          + done.stdout)

    scores, rows = grades(gradebook)
    assert scores == serial, "each grade cell as serial nbgrader autograde scores it"
    assert rows == len(SLURM_CLASS)
    by_task = shard_logs(course, 2)
    assert sorted(by_task) == [0, 1] and all(by_task.values()), by_task
    graded = [student for students in by_task.values() for student in students]
    assert sorted(graded) == sorted(s.name for s in SLURM_CLASS), "every submission graded once, by one task"
    finish = next((course / "logs").glob("slurm-*-finish.out")).read_text()
    assert "graded:  0" in finish and f"skipped: {len(SLURM_CLASS)} already graded" in finish, finish

    csv = (course / "grades.csv").read_text().splitlines()
    assert len(csv) == 1 + len(SLURM_CLASS) and all(s.name in "".join(csv) for s in SLURM_CLASS), csv
    assert "<html" in (course / "reports" / "class_report.html").read_text()
    for path in [*(course / "logs").iterdir(), course / "grades.csv", course / "nbgrader_config.py"]:
        assert PASSWORD not in path.read_text(errors="replace"), f"the password is in {path}"


def test_a_task_killed_part_way_is_finished_by_the_job_after_it(cluster, serial, gradebook, tmp_path):
    course = make_course(tmp_path / "course", SLURM_CLASS, gradebook)
    done = submit(course, cluster, "--tasks", "2", "--cpus", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    array, finish = re.search(r"job (\d+), .* then job (\d+)", done.stdout).groups()

    deadline = time.monotonic() + FINISHED_WITHIN  # task 0 has graded its first submission, and not its last
    while not shard_logs(course, 2).get(0):
        assert time.monotonic() < deadline and jobs_running(cluster, array), "task 0 never graded a submission"
        time.sleep(0.2)
    subprocess.run([program("scancel"), "--full", "--signal=KILL", f"{array}_0"], env=cluster, check=True,
                   capture_output=True, timeout=30)
    while jobs_running(cluster, array, finish):
        assert time.monotonic() < deadline, f"jobs {array} and {finish} still running"
        time.sleep(0.5)

    killed_task = shard_logs(course, 2)[0]
    assert 0 < len(killed_task) < len(SLURM_CLASS) // 2, "task 0 was killed part-way through its shard"
    finished = next((course / "logs").glob(f"slurm-{finish}-finish.out")).read_text()
    left = int(re.search(r"graded:  (\d+)", finished).group(1))
    # What task 0 logged is graded; the one it was grading, and those after it, are left (one may be graded and not
    # yet logged when the kill lands): the finish job grades at least one, and no more than the rest of the shard.
    assert 1 <= left <= len(SLURM_CLASS) // 2 - len(killed_task), finished
    scores, rows = grades(gradebook)
    assert scores == serial and rows == len(SLURM_CLASS)
    assert not processes_naming(course), "the killed task's workers and kernels ended with it"
