"""Submitting a class to Slurm (:mod:`posenc_course.slurm`) and the batch scripts of ``deploy/slurm/``, without a
cluster: the command lines, what is refused and why, and what each script runs. The real cluster is
:mod:`tests.system.test_slurm`'s."""

import os
import stat
import subprocess
import sys

import pytest

from hardened_grading.errors import UsageError
from hardened_grading.class_grading.students import parse_shard
from hardened_grading.class_grading.command import parser as grade_parser
from posenc_course import slurm
from posenc_course.course import new_course


@pytest.fixture
def course(tmp_path):
    folder = new_course(tmp_path / "course")
    with open(folder / "nbgrader_config.py", "a") as config:
        config.write('\nc.CourseDirectory.db_url = "postgresql://grader@db.example.edu/posenc"\n')
    return folder


def test_the_two_jobs_an_array_then_one_after_it_however_it_ended(course, monkeypatch):
    monkeypatch.delenv("PGPASSFILE", raising=False)
    grade, finish = slurm.sbatch_commands(course, 4, 2, "posenc-advanced", extra=["--partition=short"],
                                          finish_extra=["--time=4:00:00"], memory_mb=4352)
    assert "--array=0-3" in grade and grade[-1] == str(slurm.GRADE_SCRIPT)
    assert "--dependency=afterany:{array}" in finish and finish[-1] == str(slurm.FINISH_SCRIPT)
    assert "--time=4:00:00" in finish and "--time=4:00:00" not in grade
    for command in (grade, finish):
        assert {"--parsable", "--cpus-per-task=2", "--mem-per-cpu=4352M", f"--chdir={course}",
                "--partition=short"} <= set(command)
        export = next(part for part in command if part.startswith("--export="))
        assert export.startswith("--export=ALL,") and "POSENC_ASSIGNMENT=posenc-advanced" in export
        assert "POSENC_SHARDS=4" in export and "PGPASSFILE" not in export
        assert f"POSENC_BIN={os.path.dirname(sys.executable)}" in export and "POSENC_DB_URL" not in export


def test_a_relative_password_file_is_passed_on_absolute_and_the_url_given_reaches_the_jobs(course, monkeypatch,
                                                                                             tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PGPASSFILE", "secrets/pgpass")
    export = slurm.environment(course, "posenc", "postgresql://g@db/p", "/venv/bin", 2)
    assert f"PGPASSFILE={tmp_path / 'secrets' / 'pgpass'}," in export + ","
    assert "POSENC_DB_URL=postgresql://g@db/p" in export


def test_each_cpu_gets_the_memory_of_a_worker_and_its_kernel(course):
    from hardened_grading.sandbox.limits import Limits

    assert slurm.memory_per_cpu(course) == Limits().memory_mb + Limits().tmp_mb + slurm.WORKER_MB
    with open(course / "nbgrader_config.py", "a") as config:
        config.write("\nc.ResilientExecute.memory_mb = 8192\n")
    assert slurm.memory_per_cpu(course) == 8192 + Limits().tmp_mb + slurm.WORKER_MB


@pytest.mark.parametrize("url, here", [("postgresql://g@db.example.edu/p", False), ("postgresql://g@localhost/p", True),
                                       ("postgresql://g@/p?host=/var/run/postgresql", True)])
def test_a_gradebook_only_this_machine_reaches_is_warned_of(url, here):
    assert bool(slurm.only_this_machine(url)) == here


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
        slurm.environment(course, "posenc", "postgresql://g@db/p?options=a,b", "/venv/bin", 2)


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
    """An scontrol whose `show job` prints each of `states` ("RUNNING", "FAILED 3 0": state, exit code, signal; or
    "ERROR" for a question that fails) in turn, the last one from then on."""
    folder.mkdir(exist_ok=True)
    (folder / "states").write_text("\n".join(states) + "\n")
    script = folder / "scontrol"
    script.write_text('#!/bin/bash\nd=$(dirname "$0"); n=$(cat "$d/calls" 2>/dev/null || echo 0); echo $((n + 1)) > "$d/calls"\n'
                      'echo "$@" >> "$d/args"\n'
                      'line=$(sed -n "$((n + 1))p" "$d/states"); [ -n "$line" ] || line=$(tail -n 1 "$d/states")\n'
                      'set -- $line\n'
                      'if [ "$1" = ERROR ]; then echo "slurm_load_jobs error: Socket timed out" >&2; exit 1; fi\n'
                      'echo "JobId=42 JobName=posenc-grade-finish JobState=$1 Reason=None ExitCode=${2:-0}:${3:-0}"\n')
    script.chmod(0o755)
    return folder


@pytest.mark.parametrize("states, ended", [
    (["PENDING", "RUNNING", "COMPLETING", "COMPLETED 0 0"], ("COMPLETED", 0)),
    (["RUNNING", "FAILED 3 0"], ("FAILED", 3)),
    (["RUNNING", "TIMEOUT 0 0"], ("TIMEOUT", 0)),   # a time limit: exit code 0, the state says it all
    (["RUNNING", "CANCELLED 0 15"], ("CANCELLED", 143)),
    (["RUNNING", "ERROR", "ERROR", "RUNNING", "COMPLETED 0 0"], ("COMPLETED", 0)),  # a busy controller, twice
], ids=["completed", "failed", "timeout", "cancelled", "busy-controller"])
def test_waiting_for_the_finish_job_returns_its_state_and_exit_code_once_it_has_ended(tmp_path, monkeypatch, states,
                                                                                       ended):
    folder = fake_scontrol(tmp_path / "bin", *states)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    assert slurm.wait_for(slurm.Job("42"), poll=0.01) == ended
    assert (folder / "calls").read_text().strip() == str(len(states)), "it asked until the job had ended"


def test_waiting_gives_up_when_slurm_stops_answering(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path / 'bin', 'RUNNING', 'ERROR')}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(UsageError, match="does not answer about job 42.*Socket timed out"):
        slurm.wait_for(slurm.Job("42"), poll=0.01)


def test_a_job_on_another_cluster_is_asked_about_there(tmp_path, monkeypatch):
    folder = fake_scontrol(tmp_path / "bin", "COMPLETED 0 0")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    slurm.wait_for(slurm.Job("42", "gpu"), poll=0.01)
    assert (folder / "args").read_text().split() == ["--clusters", "gpu", "show", "job", "-o", "42"]


def fake_sbatch(folder, *answers):
    """An sbatch that appends its arguments (one line per call) to `calls` and answers each call with the next of
    `answers`: a job id printed, or "!message" to refuse with that message."""
    folder.mkdir(exist_ok=True)
    (folder / "answers").write_text("\n".join(answers) + "\n")
    script = folder / "sbatch"
    script.write_text('#!/bin/bash\nd=$(dirname "$0"); echo "$*" >> "$d/calls"; n=$(wc -l < "$d/calls")\n'
                      'a=$(sed -n "${n}p" "$d/answers")\n'
                      'if [ "${a#!}" != "$a" ]; then echo "sbatch: error: ${a#!}" >&2; exit 1; fi\necho "$a"\n')
    script.chmod(0o755)
    return folder


def test_submitting_puts_the_array_s_id_in_the_finish_job_s_dependency(course, tmp_path, monkeypatch):
    folder = fake_sbatch(tmp_path / "bin", "1234;hpc", "1235;hpc")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    array, finish = slurm.submit(course, 3, 2)
    assert (array, finish) == (slurm.Job("1234", "hpc"), slurm.Job("1235", "hpc"))
    grade_call, finish_call = (folder / "calls").read_text().splitlines()
    assert "--array=0-2" in grade_call and "--dependency=afterany:1234 " in finish_call
    assert "--clusters hpc" in finish_call, "the finish job goes to the array's cluster"
    assert (course / "logs").is_dir(), "Slurm makes no folder for the jobs' output"


def test_a_refused_finish_job_names_the_queued_array_and_what_to_do(course, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_sbatch(tmp_path / 'bin', '1234', '!invalid partition')}{os.pathsep}"
                               f"{os.environ['PATH']}")
    with pytest.raises(UsageError) as refused:
        slurm.submit(course, 2, 1)
    assert "invalid partition" in str(refused.value) and "scancel 1234" in str(refused.value)
    assert "sbatch --dependency=afterany:1234" in str(refused.value)


def test_an_answer_of_sbatch_that_is_no_job_id_is_refused(course, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_sbatch(tmp_path / 'bin', '')}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(UsageError, match="not a job id"):
        slurm.submit(course, 2, 1)


def fake_programs(folder, codes):
    """posenc-grade, nbgrader and python that each append their name and arguments to `calls` and exit with
    ``codes[name]`` (0 by default)."""
    folder.mkdir(exist_ok=True)
    for name in ("posenc-grade", "nbgrader", "python"):
        script = folder / name
        script.write_text(f'#!/bin/bash\necho "{name} $*" >> "$(dirname "$0")/calls"\nexit {codes.get(name, 0)}\n')
        script.chmod(0o755)
    return folder


@pytest.mark.parametrize("codes, status", [({}, 0), ({"posenc-grade": 1}, 1), ({"nbgrader": 3}, 3),
                                           ({"posenc-grade": 1, "nbgrader": 3, "python": 4}, 1),
                                           ({"python": 4}, 4)],
                         ids=["all-well", "a-submission-failed", "export-failed", "all-failed", "report-failed"])
def test_the_finish_job_grades_what_is_left_exports_and_reports_whatever_failed(tmp_path, codes, status):
    bin_folder = fake_programs(tmp_path / "bin", codes)
    course = tmp_path / "course"
    course.mkdir()
    done = run_script(slurm.FINISH_SCRIPT, bin_folder, POSENC_COURSE=str(course), POSENC_ASSIGNMENT="posenc",
                      SLURM_CPUS_PER_TASK="2", POSENC_DB_URL="postgresql://g@db/p")
    assert done.returncode == status, done.stdout + done.stderr
    calls = (bin_folder / "calls").read_text().splitlines()
    assert [call.split()[0] for call in calls] == ["posenc-grade", "nbgrader", "python"], "every step, whatever failed"
    assert calls[0] == f"posenc-grade posenc --course {course} --jobs 2 --db-url postgresql://g@db/p"
    assert "--CourseDirectory.db_url=postgresql://g@db/p" in calls[1] and "--db-url postgresql://g@db/p" in calls[2]


def test_the_finish_job_without_a_url_uses_the_course_s(tmp_path):
    bin_folder = fake_programs(tmp_path / "bin", {})
    done = run_script(slurm.FINISH_SCRIPT, bin_folder, POSENC_COURSE=str(tmp_path))
    assert done.returncode == 0, done.stderr
    calls = (bin_folder / "calls").read_text()
    assert "--db-url" not in calls and "db_url" not in calls, calls


@pytest.mark.parametrize("task, count, shards, code", [("3", "1", "4", 0), ("4", "4", "", 2), ("1", "2", "", 0)],
                         ids=["one-task-run-again", "one-based-array", "array"])
def test_a_task_grades_its_shard_of_the_number_of_shards_given(tmp_path, task, count, shards, code):
    bin_folder = fake_posenc_grade(tmp_path / "bin")
    done = run_script(slurm.GRADE_SCRIPT, bin_folder, SLURM_ARRAY_TASK_ID=task, SLURM_ARRAY_TASK_COUNT=count,
                      **({"POSENC_SHARDS": shards} if shards else {}))
    assert done.returncode == code, done.stderr
    if code == 0:
        args = grade_parser().parse_args((bin_folder / "args-0.txt").read_text().splitlines())
        assert parse_shard(args.shard) == (int(task), int(shards or count))
    else:
        assert "the array's ids run from 0 to 3" in done.stderr


def test_submitting_loads_the_course_s_config_once_and_submits_what_it_says(course, tmp_path, monkeypatch):
    """The gradebook's URL and the memory per CPU both come from nbgrader_config.py, read once for both."""
    from hardened_grading.class_grading import slurm as engine_slurm

    with open(course / "nbgrader_config.py", "a") as config:
        config.write("\nc.ResilientExecute.memory_mb = 8192\n")
    loaded = []

    def counted(folder):
        loaded.append(folder)
        return real_load_config(folder)

    real_load_config = engine_slurm.load_config
    monkeypatch.setattr(engine_slurm, "load_config", counted)
    folder = fake_sbatch(tmp_path / "bin", "1234", "1235")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    assert slurm.submit(course, 2, 1) == (slurm.Job("1234"), slurm.Job("1235"))
    assert loaded == [course], f"nbgrader_config.py was loaded {len(loaded)} times: {loaded}"
    from hardened_grading.sandbox.limits import Limits

    for call in (folder / "calls").read_text().splitlines():
        assert f"--mem-per-cpu={8192 + Limits().tmp_mb + slurm.WORKER_MB}M" in call.split()
