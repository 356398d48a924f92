"""One worker: it imports nbgrader once, and grades one submission after another with nbgrader's own ``Autograde``."""

import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..judge.messages import elide
from ..nbgrader_app import load_config, nbgrader_api, nbgrader_env
from ..sandbox.parent import die_with_parent
from ..untrusted.terminal import INDENT, escape, log_text
from ..sandbox import ahead


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
    bound to this process (:func:`hardened_grading.sandbox.parent.bind_to_grader`) and bwrap ends the sandbox.
    """
    grading = sys.modules.get("hardened_grading.preprocessors.execute")  # loaded by nbgrader once it has graded
    if grading:
        grading.remove_kernel_folders(os.getpid())
    ahead.remove_staging_folders(Path.cwd(), os.getpid())
    os._exit(0)


def graded_marker(course, student, assignment):
    from ..hooks.submission import GRADED_MARKER

    marker = Path(course) / "autograded" / student / assignment / GRADED_MARKER
    return marker.stat().st_mtime_ns if marker.exists() else None


def failure_reason(result):
    """One line on why nbgrader's autograde of one student failed: its error's last line, or its log's
    last error."""
    error_lines = [line for line in result.get("error", "").splitlines() if line.strip()]
    logged = [line for line in result.get("log", "").splitlines() if line.startswith(("[ERROR]", "[CRITICAL]"))]
    reason = logged[-1] if logged else (error_lines[-1] if error_lines else "nbgrader reported a failure")
    return elide(reason.removeprefix("[ERROR] ").removeprefix("[CRITICAL] "), 300)


def course_parts(config):
    """``part_of(grade id)`` of the course whose configuration is `config` (its ``FeedbackSummary.part_pattern``),
    or None when it sets none."""
    from ..summary import part_by_pattern

    pattern = config.FeedbackSummary.get("part_pattern", "")
    return part_by_pattern(pattern) if pattern else None


def problems_of(course, student, assignment, part_of=None):
    """:func:`hardened_grading.incidents.incidents` of a student's graded notebooks, each named when the
    assignment has several (none for a notebook that cannot be read: nbgrader's own failure says why); a cell's
    part (``part_of(grade id)``: the course's ``FeedbackSummary.part_pattern``) is said with it."""
    import nbformat

    from ..incidents import incidents

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
        from ..hooks.unfinished import lock_submissions_while_graded

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
