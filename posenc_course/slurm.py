"""Grade a class on a Slurm cluster: submit an array of shards, then the job that finishes the class.

    python -m posenc_course.slurm --tasks 4 --cpus 2        # in the course directory
    make grade-slurm ARGS="--tasks 4 --cpus 2 --wait"

Two jobs, with ``sbatch``, from this repository's ``deploy/slurm/``:

1. ``grade-class.sbatch`` as an array of ``--tasks`` tasks. Task i runs ``posenc-grade --shard i/TASKS --jobs
   CPUS``: its part of the sorted class, one worker per CPU Slurm gives it.
2. ``finish-class.sbatch``, once every task has ended, however (``--dependency=afterany``). It runs
   ``posenc-grade`` over the whole class, which skips what the tasks graded and grades what a failed or killed
   task left. Then it writes ``grades.csv`` and the class report.

Every task writes to one PostgreSQL gradebook: SQLite cannot be shared between machines. The URL carries no
password, since a job's environment and command line are visible to the cluster's other users. The password is
read from PostgreSQL's password file: ``~/.pgpass``, or the file ``PGPASSFILE`` names (mode 0600).

The course directory and this repository's ``.venv`` must be on storage that every node sees. The site's
page: docs/instructors/across-machines.md.
"""

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from hardened_grading.grade_class import UsageError, gradebook_url, safe_url

from . import ROOT
from .course import load_config
from .layout import ASSIGNMENT, course_root

SCRIPTS = ROOT / "deploy" / "slurm"
GRADE_SCRIPT = SCRIPTS / "grade-class.sbatch"  #: one array task: one shard of the class
FINISH_SCRIPT = SCRIPTS / "finish-class.sbatch"  #: after the array: what is left, grades.csv, the class report
#: Slurm's job states before a job has ended (``squeue``'s long names)
RUNNING_STATES = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
                  "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "SPECIAL_EXIT"}


def shared_gradebook(course, db_url=None):
    """The gradebook every task writes to: `db_url`, else the course's ``CourseDirectory.db_url``. Raise
    :class:`UsageError` for a SQLite one or one with a password in its URL, saying what to do."""
    from sqlalchemy.engine import make_url

    url = make_url(gradebook_url(load_config(course), course, db_url))
    if url.get_backend_name() != "postgresql":
        raise UsageError(f"the gradebook is {safe_url(url)}: the tasks of a Slurm job need one PostgreSQL gradebook "
                         "that every node reaches. Set c.CourseDirectory.db_url in nbgrader_config.py, or give "
                         "--db-url postgresql://USER@HOST/DATABASE (docs/instructors/large-class.md: PostgreSQL)")
    if url.password:
        raise UsageError("the gradebook's URL holds a password, which the job's environment would show to the "
                         "cluster's users: leave it out of the URL, and put it in ~/.pgpass or the file PGPASSFILE "
                         "names, as a line HOST:PORT:DATABASE:USER:PASSWORD (chmod 600)")
    return url.render_as_string(hide_password=False)


def environment(course, assignment, db_url, bin_folder):
    """The variables the batch scripts read, as ``--export=ALL,NAME=VALUE,...`` (the rest of the submitter's
    environment, PGPASSFILE included, is passed on as it is)."""
    variables = {"POSENC_COURSE": str(course), "POSENC_ASSIGNMENT": assignment, "POSENC_BIN": str(bin_folder)}
    if db_url:
        variables["POSENC_DB_URL"] = db_url
    if any("," in value for value in variables.values()):  # sbatch splits --export at commas
        raise UsageError(f"a comma in {variables}: sbatch's --export cannot pass it; move the course, or name the "
                         "gradebook in nbgrader_config.py rather than with --db-url")
    return "--export=ALL," + ",".join(f"{name}={value}" for name, value in variables.items())


def sbatch_commands(course, tasks, cpus, assignment=ASSIGNMENT, db_url=None, bin_folder=None, extra=()):
    """The two ``sbatch`` command lines: the array, and the job that finishes the class (its dependency,
    ``{array}``, is filled in with the array's job id). `extra`: more sbatch options for both (a partition, an
    account, a time limit)."""
    if tasks < 1 or cpus < 1:
        raise UsageError(f"--tasks {tasks} --cpus {cpus}: give 1 or more of each")
    bin_folder = bin_folder or Path(sys.executable).parent
    common = ["--parsable", f"--chdir={course}", f"--cpus-per-task={cpus}",
              environment(course, assignment, db_url, bin_folder), *extra]
    return ([shutil.which("sbatch") or "sbatch", f"--array=0-{tasks - 1}", *common, str(GRADE_SCRIPT)],
            [shutil.which("sbatch") or "sbatch", "--dependency=afterany:{array}", "--kill-on-invalid-dep=no",
             *common, str(FINISH_SCRIPT)])


def submit(course, tasks, cpus, assignment=ASSIGNMENT, db_url=None, extra=(), wait=False):
    """Submit the array and the job that finishes the class; return ``(array job id, finish job id, exit code)``.
    With `wait`, return when the finish job has ended, with its exit code (else None)."""
    course = course_root(course)
    if not (course / "nbgrader_config.py").exists():
        raise UsageError(f"{course}: not a course directory (no nbgrader_config.py); give --course")
    if not shutil.which("sbatch"):
        raise UsageError("Slurm's sbatch is not on PATH: run this on a machine that submits jobs to your cluster "
                         "(a login node)")
    url = shared_gradebook(course, db_url)
    (course / "logs").mkdir(exist_ok=True)  # Slurm writes the tasks' output there, and makes no folder
    grade, finish = sbatch_commands(course, tasks, cpus, assignment, db_url and url, extra=extra)
    array = _sbatch(grade)
    finish = _sbatch([part.replace("{array}", array) for part in finish])
    return array, finish, wait_for(finish) if wait else None


def wait_for(job, poll=1.0):
    """Wait until `job` has ended (Slurm's state for it is no longer pending, running or the like); return its exit
    code, as ``scontrol show job`` gives it (``sbatch --wait`` is not used: it polls ever more slowly, and returned
    tens of seconds after the job ended)."""
    while True:
        shown = subprocess.run([shutil.which("scontrol") or "scontrol", "show", "job", "-o", job],
                               capture_output=True, text=True)
        state = re.search(r"\bJobState=(\S+)", shown.stdout)
        if shown.returncode != 0 or not state:
            raise UsageError(f"Slurm no longer knows job {job} ({shown.stderr.strip() or 'no state'}): see its output")
        if state.group(1) not in RUNNING_STATES:
            return int(re.search(r"\bExitCode=(\d+)", shown.stdout).group(1))
        time.sleep(poll)


def _sbatch(command):
    """Run an ``sbatch --parsable`` command; return the job id."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise UsageError(f"sbatch refused the job ({' '.join(command)}): {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip().split(";")[0]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m posenc_course.slurm", description=__doc__.splitlines()[0])
    parser.add_argument("assignment", nargs="?", default=ASSIGNMENT, help=f"the assignment (default: {ASSIGNMENT})")
    parser.add_argument("--tasks", type=int, required=True, help="array tasks: the shards the class is cut into")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs per task, one grading worker each (default: 2)")
    parser.add_argument("--course", default=None, help="the course directory (default: the one you are in)")
    parser.add_argument("--db-url", default=None, help="the PostgreSQL gradebook, in place of CourseDirectory.db_url "
                                                       "(no password: ~/.pgpass or PGPASSFILE holds it)")
    parser.add_argument("--sbatch", action="append", default=[], metavar="OPTION",
                        help="one more sbatch option for both jobs, e.g. --sbatch=--partition=short; may be repeated")
    parser.add_argument("--wait", action="store_true", help="return when the class is finished, with its exit code")
    args = parser.parse_args(argv)
    try:
        array, finish, code = submit(args.course, args.tasks, args.cpus, args.assignment, args.db_url, args.sbatch,
                                     args.wait)
    except UsageError as error:
        print(f"posenc_course.slurm: {error}", file=sys.stderr)
        return 2
    course = course_root(args.course)
    print(f"submitted: job {array}, {args.tasks} array tasks of {args.cpus} CPUs (grade-class.sbatch), then job "
          f"{finish} (finish-class.sbatch) once they have ended\n"
          f"  follow them: squeue -j {array},{finish}\n"
          f"  their output: {course / 'logs'}/slurm-{array}_*.out and slurm-{finish}-finish.out\n"
          f"  at the end: {course / 'grades.csv'} and {course / 'reports'}/")
    if code is not None:
        print(f"job {finish} ended with exit code {code}"
              + ("" if code == 0 else f": see {course / 'logs'}/slurm-{finish}-finish.out"))
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
