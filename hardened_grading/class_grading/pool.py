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

import multiprocessing
import os
import time
from multiprocessing.connection import wait

from .worker import Outcome, work


class Worker:
    def __init__(self, context, course, db_url, log_path):
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=work, args=(course, db_url, log_path, child_end, os.getpid()))
        self.process.start()
        child_end.close()
        self.ready = False
        self.student = None  # the one it is grading
        self.following = None  # the one it grades next: its kernel starts ahead (hardened_grading.class_grading.ahead)
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
                        from ..hooks.unfinished import remove_unfinished

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
