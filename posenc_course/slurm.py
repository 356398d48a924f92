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

It is the engine's Slurm submission (:mod:`hardened_grading.class_grading.slurm`, ``hardened-slurm``) with this
course's own batch scripts. They stay the course's, in ``deploy/``, rather than the engine's generic copies: they
run ``posenc-grade`` and this course's class report (``python -m posenc_course.class_report``) with ``posenc`` as the
default assignment, read ``POSENC_*`` variables, and are what this course's instructors submit by hand
(docs/instructors/across-machines.md).
"""

import shutil  # noqa: F401  (tests replace shutil.which, which the engine's submission uses)
import sys

from hardened_grading.class_grading import slurm as engine
from hardened_grading.class_grading.slurm import (POLL_FIRST, POLL_LONGEST, QUESTIONS_FAILED, RUNNING_STATES,  # noqa: F401
                                                  WORKER_MB, Job, _sbatch, memory_per_cpu, only_this_machine,
                                                  wait_for)

from . import ROOT
from .layout import ASSIGNMENT

SCRIPTS = ROOT / "deploy" / "slurm"
GRADE_SCRIPT = SCRIPTS / "grade-class.sbatch"  #: one array task: one shard of the class
FINISH_SCRIPT = SCRIPTS / "finish-class.sbatch"  #: after the array: what is left, grades.csv, the class report

#: This course's batch scripts, and what they need (:class:`hardened_grading.class_grading.slurm.Scripts`).
COURSE_SCRIPTS = engine.Scripts(
    grade=GRADE_SCRIPT, finish=FINISH_SCRIPT, prefix="POSENC_", programs=("posenc-grade", "nbgrader", "python"),
    run_with="run this with the course's venv (make grade-slurm, or .venv/bin/python -m posenc_course.slurm)",
    postgresql_help="docs/instructors/large-class.md: PostgreSQL", notebook=False)

#: The command, as this course names it.
COMMAND = engine.Command(program="python -m posenc_course.slurm", name="posenc_course.slurm",
                         description=__doc__.splitlines()[0], default_assignment=ASSIGNMENT, scripts=COURSE_SCRIPTS)


def shared_gradebook(course, db_url=None):
    """The gradebook every task writes to: `db_url`, else the course's ``CourseDirectory.db_url``. Raise
    :class:`UsageError` for a SQLite one or one with a password in its URL, saying what to do."""
    return engine.shared_gradebook(course, db_url, scripts=COURSE_SCRIPTS)


def environment(course, assignment, db_url, bin_folder, shards):
    """The variables the batch scripts read, as ``--export=ALL,NAME=VALUE,...``. The rest of the submitter's
    environment is passed on as it is, PGPASSFILE made absolute (the jobs run in the course folder)."""
    return engine.environment(course, assignment=assignment, db_url=db_url, bin_folder=bin_folder, shards=shards,
                              scripts=COURSE_SCRIPTS)


def sbatch_commands(course, tasks, cpus, assignment=ASSIGNMENT, db_url=None, bin_folder=None, extra=(),
                    finish_extra=(), memory_mb=None):
    """The two ``sbatch`` command lines: the array, and the job that finishes the class (its dependency,
    ``{array}``, is filled in with the array's job id). `extra`: more sbatch options for both (a partition, an
    account, a time limit); `finish_extra`: for the finish job only, after `extra`. `memory_mb`: per CPU."""
    return engine.sbatch_commands(course, tasks=tasks, cpus=cpus, assignment=assignment, db_url=db_url,
                                  bin_folder=bin_folder, extra=extra, finish_extra=finish_extra, memory_mb=memory_mb,
                                  scripts=COURSE_SCRIPTS)


def submit(course, tasks, cpus, assignment=ASSIGNMENT, db_url=None, extra=(), finish_extra=(), memory_mb=None):
    """Submit the array and the job that finishes the class; return their two :class:`Job` objects. `memory_mb`: per CPU
    (default: :func:`memory_per_cpu`; 0 leaves it to the cluster's default)."""
    return engine.submit(course, tasks=tasks, cpus=cpus, assignment=assignment, db_url=db_url, extra=extra,
                         finish_extra=finish_extra, memory_mb=memory_mb, scripts=COURSE_SCRIPTS)


def main(argv=None):
    return engine.main(argv, COMMAND)


if __name__ == "__main__":
    sys.exit(main())
