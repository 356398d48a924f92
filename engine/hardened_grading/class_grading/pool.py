"""The pool: worker processes, one submission each at a time; a worker that dies costs only its submission."""

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
        self.following = None  # the one it grades next: its kernel starts ahead (hardened_grading.sandbox.ahead)
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
