"""Grade a whole class at once: submissions graded in parallel, with progress, resumable, shardable.

    hardened-grade ps1                     # every submission of ps1 in submitted/, one worker per core
    hardened-grade ps1 --jobs 2 --student 's0*' --student s123,s124
    hardened-grade ps1 --force             # grade again those already graded
    hardened-grade ps1 --shard 3/8         # the 4th of 8 equal parts of the class (one machine's share)

A course may ship it under its own name, with its assignment as the default (``posenc-grade`` is
``main(program="posenc-grade", default_assignment="posenc")``).

Run it in the course directory (or give ``--course``). It is ``nbgrader autograde ASSIGNMENT`` for many
students at once, and nothing else: each worker process imports nbgrader once and calls its own
``Autograde`` (through ``NbGraderAPI.autograde``) for one student after another, with the course's
``nbgrader_config.py``, so every submission is graded exactly as a serial run grades it, sandbox and
hardening included, into the same ``autograded/`` folders and gradebook.

- A submission that crashes its worker costs only itself: the worker is replaced, and the submission is
  reported as failed.
- Ctrl-C, or a run killed part-way, leaves the submissions graded so far; running the same command again
  finishes the class (half-graded folders are removed first, as ``nbgrader autograde`` does here), and
  skips what was graded unless ``--force``.
- Another run may grade in the same course at once (``nbgrader autograde``, another ``hardened-grade``, of any
  assignment): each worker holds the lock of the submission it grades (:mod:`hardened_grading.locks`), so no
  clean-up removes a live run's folder, and two runs that come to the same submission take turns.
- The gradebook is nbgrader's ``CourseDirectory.db_url``: the course's SQLite file by default, which every
  worker writes to with a busy timeout (``GradeClass.sqlite_timeout``), or a PostgreSQL database
  (``postgresql://...``) shared by shards on several machines.

A progress bar (count, rate, time left, of the submissions graded: skipped ones take no time) on a terminal;
otherwise one line per submission. At the end: how many were graded, skipped and failed (and why); every
graded submission that could not be read (graded as the blank release), had a cell that timed out, crashed
its kernel or ran out of memory, with the cell and the grader's message (read from its graded notebook);
and where the log is. Exit code 0 when none failed,
1 when some did, 2 when nothing could be graded.
"""

import argparse
import fnmatch
import math
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing.connection import wait
from pathlib import Path

from traitlets import Float, Integer, Unicode
from traitlets.config import Configurable

from . import ahead
from .cells import course_root
from .kernel import die_with_parent
from .nbgrader_app import load_config, nbgrader_api, nbgrader_env
from .terminal import INDENT, escape, log_text

PROGRAM = "hardened-grade"  #: the command, as its messages name it (a course may give it its own name)


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


@dataclass
class Outcome:
    """What became of one student's submission."""

    student: str
    status: str  #: "graded", "skipped" (already graded, no --force) or "failed"
    seconds: float
    reason: str = ""  #: why it failed, in one line
    #: what went wrong in a graded submission, from its graded notebook (:func:`hardened_grading.incidents.incidents`):
    #: ``(what, where, why)``: an unreadable file, a cell that timed out, crashed the kernel or ran out of memory
    problems: tuple = ()


class UsageError(Exception):
    """The command cannot run as asked: the message says why and what to do."""


# Which students ------------------------------------------------------------------------------------

def parse_shard(text):
    """``"i/N"`` -> ``(i, N)``, for shard `i` (counted from 0) of `N`."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text}: give it as INDEX/COUNT, e.g. 0/4 for the first of 4 shards") from None
    if not 0 <= index < count:
        raise UsageError(f"--shard {text}: INDEX counts from 0 and is below COUNT (0/{count} to {count - 1}/{count})")
    return index, count


def shard_of(students, index, count):
    """Part `index` of `count` of the sorted `students`: as equal in size as can be, contiguous, and the
    same on every machine that lists the same class."""
    students = sorted(students)
    return students[index * len(students) // count:(index + 1) * len(students) // count]


def select_students(course, assignment, patterns=()):
    """The students with a submission of `assignment` in ``submitted/``, sorted; `patterns` (nbgrader's
    ``--student`` globs, each may be a comma-separated list) keep only those that match one."""
    folders = Path(course).glob(f"submitted/*/{assignment}")
    submitted = sorted(folder.parent.name for folder in folders if folder.is_dir())
    wanted = [p.strip() for pattern in patterns for p in pattern.split(",") if p.strip()]
    if not wanted:
        return submitted
    return [student for student in submitted if any(fnmatch.fnmatchcase(student, p) for p in wanted)]


# The gradebook -------------------------------------------------------------------------------------

def gradebook_url(config, course, override=None, sqlite_timeout=60.0):
    """The gradebook's SQLAlchemy URL: `override`, else the config's ``CourseDirectory.db_url``, else
    nbgrader's default SQLite file in the course; a SQLite URL gets a busy ``timeout`` unless it has one."""
    from sqlalchemy.engine import make_url

    url = override or config.CourseDirectory.get("db_url") or f"sqlite:///{Path(course).resolve() / 'gradebook.db'}"
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and "timeout" not in parsed.query:
        parsed = parsed.update_query_dict({"timeout": f"{sqlite_timeout:g}"})
    return parsed.render_as_string(hide_password=False)


def prepare_gradebook(url, course_id, assignment):
    """Make the gradebook's tables and course once, before the workers start (two workers making them
    at once would race), and check that the assignment is in it."""
    from nbgrader.api import Gradebook, MissingEntry

    try:
        with Gradebook(url, course_id) as gradebook:
            gradebook.find_assignment(assignment)
    except MissingEntry:
        raise UsageError(f"the gradebook has no assignment {assignment!r}: run `nbgrader generate_assignment "
                         f"{assignment}` in the course directory first") from None
    except Exception as error:  # SQLAlchemy's OperationalError and the like: a server that is down, a bad URL
        raise UsageError(f"cannot open the gradebook {safe_url(url)}: {type(error).__name__}: "
                         f"{str(error).strip().splitlines()[0]}") from None


def safe_url(url):
    """`url` without its password, for messages and logs."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


# One worker ----------------------------------------------------------------------------------------

class Stopped(BaseException):
    """Raised in a worker by SIGTERM: it stops grading, and its process ends (:func:`_end_worker`)."""


_stopping = False  #: a worker was told to stop: nbgrader's autograde catches even Stopped
#: Seconds a worker told to stop has to end, whatever it was doing: then SIGALRM's default action ends it.
STOP_GRACE = 5


def _stop(signum, frame):
    global _stopping
    _stopping = True
    # A backstop: Stopped is raised wherever the worker is, and code there may catch it and wait (a kernel
    # that is starting, a cleanup awaiting a dead event loop). SIGALRM, not handled, ends the process.
    signal.alarm(STOP_GRACE)
    raise Stopped()


def _end_worker():
    """End this worker now, leaving its submission half-graded for the next run (which removes it first).

    ``os._exit``, not a return: the interpreter's teardown would wait on what the interrupted grading left
    (sockets to a kernel, an event loop stopped mid-call). Its kernel ends with it: the kernel's launcher is
    bound to this process (:func:`hardened_grading.kernel.bind_to_grader`) and bwrap ends the sandbox.
    """
    grading = sys.modules.get("hardened_grading.grading")  # loaded by nbgrader once it has graded
    if grading:
        grading.remove_kernel_folders(os.getpid())
    ahead.remove_staging_folders(Path.cwd(), os.getpid())
    os._exit(0)


def graded_marker(course, student, assignment):
    from .grading import GRADED_MARKER

    marker = Path(course) / "autograded" / student / assignment / GRADED_MARKER
    return marker.stat().st_mtime_ns if marker.exists() else None


def failure_reason(result):
    """One line on why nbgrader's autograde of one student failed: its error's last line, or its log's
    last error."""
    error_lines = [line for line in result.get("error", "").splitlines() if line.strip()]
    logged = [line for line in result.get("log", "").splitlines() if line.startswith(("[ERROR]", "[CRITICAL]"))]
    reason = logged[-1] if logged else (error_lines[-1] if error_lines else "nbgrader reported a failure")
    return reason.removeprefix("[ERROR] ").removeprefix("[CRITICAL] ").strip()[:300]


def course_parts(config):
    """``part_of(grade id)`` of the course whose configuration is `config` (its ``FeedbackSummary.part_pattern``),
    or None when it sets none."""
    from .feedback import part_by_pattern

    pattern = config.FeedbackSummary.get("part_pattern", "")
    return part_by_pattern(pattern) if pattern else None


def problems_of(course, student, assignment, part_of=None):
    """:func:`hardened_grading.incidents.incidents` of a student's graded notebooks, each named when the
    assignment has several (none for a notebook that cannot be read: nbgrader's own failure says why); a cell's
    part (``part_of(grade id)``: the course's ``FeedbackSummary.part_pattern``) is said with it."""
    import nbformat

    from .incidents import incidents

    paths = sorted((Path(course) / "autograded" / student / assignment).glob("*.ipynb"))
    found = []
    for path in paths:
        try:
            notebook = nbformat.read(str(path), as_version=4)
        except Exception:
            continue
        found += [(what, f"{path.name}, {where}" if len(paths) > 1 else where, why)
                  for what, where, why in incidents(notebook, part_of)]
    return tuple(found)


def work(course, db_url, log_path, connection, parent):
    """A worker's life: import nbgrader once, then grade the students the parent sends, one at a time,
    until it sends None or goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    signal.signal(signal.SIGTERM, _stop)
    die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the command died before the signal was set: nobody to grade for
        _end_worker()
    os.chdir(course)
    with open(log_path, "a", buffering=1) as log:
        # What nbgrader and the kernels print goes to the run's log, not over the progress bar.
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    os.environ["PATH"] = nbgrader_env()["PATH"]  # nbgrader runs `alembic`: the one beside this Python
    try:
        from .grading import lock_submissions_while_graded

        lock_submissions_while_graded()  # each submission's lock held while it is graded (hardened_grading.locks)
        config = load_config(course)
        config.CourseDirectory.db_url = db_url
        api = nbgrader_api(config)
        part_of = course_parts(config)
        connection.send("ready")
        while True:
            task = connection.recv()
            if task is None:
                return
            assignment, student, force, following = task
            before, started = graded_marker(course, student, assignment), time.monotonic()
            next_folder = Path(course, "autograded", following, assignment) if following else None
            ahead.expect(next_folder)  # its kernel starts while this one is graded
            result = api.autograde(assignment, student, force=force)
            ahead.discard(keep=next_folder)  # one started for this submission and not taken (it was skipped)
            if _stopping:  # interrupted mid-submission: it stays half-graded, for the next run to grade
                _end_worker()
            seconds = time.monotonic() - started
            if not result["success"]:
                outcome = Outcome(student, "failed", seconds, failure_reason(result))
            elif not force and before is not None and graded_marker(course, student, assignment) == before:
                outcome = Outcome(student, "skipped", seconds)
            else:
                outcome = Outcome(student, "graded", seconds,
                                  problems=problems_of(course, student, assignment, part_of))
            with open(log_path, "a") as log:  # nbgrader's log and error may quote what the student wrote
                error = result.get("error", "")
                log.write(f"\n=== {student}: {outcome.status} in {seconds:.1f} s (worker {os.getpid()})\n"
                          + escape(result.get("log", ""), indent="") + (INDENT + log_text(error) if error else ""))
            connection.send(outcome)
    except Stopped:
        _end_worker()
    except (EOFError, BrokenPipeError):  # the command went away
        return
    finally:
        ahead.discard()


# The pool ------------------------------------------------------------------------------------------

class Worker:
    def __init__(self, context, course, db_url, log_path):
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=work, args=(course, db_url, log_path, child_end, os.getpid()))
        self.process.start()
        child_end.close()
        self.ready = False
        self.student = None  # the one it is grading
        self.following = None  # the one it grades next: its kernel starts ahead (hardened_grading.ahead)
        self.started = None


def grade_in_parallel(course, students, assignment, db_url, jobs, log_path, force=False, on_outcome=None):
    """Grade `students` with `jobs` worker processes; call ``on_outcome(Outcome)`` as each one ends and
    return every Outcome. A worker that dies takes only its current submission with it (reported as
    failed) and is replaced."""
    context = multiprocessing.get_context("spawn")  # a clean interpreter: nothing of this process's state
    waiting, outcomes, start_failures = list(reversed(students)), [], 0
    workers = [Worker(context, course, db_url, log_path) for _ in range(min(jobs, len(students)))]

    def finish(outcome):
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)

    def give_work(worker):
        # Its own next one first; else the next waiting; else another's next one, which that worker has not begun.
        others = [w for w in workers if w is not worker and w.following]
        if worker.following:
            student, worker.following = worker.following, None
        elif waiting:
            student = waiting.pop()
        elif others:
            student, others[0].following = others[0].following, None
        else:
            worker.student = None
            worker.connection.send(None)
            return
        worker.student, worker.started = student, time.monotonic()
        worker.following = waiting.pop() if waiting else None
        worker.connection.send((assignment, worker.student, force, worker.following))

    try:
        while any(w.student for w in workers) or ((waiting or any(w.following for w in workers)) and workers):
            ready = wait([w.connection for w in workers] + [w.process.sentinel for w in workers])
            for worker in list(workers):
                if worker.connection in ready:
                    try:
                        message = worker.connection.recv()
                    except EOFError:
                        message = None
                    if message == "ready":
                        worker.ready = True
                        give_work(worker)
                        continue
                    if isinstance(message, Outcome):
                        finish(message)
                        give_work(worker)
                        continue
                if worker.process.sentinel in ready or not worker.process.is_alive():
                    worker.process.join()
                    workers.remove(worker)
                    if worker.following:  # another worker grades it
                        waiting.append(worker.following)
                    if worker.student:
                        from .grading import remove_unfinished

                        code = worker.process.exitcode
                        how = f"killed by signal {-code}" if code and code < 0 else f"exit code {code}"
                        finish(Outcome(worker.student, "failed", time.monotonic() - worker.started,
                                       f"its grading process died ({how}); it is graded again on the next run"))
                        remove_unfinished(course, [worker.student])
                    elif not worker.ready:  # died while starting: replaced, unless starting itself fails
                        start_failures += 1
                        if start_failures > max(3, jobs):
                            raise RuntimeError(f"grading workers could not start (the last exit code: "
                                               f"{worker.process.exitcode}); see {log_path}")
                    if waiting:
                        workers.append(Worker(context, course, db_url, log_path))
    finally:
        for worker in workers:
            worker.connection.close()  # an idle worker sees the end of its pipe, and ends
        deadline = time.monotonic() + 5
        for worker in workers:
            if worker.student is None:
                worker.process.join(timeout=max(0.0, deadline - time.monotonic()))
        for worker in workers:
            if worker.process.is_alive():
                worker.process.terminate()  # SIGTERM: a busy one stops its kernel on the way out
        for worker in workers:
            worker.process.join(timeout=30)
            if worker.process.is_alive():
                worker.process.kill()
    return outcomes


# Progress and the summary --------------------------------------------------------------------------

def duration(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


class Progress:
    """A tqdm bar on a terminal; otherwise one plain line per submission, with the rate and time left."""

    def __init__(self, total, stream=sys.stderr, to_skip=0):
        self.total, self.done, self.failed, self.stream = total, 0, 0, stream
        # The rate and the time left are of the submissions graded, not of those skipped (already graded,
        # `to_skip` of them foreseen), which take no time.
        self.to_skip, self.worked, self.skipped = to_skip, 0, 0
        self.started = time.monotonic()
        self.bar = None
        if stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="grading", unit="submission", file=stream, dynamic_ncols=True,
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]{postfix}")

    def __call__(self, outcome):
        self.done += 1
        self.failed += outcome.status == "failed"
        if outcome.status == "skipped":
            self.skipped += 1
        else:
            self.worked += 1
        if self.bar is not None:
            postfix = ", ".join(part for part in (f"skipped: {self.skipped}" if self.skipped else "",
                                                  f"failed: {self.failed}" if self.failed else "") if part)
            self.bar.set_postfix_str(postfix, refresh=False)
            if outcome.status == "skipped":  # the bar counts, times and rates the graded ones only
                self.bar.total -= 1
                self.bar.refresh()
            else:
                self.bar.update(1)
            if outcome.status == "failed":
                self.bar.write(escape(f"{outcome.student}: FAILED: {outcome.reason}"), file=self.stream)
            for what, where, why in outcome.problems:
                self.bar.write(escape(f"{outcome.student}: {what}: {where}"), file=self.stream)
            return
        width = len(str(self.total))
        if outcome.status == "skipped":
            print(escape(f"[{self.done:>{width}}/{self.total}] {outcome.student}: already graded, skipped"),
                  file=self.stream, flush=True)
            return
        elapsed = time.monotonic() - self.started
        rate = self.worked / elapsed if elapsed else 0.0
        left = ((self.total - self.done) - max(0, self.to_skip - self.skipped)) / rate if rate else 0.0
        what = (f"graded in {outcome.seconds:.1f} s" if outcome.status == "graded" else f"FAILED: {outcome.reason}")
        what += "".join(f"; {problem}: {where}" for problem, where, _ in outcome.problems)
        print(escape(f"[{self.done:>{width}}/{self.total}] {outcome.student}: {what}  "
                     f"({rate:.2f}/s, {duration(left)} left)"), file=self.stream, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def summary(outcomes, seconds, jobs, log_path, assignment, shard=None, program=PROGRAM):
    """The end of a run: how many were graded, skipped and failed; every graded submission that could not
    be read, timed out, crashed its kernel or ran out of memory, with where and why; the log."""
    counts = {status: [o for o in outcomes if o.status == status] for status in ("graded", "skipped", "failed")}
    part = f" (shard {shard[0]}/{shard[1]})" if shard else ""
    worked = len(counts["graded"]) + len(counts["failed"])  # the rate is of those graded, not those skipped
    rate = f", {worked / seconds:.2f} graded per second" if seconds and worked else ""
    lines = [f"{program}: {len(outcomes)} submissions of {assignment}{part} in {duration(seconds)} with "
             f"{jobs} worker{'s' if jobs != 1 else ''}{rate}",
             f"  graded:  {len(counts['graded'])}"]
    troubled = sorted((o for o in counts["graded"] if o.problems), key=lambda o: o.student)
    if troubled:
        lines.append(f"    {len(troubled)} of them graded with a problem (their scores stand; look at them):")
        for outcome in troubled:
            for what, where, why in outcome.problems:
                lines.append(f"    {outcome.student}: {what}: {where}: {why}")
    if counts["skipped"]:
        lines.append(f"  skipped: {len(counts['skipped'])} already graded (--force grades them again)")
    lines.append(f"  failed:  {len(counts['failed'])}")
    lines += [f"    {o.student}: {o.reason}" for o in sorted(counts["failed"], key=lambda o: o.student)]
    lines.append(f"  log:     {log_path}")
    return "\n".join(escape(line) for line in lines)  # a reason or a problem may quote what a student wrote


# The command ---------------------------------------------------------------------------------------

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
    from .grading import refuse_without_sandbox, remove_unfinished

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
