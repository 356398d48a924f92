"""``hardened-grade``: the command line, and :func:`run`.

    hardened-grade ps1                     # every submission of ps1 in submitted/, one worker per core
    hardened-grade ps1 --jobs 2 --student 's0*' --student s123,s124
    hardened-grade ps1 --force             # grade again those already graded
    hardened-grade ps1 --shard 3/8         # the 4th of 8 equal parts of the class (one machine's share)

A course may ship it under its own name, with its assignment as the default (a course's ``cs101-grade`` is
``main(program="cs101-grade", default_assignment="ps1")``). Exit code 0 when none failed, 1 when some did, 2
when nothing could be graded.
"""

import argparse
import math
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from traitlets import Float, Integer, Unicode
from traitlets.config import Configurable

from ..cells import course_root
from ..errors import UsageError
from ..nbgrader_app import load_config, nbgrader_env
from ..sandbox import ahead
from .gradebook import gradebook_url, prepare_gradebook, safe_url
from .pool import grade_in_parallel
from .progress import PROGRAM, Progress, summary
from .students import parse_shard, select_students, shard_of
from .worker import graded_marker


class GradeClass(Configurable):
    """Settings of ``hardened-grade`` that an instructor may change in ``nbgrader_config.py``."""

    jobs = Integer(0, min=0, help=(
        "Worker processes grading at once; 0: one per core this process may use. Each imports nbgrader once "
        "(about 3 s) and runs one submission's kernel at a time.")).tag(config=True)
    sqlite_timeout = Float(60.0, min=1.0, help=(
        "Seconds a worker waits for another one's write to a SQLite gradebook to finish, where SQLite's "
        "own default of 5 s could fail with 'database is locked' on a busy machine.")).tag(config=True)
    log_folder = Unicode("logs", help=(
        "Where each run's log goes, relative to the course directory: logs/grade-DATE-TIME.log, with "
        "nbgrader's log for every submission.")).tag(config=True)


def default_jobs():
    """The cores this process may use: those it may run on, capped by its cgroup's CPU quota (a container's
    CPU limit, which Kubernetes sets and the affinity does not show)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cores


def run(args):
    """Grade as `args` (parsed by :func:`parser`) say; return the exit code."""
    course = course_root(args.course)
    if not (course / "nbgrader_config.py").exists():
        raise UsageError(f"{course}: not a course directory (no nbgrader_config.py); run {args.program} in the "
                         "course directory, or give --course")
    config = load_config(course)
    settings = GradeClass(config=config)
    jobs = args.jobs if args.jobs is not None else (settings.jobs or default_jobs())
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: give 1 or more")
    shard = parse_shard(args.shard) if args.shard else None
    students = select_students(course, args.assignment, args.student)
    if not students:
        raise UsageError(f"no submission of {args.assignment} in {course / 'submitted'}"
                         + (f" for --student {' '.join(args.student)}" if args.student else ""))
    if shard:
        students = shard_of(students, *shard)

    log_folder = course / settings.log_folder
    log_folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    log_path = log_folder / (f"grade-{stamp}" + (f"-shard-{shard[0]}-of-{shard[1]}" if shard else "") + ".log")
    db_url = gradebook_url(config, course, args.db_url, settings.sqlite_timeout)
    print(f"{args.program}: {len(students)} submissions of {args.assignment}"
          + (f" (shard {shard[0]}/{shard[1]})" if shard else "")
          + f", {min(jobs, len(students))} workers, gradebook {safe_url(db_url)}; log: {log_path}",
          file=sys.stderr, flush=True)
    if not students:
        print(summary([], 0.0, 0, log_path, args.assignment, shard, args.program))
        return 0

    os.environ["PATH"] = nbgrader_env()["PATH"]
    from ..hooks.unfinished import remove_unfinished
    from ..preprocessors.execute import refuse_without_sandbox

    try:
        refuse_without_sandbox(config)
    except SystemExit as stop:  # the sandbox is required and cannot be made here: it says what to do
        raise UsageError(str(stop).removeprefix("hardened_grading: ")) from None
    prepare_gradebook(db_url, config.CourseDirectory.get("course_id", "default_course"), args.assignment)
    # What runs that ended left half-graded, of this run's students only (a shard's own, even where the course's
    # file system has no locks across machines); never a folder that a live run is grading.
    remove_unfinished(course, set(students))
    ahead.remove_staging_folders(course)  # of workers killed outright (a live one's are its own)

    to_skip = 0 if args.force else sum(graded_marker(course, s, args.assignment) is not None for s in students)
    progress = Progress(len(students), to_skip=to_skip)
    started = time.monotonic()
    try:
        outcomes = grade_in_parallel(course, students, args.assignment, db_url, jobs, log_path,
                                     force=args.force, on_outcome=progress)
    except KeyboardInterrupt:
        progress.close()
        print(f"\n{args.program}: interrupted after {progress.done} of {len(students)} submissions; what was graded is "
              f"kept. Run the same command again to finish (log: {log_path})", file=sys.stderr)
        return 130
    finally:
        progress.close()
    print(summary(outcomes, time.monotonic() - started, min(jobs, len(students)), log_path, args.assignment, shard,
                  args.program))
    return 1 if any(o.status == "failed" for o in outcomes) else 0


def parser(program=PROGRAM, default_assignment=None):
    """The command line; `default_assignment` makes the assignment optional (a course's own command)."""
    p = argparse.ArgumentParser(prog=program, description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Settings: GradeClass.jobs, GradeClass.sqlite_timeout and GradeClass.log_folder "
                                       "in nbgrader_config.py; the gradebook is CourseDirectory.db_url.")
    if default_assignment:
        p.add_argument("assignment", nargs="?", default=default_assignment,
                       help=f"the assignment (default: {default_assignment})")
    else:
        p.add_argument("assignment", help="the assignment, as nbgrader names it (its folder in submitted/STUDENT/)")
    p.set_defaults(program=program)
    p.add_argument("--student", action="append", default=[], metavar="ID",
                   help="grade only these students: an id, a glob ('s0*') or a comma-separated list; may be repeated")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="worker processes (default: GradeClass.jobs, else one per core)")
    p.add_argument("--force", action="store_true", help="grade again the submissions already graded")
    p.add_argument("--shard", metavar="INDEX/COUNT",
                   help="grade only part INDEX (from 0) of COUNT equal parts of the sorted class: one machine's share")
    p.add_argument("--db-url", help="the gradebook's URL, in place of CourseDirectory.db_url (postgresql://...)")
    p.add_argument("--course", help="the course directory (default: the one that holds the working folder)")
    return p


def main(argv=None, program=PROGRAM, default_assignment=None):
    args = parser(program, default_assignment).parse_args(argv)
    try:
        return run(args)
    except UsageError as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
