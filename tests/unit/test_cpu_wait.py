"""What a test cell's time limit charges: wall-clock time less the waits for a CPU (hardened_grading.cpu_wait)."""

import os
import subprocess
import sys
import time

from hardened_grading import cpu_wait
from hardened_grading.judge import link


def schedstat(path, waited_ns):
    path.write_text(f"123456 {waited_ns} 7\n")
    return str(path)


def test_the_waits_of_each_thread_count_from_when_it_was_added(tmp_path):
    first, second = schedstat(tmp_path / "a", 5 * 10**9), schedstat(tmp_path / "b", 40 * 10**9)
    add, waited = cpu_wait.counter(first, None)
    assert waited() == 0.0
    schedstat(tmp_path / "a", 7 * 10**9)
    assert waited() == 2.0
    add(second)  # its 40 s of waits before it was added are not this cell's
    add(second)
    schedstat(tmp_path / "b", 41 * 10**9)
    assert waited() == 3.0
    (tmp_path / "a").unlink()  # a thread that ended counts no more
    assert waited() == 1.0


def test_a_limit_is_stretched_at_most_max_stretch_times():
    assert cpu_wait.charged(8.0, 0.0) == 8.0
    assert cpu_wait.charged(8.0, 5.0) == 3.0
    assert cpu_wait.charged(8.0, 100.0) == 8.0 / cpu_wait.MAX_STRETCH


def test_a_busy_process_waits_and_a_sleeping_thread_does_not():
    """The counts are Linux's own: a process ready to run beside busy ones on its CPU waits; a sleeping thread
    does not."""
    cpu = min(os.sched_getaffinity(0))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             preexec_fn=lambda: os.sched_setaffinity(0, {cpu})) for _ in range(2)]
    try:
        _, waited = cpu_wait.counter(f"/proc/{busy[0].pid}/schedstat")
        _, slept = cpu_wait.counter(cpu_wait.this_thread())
        time.sleep(0.5)
        # two processes on one CPU: each waits about half the time
        assert waited() > 0.1 and slept() < 0.05, (waited(), slept())
    finally:
        for process in busy:
            process.kill()
            process.wait()


def test_a_kernel_without_a_sandbox_is_its_own_process_and_an_ended_one_is_none():
    assert cpu_wait.kernel_thread(os.getpid()) == f"/proc/{os.getpid()}/schedstat"
    assert cpu_wait.kernel_thread(None) is None
    assert cpu_wait.run_delay("/proc/0/no-such-file") is None


def test_a_test_cell_that_waited_for_a_cpu_has_that_time_left(tmp_path):
    path = schedstat(tmp_path / "kernel", 0)
    _, waited = cpu_wait.counter(path)
    run = link.TestCellRun(0, 5.0, waited, started=time.monotonic() - 4.0)
    assert run.remaining() < 1.5
    schedstat(tmp_path / "kernel", 3 * 10**9)  # 3 of its 4 s waiting for a CPU
    assert 3.5 < run.remaining() <= 4.0


def test_the_waits_never_take_a_test_cell_past_the_submissions_budget(tmp_path):
    path = schedstat(tmp_path / "kernel", 3 * 10**9)
    _, waited = cpu_wait.counter(path)
    run = link.TestCellRun(0, 5.0, waited, started=time.monotonic() - 4.0, wall_seconds=4.5)
    schedstat(tmp_path / "kernel", 6 * 10**9)  # 3 of its 4 s waiting for a CPU: 4 s of its limit left ...
    assert run.remaining() <= 0.5  # ... but half a second of the submission's
