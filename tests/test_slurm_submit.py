"""Submitting a class to Slurm (:mod:`posenc_course.slurm`) and the batch scripts of ``deploy/slurm/``, without a
cluster: the command lines, what is refused and why, and what each script runs. The real cluster is
:mod:`tests.test_slurm`'s."""

import os
import stat
import subprocess
import sys

import pytest

from hardened_grading.grade_class import UsageError, parse_shard
from hardened_grading.grade_class import parser as grade_parser
from posenc_course import slurm
from posenc_course.course import new_course


@pytest.fixture
def course(tmp_path):
    folder = new_course(tmp_path / "course")
    with open(folder / "nbgrader_config.py", "a") as config:
        config.write('\nc.CourseDirectory.db_url = "postgresql://grader@db.example.edu/posenc"\n')
    return folder


def test_the_two_jobs_an_array_then_one_after_it_however_it_ended(course):
    grade, finish = slurm.sbatch_commands(course, 4, 2, "posenc-advanced", extra=["--partition=short"])
    assert "--array=0-3" in grade and grade[-1] == str(slurm.GRADE_SCRIPT)
    assert "--dependency=afterany:{array}" in finish and finish[-1] == str(slurm.FINISH_SCRIPT)
    for command in (grade, finish):
        assert {"--parsable", "--cpus-per-task=2", f"--chdir={course}", "--partition=short"} <= set(command)
        export = next(part for part in command if part.startswith("--export="))
        assert export.startswith("--export=ALL,") and "POSENC_ASSIGNMENT=posenc-advanced" in export
        assert f"POSENC_BIN={os.path.dirname(sys.executable)}" in export and "POSENC_DB_URL" not in export


@pytest.mark.parametrize("tasks, cpus", [(0, 2), (2, 0)])
def test_no_task_or_no_cpu_is_refused(course, tasks, cpus):
    with pytest.raises(UsageError, match="give 1 or more"):
        slurm.sbatch_commands(course, tasks, cpus)


def test_the_gradebook_must_be_postgresql_without_a_password(course, tmp_path):
    assert slurm.shared_gradebook(course) == "postgresql://grader@db.example.edu/posenc"
    with pytest.raises(UsageError, match="PGPASSFILE"):
        slurm.shared_gradebook(course, "postgresql://grader:hunter2@db/posenc")
    sqlite_course = new_course(tmp_path / "sqlite")
    with pytest.raises(UsageError, match="one PostgreSQL gradebook that every node reaches"):
        slurm.shared_gradebook(sqlite_course)


def test_a_refused_password_is_not_repeated(course, capsys, monkeypatch):
    monkeypatch.setattr(slurm.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert slurm.main(["--tasks", "2", "--course", str(course), "--db-url", "postgresql://g:hunter2@db/p"]) == 2
    err = capsys.readouterr().err
    assert "holds a password" in err and "hunter2" not in err


def test_without_sbatch_it_says_where_to_run_it(course, capsys, monkeypatch):
    monkeypatch.setattr(slurm.shutil, "which", lambda name: None)
    assert slurm.main(["--tasks", "2", "--course", str(course)]) == 2
    assert "sbatch is not on PATH" in capsys.readouterr().err


def test_a_comma_cannot_pass_through_sbatch_export(course):
    with pytest.raises(UsageError, match="comma"):
        slurm.environment(course, "posenc", "postgresql://g@db/p?options=a,b", "/venv/bin")


def fake_posenc_grade(folder):
    """A posenc-grade that writes its arguments, one per line, to args-N.txt and exits with the code in
    exit-codes (one per call; 0 once they run out)."""
    folder.mkdir()
    script = folder / "posenc-grade"
    script.write_text('#!/bin/bash\nd=$(dirname "$0"); n=$(ls "$d"/args-*.txt 2>/dev/null | wc -l)\n'
                      'printf "%s\\n" "$@" > "$d/args-$n.txt"\n'
                      'code=$(sed -n "$((n + 1))p" "$d/exit-codes" 2>/dev/null); exit "${code:-0}"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def run_script(script, bin_folder, **env):
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ["PATH"], "POSENC_BIN": str(bin_folder), **env})


def test_an_array_task_runs_its_shard_with_one_worker_per_cpu(tmp_path):
    bin_folder = fake_posenc_grade(tmp_path / "bin")
    done = run_script(slurm.GRADE_SCRIPT, bin_folder, SLURM_ARRAY_TASK_ID="2", SLURM_ARRAY_TASK_COUNT="4",
                      SLURM_CPUS_PER_TASK="3", SLURM_SUBMIT_DIR="/srv/course", POSENC_ASSIGNMENT="posenc-advanced",
                      POSENC_DB_URL="postgresql://g@db/p")
    assert done.returncode == 0, done.stderr
    args = grade_parser().parse_args((bin_folder / "args-0.txt").read_text().splitlines())
    assert (args.assignment, args.course, parse_shard(args.shard), args.jobs, args.db_url) == \
        ("posenc-advanced", "/srv/course", (2, 4), 3, "postgresql://g@db/p")
    assert not (bin_folder / "args-1.txt").exists()


def test_a_task_whose_submissions_failed_tries_them_once_more(tmp_path):
    bin_folder = fake_posenc_grade(tmp_path / "bin")
    (bin_folder / "exit-codes").write_text("1\n1\n1\n")
    done = run_script(slurm.GRADE_SCRIPT, bin_folder, SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_TASK_COUNT="2")
    assert done.returncode == 1 and "trying them once more" in done.stdout
    assert sorted(p.name for p in bin_folder.glob("args-*.txt")) == ["args-0.txt", "args-1.txt"], "once more only"


def test_a_task_that_cannot_start_is_not_retried(tmp_path):
    bin_folder = fake_posenc_grade(tmp_path / "bin")
    (bin_folder / "exit-codes").write_text("2\n")
    done = run_script(slurm.GRADE_SCRIPT, bin_folder, SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_TASK_COUNT="2")
    assert done.returncode == 2 and len(list(bin_folder.glob("args-*.txt"))) == 1


def test_the_grading_script_outside_an_array_says_how_to_submit_it(tmp_path):
    done = run_script(slurm.GRADE_SCRIPT, fake_posenc_grade(tmp_path / "bin"))
    assert done.returncode == 2 and "sbatch --array=0-N" in done.stderr


@pytest.mark.parametrize("script", [slurm.GRADE_SCRIPT, slurm.FINISH_SCRIPT], ids=lambda p: p.name)
def test_without_posenc_grade_the_scripts_say_so(script, tmp_path):
    done = run_script(script, tmp_path / "nowhere", SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_TASK_COUNT="2")
    assert done.returncode == 2 and "no posenc-grade on PATH nor in POSENC_BIN" in done.stderr


def fake_scontrol(folder, *states):
    """An scontrol whose `show job` prints each of `states` ("RUNNING", "COMPLETED 3", or "" for a job it no longer
    knows) in turn, the last one from then on."""
    folder.mkdir(exist_ok=True)
    (folder / "states").write_text("\n".join(states) + "\n")
    script = folder / "scontrol"
    script.write_text('#!/bin/bash\nd=$(dirname "$0"); n=$(cat "$d/calls" 2>/dev/null || echo 0); echo $((n + 1)) > "$d/calls"\n'
                      f'line=$(sed -n "$((n + 1))p" "$d/states"); [ -n "$line" ] || line=$(tail -n 1 "$d/states")\n'
                      'set -- $line\n'
                      'if [ -z "$1" ]; then echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; fi\n'
                      'echo "JobId=$5 JobName=posenc-grade-finish JobState=$1 Reason=None ExitCode=${2:-0}:0"\n')
    script.chmod(0o755)
    return folder


def test_waiting_for_the_finish_job_returns_its_exit_code_once_it_has_ended(tmp_path, monkeypatch):
    folder = fake_scontrol(tmp_path / "bin", "PENDING", "RUNNING", "COMPLETING", "FAILED 3")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    assert slurm.wait_for("42", poll=0.01) == 3
    assert (folder / "calls").read_text().strip() == "4", "it waited while the job was pending, running, completing"


def test_waiting_for_a_job_slurm_forgot_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path / 'bin', '')}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(UsageError, match="no longer knows job 42.*Invalid job id"):
        slurm.wait_for("42", poll=0.01)
