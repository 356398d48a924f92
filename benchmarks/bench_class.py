"""Grading a whole class: serial ``nbgrader autograde`` against ``posenc-grade --jobs N``, side by side in one run.

A class of 60 (a third right, a third with two realistic mistakes, a third blank) is graded, in turn:

1. by ``nbgrader autograde posenc --force``, one submission after another: the baseline;
2. by ``posenc-grade --force --jobs 1``: the same work in one worker (what the worker pool itself costs);
3. by ``posenc-grade --force --jobs J`` for J = 2 and up to the cores this process may use.

Then where a submission's time goes, each part measured on its own: starting a process that imports
nbgrader, starting the sandboxed grading kernel, running the graded notebook in it, and the gradebook's
share. And a model of the wall time, fitted on runs 2 and 3:

    T(n, J) = S + n * c / min(J, cores) / efficiency

S: the start-up of a worker (paid once, in parallel); c: the cost of one submission in one worker.

    python benchmarks/bench_class.py [--class-size 60] [--jobs 2]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from posenc_course.course import generate, nbgrader_env, new_course, run_nbgrader
from posenc_course.demo import MISTAKES
from posenc_course.grade_class import default_jobs
from posenc_course.submissions import make_submission, reference_answers, write_submission


def make_class(course, size):
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    kinds = [make_submission(answers, release_notebook=release),
             make_submission(answers, functions=MISTAKES, release_notebook=release),
             make_submission(release_notebook=release)]
    for number in range(size):
        write_submission(kinds[number % 3], course / "submitted", f"s{number:03d}")


def timed(command, course):
    started = time.perf_counter()
    result = subprocess.run(command, cwd=course, env=nbgrader_env(), capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return seconds


def serial(course):
    started = time.perf_counter()
    result = run_nbgrader(course, "autograde", "posenc", "--force")
    if result.returncode != 0:
        sys.exit(result.stdout[-3000:] + result.stderr[-3000:])
    return time.perf_counter() - started


def parallel(course, jobs):
    return timed([sys.executable, "-m", "posenc_course.grade_class", "--force", f"--jobs={jobs}"], course)


def nbgrader_startup():
    """Seconds to start a Python that imports what a worker imports before its first submission."""
    return min(timed([sys.executable, "-c", "import nbgrader.apps, nbgrader.api, posenc_course.grading"], ".")
               for _ in range(3))


def kernel_startup(course):
    """Seconds to start the sandboxed grading kernel and have it answer, best of 3."""
    from jupyter_client import KernelManager

    from posenc_course import kernel

    best = float("inf")
    for _ in range(3):
        manager = KernelManager(kernel_name=kernel.KERNEL_NAME, kernel_spec_manager=kernel.GradingKernelSpecManager())
        folder = tempfile.mkdtemp(prefix="posenc-kernel-")  # as ResilientExecute starts it: ipc, in a folder
        manager.transport, manager.ip = "ipc", os.path.join(folder, "kernel-ipc")
        manager.connection_file = os.path.join(folder, "kernel.json")
        started = time.perf_counter()
        manager.start_kernel(cwd=str(course), extra_arguments=["--sandbox=require", kernel.Limits().argument()])
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        best = min(best, time.perf_counter() - started)
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        shutil.rmtree(folder, ignore_errors=True)
    return best


def gradebook_share(course, students):
    """Seconds per submission of nbgrader's gradebook work in autograde: the six times it opens the
    gradebook, and what it reads and writes, replayed for `students` on a copy of the class's gradebook."""
    from nbgrader.api import Gradebook

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "gradebook.db"
        shutil.copy(course / "gradebook.db", copy)
        url = f"sqlite:///{copy}?timeout=60"
        started = time.perf_counter()
        for student in students:
            with Gradebook(url, "posenc") as gradebook:
                gradebook.update_or_create_student(student)
            with Gradebook(url, "posenc") as gradebook:
                gradebook.find_assignment("posenc")
            with Gradebook(url, "posenc") as gradebook:
                gradebook.update_or_create_submission("posenc", student)
            with Gradebook(url, "posenc") as gradebook:
                gradebook.find_notebook("exercises", "posenc")
            with Gradebook(url, "posenc") as gradebook:
                gradebook.find_assignment("posenc")
            with Gradebook(url, "posenc") as gradebook:  # SaveAutoGrades: every grade of the notebook
                notebook = gradebook.find_submission_notebook("exercises", "posenc", student)
                for grade in notebook.grades:
                    grade.auto_score = grade.max_score
                gradebook.db.commit()
        return (time.perf_counter() - started) / len(students)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class-size", type=int, default=60)
    parser.add_argument("--jobs", type=int, action="append",
                        help="worker counts to measure beyond 1 (default: 2 and one more than the cores)")
    args = parser.parse_args(argv)
    cores = default_jobs()
    jobs = sorted(set(args.jobs or [2, cores + 1]) - {1})
    n = args.class_size

    with tempfile.TemporaryDirectory() as tmp:
        course = new_course(Path(tmp) / "course")
        make_class(course, n)
        print(f"A class of {n} (right, two mistakes, blank, in turn) on {cores} cores "
              f"({os.cpu_count()} on the machine):", flush=True)
        runs = {"serial": serial(course)}
        print(f"1. nbgrader autograde, serial        {runs['serial']:7.1f} s   {runs['serial'] / n:5.2f} s each   1.00x",
              flush=True)
        for j in [1, *jobs]:
            runs[j] = parallel(course, j)
            print(f"{2 if j == 1 else 3}. posenc-grade --jobs {j:<2}             {runs[j]:7.1f} s   "
                  f"{runs[j] / n:5.2f} s each   {runs['serial'] / runs[j]:4.2f}x"
                  + ("   (goal with 2 workers on 2 cores: at least 1.70x)" if j == 2 else ""), flush=True)

        startup, kernel_start = nbgrader_startup(), kernel_startup(course)
        from bench_grading import execute_seconds, graded_notebook  # the notebook alone, as benchmark 1 there

        notebook = graded_notebook(course / "source" / "posenc" / "exercises.ipynb")
        execution = min(execute_seconds(notebook) for _ in range(3))
        gradebook = gradebook_share(course, [f"s{i:03d}" for i in range(min(n, 20))])
        per = runs[1] / n
        print("\nWhere one submission's time goes (each part measured on its own):")
        print(f"   a worker's start-up (Python, nbgrader, posenc_course)  {startup:5.2f} s   once per worker")
        print(f"   the sandboxed grading kernel's start-up                 {kernel_start:5.2f} s   "
              f"{kernel_start / per:4.0%} of a submission")
        print(f"   the graded notebook, run in a plain kernel (start-up included)  {execution:5.2f} s")
        print(f"   the gradebook (six openings and the grades' writes)     {gradebook:5.2f} s   {gradebook / per:4.0%}")
        print(f"   one submission in one worker, all in                    {per:5.2f} s   (run 2 / {n})")

        # T(n, J) = S + n c / min(J, cores) / efficiency, S and c from the 1-worker run
        c = (runs[1] - startup) / n
        print(f"\nModel: T(n, J) = {startup:.1f} s + n * {c:.2f} s / min(J, {cores}) / efficiency")
        for j in jobs:
            ideal = startup + n * c / min(j, cores)
            efficiency = (n * c / min(j, cores)) / max(runs[j] - startup, 1e-9)
            print(f"   J={j}: ideal {ideal:6.1f} s, measured {runs[j]:6.1f} s: efficiency {efficiency:4.0%} "
                  "(what the shared cores, memory bandwidth and the gradebook leave)")
        print(f"   For 1,000 submissions on {cores} cores: about "
              f"{(startup + 1000 * c / cores / 0.9) / 60:.0f} min at 90% efficiency, against "
              f"{1000 * runs['serial'] / n / 60:.0f} min serially")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
