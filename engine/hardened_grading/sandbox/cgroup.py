"""The cap on a kernel's processes, through a cgroup of its own (pids controller), and the clean-up of empty ones."""

import os
import resource
import time
from pathlib import Path

from .. import processes
from .limits import Limits


def cap_processes(limit):
    """Cap the processes and threads this process and its descendants may have; return how, or why not.

    A pids cgroup of its own where the grader may make one (root, or a delegated cgroup); otherwise,
    for a user other than root, ``RLIMIT_NPROC`` (which counts all the user's processes, so the cap is
    `limit` more than the user has now). Root is exempt from ``RLIMIT_NPROC``.
    """
    made = _pids_cgroup(limit)
    if made:
        return f"a pids cgroup of its own ({made})"
    if os.geteuid() == 0:
        return None
    now = _tasks_of_user(os.getuid())
    resource.setrlimit(resource.RLIMIT_NPROC, (now + limit, now + limit))
    return f"RLIMIT_NPROC ({now} tasks of this user + {limit})"


def process_cap_problem():
    """None when :func:`cap_processes` can cap a sandbox's processes here; otherwise why not."""
    if os.geteuid() != 0:
        return None
    trial = os.fork()
    if trial == 0:  # a child tries, so that this process stays in its own cgroup
        os._exit(0 if _pids_cgroup(Limits.processes) else 1)
    _, status = os.waitpid(trial, 0)
    remove_stale_cgroups()
    if os.waitstatus_to_exitcode(status) == 0:
        return None
    return ("the grader runs as root, which RLIMIT_NPROC does not limit, and cannot make a pids cgroup here "
            "(a container without write access to /sys/fs/cgroup?): a fork bomb is stopped only by the time limit "
            "and the end of its cell. Grade as an ordinary user, or give the container its own cgroup")


def _tasks_of_user(uid):
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return count


def _pids_parents():
    """The cgroups this process is in that have the pids controller (cgroup v1's pids hierarchy, or v2)."""
    for line in _read("/proc/self/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            yield Path("/sys/fs/cgroup/pids") / path.lstrip("/")
        elif controllers == "":
            folder = Path("/sys/fs/cgroup") / path.lstrip("/")
            if "pids" in _read(folder / "cgroup.controllers").split():
                yield folder


def _pids_cgroup(limit):
    """Make a pids cgroup capped at `limit`, move this process into it, return its path; None if not possible."""
    for parent in _pids_parents():
        group = parent / f"hardened-grading-kernel-{os.getpid()}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(limit))
            (group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            try:
                group.rmdir()
            except OSError:
                pass
            continue
        return str(group)
    return None


def _read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def remove_stale_cgroups():
    """Remove the pids cgroups of kernels that have ended (named by their launcher's pid, which was bwrap's).

    A kernel's sandbox ends with bwrap; what its cgroup still holds once bwrap has ended is left over (a sandbox
    whose grader died while it started, before its parent-death signals held) and is killed first: left there, it
    would run for ever, and each grading run after it would wait here for its group to empty."""
    for parent in _pids_parents():
        for group in parent.glob("hardened-grading-kernel-*"):
            pid = group.name.rpartition("-")[2]
            if pid.isdigit() and processes.ended(pid):
                _kill_members(group)
                for _ in range(20):  # the sandbox's last processes may still be dying
                    try:
                        group.rmdir()
                        break
                    except OSError:
                        time.sleep(0.05)


def _kill_members(group):
    """SIGKILL each process in the cgroup `group` (:func:`hardened_grading.processes.kill_each`: its membership is
    read again while it is held, so a pid given to another process meanwhile is not killed)."""
    def in_group(pid):
        return any(line.endswith(f"/{group.name}") for line in _read(f"/proc/{pid}/cgroup").splitlines())

    processes.kill_each(_read(group / "cgroup.procs").split(), in_group)
