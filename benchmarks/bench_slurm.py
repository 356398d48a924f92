"""A class graded on a one-node Slurm cluster, next to posenc-grade on the same machine, in one run.

The same class of 60 (bench_class.make_class: right, two mistakes, blank, in turn), in two courses with a PostgreSQL
gradebook each (a server started here, :func:`posenc_course.qa.postgres.postgresql_server`):

1. ``posenc-grade --jobs 2``: one command, two workers.
2. ``python -m posenc_course.slurm --tasks 2 --cpus 1``: an array of two tasks of one CPU each, one worker each, on a
   one-node cluster started here (:mod:`posenc_course.qa.slurm_cluster`), then the job that finishes the class. Timed
   from the submission to the end of the finish job, as Slurm records it, and in its parts.

Needs root, Slurm, munge and PostgreSQL (``make test-tools``).

    python benchmarks/bench_slurm.py [--class-size N]
"""

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench_class import machine, make_class
from posenc_course.course import nbgrader_env, new_course
from posenc_course.qa.postgres import postgresql_server, postgresql_unavailable
from posenc_course.qa.slurm_cluster import one_node_cluster, program, unavailable


def course_on(folder, size, db_url):
    course = new_course(folder)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.CourseDirectory.db_url = {db_url!r}\n")
    make_class(course, size)
    return course


def slurm_times(cluster, job):
    """``(start, end)`` of `job` (every task of an array), as Slurm recorded them, in seconds since the epoch."""
    shown = subprocess.run([program("scontrol"), "show", "job", job, "-o"], env=cluster, capture_output=True,
                           text=True, timeout=30, check=True).stdout

    def stamps(key):
        return [datetime.fromisoformat(value).timestamp() for value in re.findall(rf"\b{key}=(\S+)", shown)]

    return min(stamps("StartTime")), max(stamps("EndTime"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class-size", type=int, default=60)
    args = parser.parse_args(argv)
    # Stopped (kill, a CI timeout): end through the `with` blocks, which stop the cluster and the server.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    why = unavailable() or postgresql_unavailable()
    if why:
        sys.exit(f"bench_slurm: {why}")

    print(machine())
    with tempfile.TemporaryDirectory() as tmp, postgresql_server() as new_database:
        tmp = Path(tmp)
        local = course_on(tmp / "local", args.class_size, new_database())
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "posenc_course.instructor.grade", "--jobs", "2"], cwd=local,
                              env=nbgrader_env(), capture_output=True, text=True)
        local_seconds = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(done.stdout + done.stderr[-3000:])

        with one_node_cluster(cpus=2) as cluster:
            on_slurm = course_on(tmp / "slurm", args.class_size, new_database())
            submitted = time.time()
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "posenc_course.slurm", "--tasks", "2", "--cpus", "1",
                                   "--wait"], cwd=on_slurm, env={**nbgrader_env(), "SLURM_CONF": cluster["SLURM_CONF"]},
                                  capture_output=True, text=True)
            waited = time.perf_counter() - started
            if done.returncode != 0:
                sys.exit(done.stdout + done.stderr)
            array, finish = re.search(r"job (\d+), .* then job (\d+)", done.stdout).groups()
            array_start, array_end = slurm_times(cluster, array)
            finish_start, finish_end = slurm_times(cluster, finish)

    n = args.class_size
    total = finish_end - submitted
    print(f"A class of {n} (right, two mistakes, blank, in turn), one PostgreSQL gradebook, 2 cores:")
    print(f"1. posenc-grade --jobs 2                               {local_seconds:6.1f} s")
    print(f"2. Slurm, 2 array tasks of 1 CPU, then the finish job  {total:6.1f} s   "
          f"{total / local_seconds:.2f}x posenc-grade's time")
    print(f"   submission to the first task's start                {array_start - submitted:6.1f} s")
    print(f"   the array: first start to last end                  {array_end - array_start:6.1f} s")
    print(f"   the last task's end to the finish job's start       {finish_start - array_end:6.1f} s")
    print(f"   the finish job (posenc-grade skipping {n}, grades.csv, the class report)  {finish_end - finish_start:5.1f} s")
    print(f"   (python -m posenc_course.slurm --wait returned after {waited:.1f} s)")
    print("Slurm records times to the second.")


if __name__ == "__main__":
    main()
