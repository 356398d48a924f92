"""The grading kernel: an ordinary IPython kernel in a sandbox that sees and keeps only what it needs.

``nbgrader_config.py`` runs student code in the kernel ``hardened-grading``, whose command is this
module (:class:`GradingKernelSpecManager`). Started by the grader
(:class:`hardened_grading.grading.ResilientExecute`), it

- starts the kernel in a fresh bubblewrap sandbox (``bwrap``, Linux only), built from an allow-list:

  - no network at all (its own network namespace); the grader reaches the kernel over the ``ipc``
    transport, Unix sockets in a private folder made for this one kernel and bound into the sandbox;
  - read-only: the system's programs and libraries (``/usr`` and its links), the few files of
    ``/etc`` the dynamic linker needs, the Python environment and this package;
  - writable: the student's own folder (``autograded/STUDENT/ASSIGNMENT``) and a private ``/tmp``,
    a size-capped tmpfs that vanishes with the kernel;
  - nothing else: not the grader's home, not the course's private parts, not other students;
  - its own PID namespace: whatever the submission starts dies with its kernel;
  - no capabilities, a new session, a clean environment (of the grader's variables, only the harmless ones that
    ``ResilientExecute.inherited_environment`` names: :func:`sandbox_environment`);

- applies :class:`Limits`: processes and threads, CPU time per cell, file size, the private ``/tmp``,
  memory, and numpy's BLAS threads (output is capped on the grader's side);
- then starts ipykernel as usual.

The grader passes its settings as the kernel's extra arguments: ``--sandbox=MODE`` (one of
:data:`SANDBOX_MODES`; without it, ``require``: a kernel that cannot be sandboxed does not start,
and says what to do) and ``--limits=NAME=VALUE,...`` (:meth:`Limits.argument`).
"""

import fnmatch
import functools
import importlib.util
import json
import logging
import math
import os
import re
import resource
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from .cells import course_root
from .terminal import capture_output

KERNEL_NAME = "hardened-grading"
# require: no sandbox, no kernel (grading a class); if-available: sandboxed where bubblewrap works,
# else plain (posenc-check: a learner's own notebook); off: never sandboxed (trusted submissions).
SANDBOX_MODES = ("require", "if-available", "off")


@dataclass(frozen=True)
class Limits:
    """What one grading kernel may use. The defaults are the course's; an instructor changes them with
    the ``ResilientExecute`` traitlets of the same names in ``nbgrader_config.py``. Honest work uses a
    small part of each: under 1 s of CPU per cell, about 20 threads, no files, under 200 MiB."""

    memory_mb: int = 3072  #: address space of each process (MiB): beyond it, MemoryError
    processes: int = 128  #: processes and threads in the sandbox, the kernel's own included
    cpu_seconds_per_cell: int = 60  #: CPU time one cell may use (a backstop to the wall-clock timeout)
    cpu_seconds_total: int = 900  #: CPU time the kernel and each process it starts may use in all
    file_mb: int = 64  #: the largest file a process may write (MiB): beyond it, OSError
    tmp_mb: int = 256  #: size of the private /tmp (MiB): beyond it, OSError (no space left)
    blas_threads: int = 1  #: threads numpy's BLAS (OpenBLAS, MKL, OpenMP) may use
    kernel_log_kb: int = 64  #: what the kernel writes to its own stdout and stderr that reaches the grader's (KiB)

    def argument(self):
        """The kernel's command-line argument that carries these limits."""
        return "--limits=" + ",".join(f"{name}={value}" for name, value in asdict(self).items())

    @classmethod
    def parse(cls, text):
        """The limits of a ``--limits=`` argument's value; the names it leaves out keep their defaults."""
        known = {f.name for f in fields(cls)}
        values = {}
        for item in filter(None, text.split(",")):
            name, _, value = item.partition("=")
            if name not in known or not value.isdigit() or int(value) < 1:
                raise ValueError(f"--limits: {item!r}: expected NAME=N with N >= 1, NAME one of {', '.join(sorted(known))}")
            values[name] = int(value)
        return cls(**values)



def limit_memory(megabytes):
    """Cap this process's address space; return None, or why it could not be done."""
    limit = int(megabytes) * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as error:  # macOS does not enforce RLIMIT_AS, and may refuse it
        return f"the kernel's memory limit could not be set on this platform ({error})"
    return None


SANDBOX_ADVICE = ("To grade, use Linux with bubblewrap (sudo apt-get install bubblewrap on Debian or Ubuntu, "
                  "sudo dnf install bubblewrap on Fedora; `make install` installs it when run as root), or, "
                  "only for submissions you trust, set c.ResilientExecute.sandbox = 'off' in nbgrader_config.py "
                  "(docs/install.md: Platforms).")
#: What grading without the sandbox means, said once per run where it happens.
UNSANDBOXED_MEANS = ("student code runs with your own permissions: it can read your files (your home folder, "
                     "the course's hidden tests and gradebook), use the network, and leave processes running")

# Every feature the sandbox uses, tried once: an old bubblewrap, or a machine without user namespaces, fails here.
_TRIAL = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL",
          "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--size", str(2**20), "--tmpfs", "/tmp", "true"]


#: Seconds the sandbox probe may take before it is taken as slow (a busy machine), not as failed.
PROBE_SECONDS = 30


def sandbox_problem(seconds=PROBE_SECONDS):
    """None when bubblewrap can sandbox a kernel here (or its probe is only slow); otherwise why not, in a few words.

    The probe is the sandbox's every feature, tried once. It writes to a file, not a pipe: nothing waits on
    a pipe that a stuck child holds open. One that runs over `seconds` is killed, and the machine is taken
    as busy, not as lacking the sandbox: a busy machine never makes the grader refuse to grade. (If bwrap
    really hangs here, each kernel fails to start, and each submission says so.)
    """
    if not sys.platform.startswith("linux"):
        return f"bubblewrap, the grading sandbox, exists only on Linux, and this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap), the grading sandbox, is not installed"
    with tempfile.TemporaryFile() as said:
        try:
            trial = subprocess.Popen(_TRIAL, stdin=subprocess.DEVNULL, stdout=said, stderr=said)
        except OSError as error:
            return f"bubblewrap is installed but could not be run ({error})"
        try:
            code = trial.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            trial.kill()  # --die-with-parent: its child goes too
            trial.wait()
            print(f"hardened_grading kernel: the sandbox probe took over {seconds} s (a busy machine?); going on with the "
                  "sandbox", file=sys.stderr)
            return None
        said.seek(0)
        stderr = said.read().decode(errors="replace")
    if code != 0:
        return (f"bubblewrap is installed but cannot make a sandbox here ({' '.join(stderr.split())[:200]}); "
                "it needs unprivileged user namespaces, or root, and bubblewrap 0.8 or newer")
    return None


@functools.lru_cache(maxsize=1)
def _grading_kernel_spec_manager():
    from jupyter_client.kernelspec import KernelSpecManager

    class GradingKernelSpecManager(KernelSpecManager):
        """Jupyter's kernel specs, and the grading kernel's, which is installed nowhere.

        The grader asks for its kernel (``ResilientExecute.kernel_name``, :data:`KERNEL_NAME` by default) through this manager
        (:meth:`hardened_grading.grading.ResilientExecute.create_kernel_manager`). It is not written into any
        ``share/jupyter/kernels``: JupyterLab's Launcher and kernel menu, which a student uses, never offer it.
        """

        grading_kernel_name = KERNEL_NAME  #: the name the grader asks for (ResilientExecute.kernel_name)

        def get_kernel_spec(self, kernel_name):
            if kernel_name != self.grading_kernel_name:
                return super().get_kernel_spec(kernel_name)
            return self.kernel_spec_class(
                resource_dir=str(Path(__file__).parent),
                argv=[*launcher_command(), "-f", "{connection_file}"],
                display_name="Python 3 (hardened grading sandbox)",
                language="python",
                interrupt_mode="message",  # a signal would reach bwrap, not the kernel
                metadata={"debugger": False},
            )

    GradingKernelSpecManager.__module__, GradingKernelSpecManager.__qualname__ = __name__, "GradingKernelSpecManager"
    return GradingKernelSpecManager


#: The grading kernel's launcher, as Python runs it. Not ``python -m hardened_grading.kernel``: ``-m`` (and ``-c``)
#: put the working folder first on ``sys.path``, and the launcher starts in the student's folder, outside the sandbox
#: the first time: a ``hardened_grading/`` package or a ``runpy.py`` of the student's there would be imported in
#: place of the engine's, as the grader's user; inside the sandbox, in place of the code that sets its limits. The
#: working folder is taken off ``sys.path`` before anything is imported (``sys`` is built in).
LAUNCH = ("import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; import runpy; "
          "runpy.run_module('hardened_grading.kernel', run_name='__main__', alter_sys=True)")


def launcher_command():
    """The command that starts the grading kernel's launcher (:data:`LAUNCH`), before its arguments."""
    return [sys.executable, "-c", LAUNCH]


def __getattr__(name):
    """``GradingKernelSpecManager``, made when the grader first asks for it: this module is also the grading
    kernel's launcher, which starts twice per submission (outside the sandbox, then inside), and need not
    import jupyter_client for that (0.1 s; `make bench`)."""
    if name == "GradingKernelSpecManager":
        return _grading_kernel_spec_manager()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The sandbox ------------------------------------------------------------------------------------

#: Read-only system paths: programs and libraries (bound, or re-made as the links they are on a merged /usr).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: The only files of /etc the sandbox sees: what the dynamic linker, the time zone and fonts need. Its
#: /etc/passwd and /etc/group are made up (:func:`_account_files`): one user, with /tmp as its home.
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/fonts")
#: Imported by the kernel: where they live is bound read-only when it is outside the environment.
KERNEL_PACKAGES = ("ipykernel", "IPython", "numpy", "zmq", "traitlets", "jupyter_client", "tornado")


class SandboxError(RuntimeError):
    """The sandbox cannot be made for this kernel; the message says why and what to do."""


def connection_folder(connection_file):
    """The private folder of a kernel's ``ipc`` sockets and connection file, checked; raise SandboxError.

    The sandbox has no network: the kernel must use the ``ipc`` transport (``ResilientExecute`` sets it).
    The folder is bound into the sandbox, so it must hold nothing but this kernel's files: not Jupyter's
    shared runtime folder, with other kernels' keys.
    """
    try:
        info = json.loads(Path(connection_file).read_text())
    except (OSError, ValueError) as error:
        raise SandboxError(f"cannot read the connection file {connection_file} ({error})") from None
    if info.get("transport") != "ipc":
        raise SandboxError("the sandboxed kernel has no network, so it needs Jupyter's ipc transport, and this "
                           f"kernel was started with {info.get('transport')!r}; nbgrader autograde with this course's "
                           "nbgrader_config.py (ResilientExecute) starts it so")
    folder = Path(connection_file).resolve().parent
    if Path(info["ip"]).resolve().parent != folder:
        raise SandboxError(f"the kernel's ipc sockets ({info['ip']}) are not beside its connection file")
    own = re.compile(re.escape(Path(connection_file).name) + "|" + re.escape(Path(info["ip"]).name) + r"-\d+")
    strangers = [p.name for p in folder.iterdir() if not own.fullmatch(p.name)]
    if strangers:
        raise SandboxError(f"the kernel's folder {folder} holds other files ({', '.join(sorted(strangers)[:3])}); "
                           "it is bound into the sandbox, so it must be private to the kernel")
    return folder


def _inside(path, folder):
    return path == folder or folder in path.parents


def _read_only_environment(root):
    """The paths of the Python environment the kernel needs, none of which holds the course `root`."""
    paths = {Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}}
    paths.add(Path(__file__).resolve().parent)  # this package (the kernel's own start-up)
    for name in KERNEL_PACKAGES:
        spec = importlib.util.find_spec(name)
        location = Path(spec.origin).resolve().parents[1] if spec and spec.origin else None
        if location and not any(_inside(location, p) for p in paths):
            paths.add(location)
    for path in paths:
        if _inside(root, path) and path != Path("/usr"):
            raise SandboxError(f"the Python environment at {path} contains the course folder {root}, which the "
                               "sandbox must hide: keep the course outside the environment")
    return sorted(paths)


def read_only_problem(path, root):
    """None if `path` may be bound read-only into the sandbox of a kernel of the course at `root`; else why not."""
    path = Path(path)
    if not path.is_absolute():
        return f"{path} is not an absolute path"
    if not path.exists():
        return f"{path} does not exist"
    resolved, root = path.resolve(), Path(root).resolve()
    if _inside(root, resolved):
        return (f"{path} holds the course folder {root} (its hidden tests, its gradebook), which the sandbox must "
                "hide: give the folder of the data itself")
    if _inside(resolved, root):
        return (f"{path} is inside the course folder {root}: put what the notebooks read beside them (nbgrader "
                "copies it into each student's folder), or outside the course")
    return None


def sandbox_command(cwd, folder, limits, read_only=(), seen_as=None):
    """The ``bwrap`` arguments that start a command in a fresh sandbox (see the module's docstring).

    `cwd` is the kernel's working folder: writable when it is a student's folder (inside the course's
    ``autograded/``), otherwise not bound at all, and the kernel starts in ``/tmp``. `seen_as`, for a kernel
    started ahead (:mod:`hardened_grading.ahead`), is the student's folder that `cwd` (a staging folder, also in
    ``autograded/``) will become: the kernel sees `cwd` there, and starts there. `folder` is the
    kernel's private connection folder (:func:`connection_folder`). `read_only` are more paths bound
    read-only at their own place (``ResilientExecute.read_only_paths``: a data set, another library's
    files); raise SandboxError for one that :func:`read_only_problem` refuses, or for a `seen_as` outside
    ``autograded/``.
    """
    root = course_root(cwd)
    args = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--hostname", "hardened-grading", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            # the private /tmp first: what is bound below may live under the host's /tmp (a course or
            # an environment made there), and a tmpfs mounted later would hide it
            "--size", str(limits.tmp_mb * 2**20), "--tmpfs", "/tmp"]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in SYSTEM_FILES:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for path in _read_only_environment(root):
        args += ["--ro-bind", str(path), str(path)]
    for path in read_only:
        problem = read_only_problem(path, root)
        if problem:
            raise SandboxError(f"ResilientExecute.read_only_paths: {problem}")
        args += ["--ro-bind", str(Path(path).resolve()), str(path)]
    args += ["--dev", "/dev", "--proc", "/proc", "--bind", str(folder), str(folder)]
    student_folder = cwd.resolve()
    if (root / "autograded") in student_folder.parents:
        target = student_folder
        if seen_as is not None:
            target = Path(os.path.abspath(seen_as))
            if (root / "autograded") not in target.parents:
                raise SandboxError(f"--student-folder={seen_as}: not a folder in {root / 'autograded'}")
        args += ["--bind", str(student_folder), str(target), "--chdir", str(target)]
    else:
        args += ["--chdir", "/tmp"]
    return args + ["--remount-ro", "/dev"]  # /dev/shm would be writable, and not size-capped


#: The grader's environment variables that reach the sandboxed kernel by default
#: (``ResilientExecute.inherited_environment``): those stock nbgrader's kernel would inherit that change how the
#: notebook's own code behaves, the same way for every student, and reveal nothing. Bytecode (no ``__pycache__``
#: left in the graded folder), the hash seed, the warning filters, UTF-8 mode and the text encoding, the locale and
#: the time zone. Not ``MPLBACKEND``: the sandbox has no display, and a notebook expects ipykernel's own inline
#: backend (a grader's ``TkAgg`` would make ``import matplotlib.pyplot`` fail there).
INHERITED_ENVIRONMENT = ("PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONWARNINGS", "PYTHONUTF8",
                         "PYTHONIOENCODING", "LANG", "LANGUAGE", "LC_*", "TZ")
#: Variables no pattern lets through: those the sandbox sets itself (:func:`sandbox_environment`; ``LANG`` is only
#: its default) and those that would change what the kernel runs or where it writes (a file run at start, a
#: library preloaded, another import path or bytecode folder), or name the grader's own Jupyter.
NEVER_INHERITED = ("PATH", "HOME", "TMPDIR", "IPYTHONDIR", "MPLCONFIGDIR", "HARDENED_GRADING_*", "PYTHONPATH",
                   "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONPYCACHEPREFIX", "PYTHONEXECUTABLE",
                   "PYTHONPLATLIBDIR", "PYTHONBREAKPOINT", "PYTHONINSPECT", "PYTHONSAFEPATH", "PYTHONNOUSERSITE",
                   "LD_*", "*_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "JUPYTER_*", "JPY_*")


def never_inherited(name):
    """Whether the variable `name` is one no pattern of ``inherited_environment`` lets through (:data:`NEVER_INHERITED`)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in NEVER_INHERITED)


def inherited(patterns, environ=None):
    """The variables of `environ` (the process's environment) whose names match one of `patterns` (glob patterns,
    case-sensitive: ``LC_*``) and are not :func:`never_inherited`."""
    environ = os.environ if environ is None else environ
    return {name: value for name, value in environ.items()
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns) and not never_inherited(name)}


def sandbox_environment(limits, inherit=()):
    """The sandboxed kernel's whole environment: nothing of the grader's (tokens, paths, JPY_PARENT_PID) but the
    variables that `inherit` (glob patterns: ``ResilientExecute.inherited_environment``) lets through (:func:`inherited`)."""
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
           "LANG": "C.UTF-8", "IPYTHONDIR": "/tmp/.ipython", "MPLCONFIGDIR": "/tmp/.matplotlib",
           "HARDENED_GRADING_IN_SANDBOX": "1",
           # the kernel's start-up inside runs this same hardened_grading (the only folder of its parent
           # that is bound), even when the grader found it on its own PYTHONPATH
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[name] = str(limits.blas_threads)
    env.update(inherited(inherit))
    return env


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


def _account_files():
    """bwrap arguments for an /etc/passwd and /etc/group that name only the sandbox's one user, read
    from pipes (so that ``getpass.getuser()`` and ``~`` work, and no account of the machine shows)."""
    uid, gid = os.getuid(), os.getgid()
    args = []
    for path, text in [("/etc/passwd", f"sandbox:x:{uid}:{gid}:hardened grading sandbox:/tmp:/bin/sh\n"),
                       ("/etc/group", f"sandbox:x:{gid}:\n")]:
        read_end, write_end = os.pipe()
        os.write(write_end, text.encode())
        os.close(write_end)
        os.set_inheritable(read_end, True)
        args += ["--file", str(read_end), path]
    return args


def remove_stale_cgroups():
    """Remove the pids cgroups of kernels that have ended (they are empty, and named by their pid)."""
    for parent in _pids_parents():
        for group in parent.glob("hardened-grading-kernel-*"):
            pid = group.name.rpartition("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                for _ in range(20):  # the sandbox's last processes may still be dying
                    try:
                        group.rmdir()
                        break
                    except OSError:
                        time.sleep(0.05)


def die_with_parent(signum=signal.SIGKILL):
    """Have the kernel (Linux's) send this process `signum` when its parent dies, even by SIGKILL. It is
    kept across ``exec``: bwrap's outer process, killed so, ends the sandbox and its PID namespace
    (``--die-with-parent``); a grading worker (:mod:`hardened_grading.grade_class`), sent SIGTERM, stops its
    kernel on the way out."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def watch_grader(grader):
    """Before this launcher becomes bwrap: fork a watcher, outside the sandbox, that SIGKILLs it (bwrap, and with it
    the sandbox) as soon as the grader is gone.

    The launcher's parent-death signal is kept across ``exec``, and bwrap sets its own (``--die-with-parent``), but
    bwrap clears it while it starts, and a grader killed in that window would leave the sandbox running. The
    watcher closes the window: it holds a pidfd of the grader (Linux 5.3 and later; elsewhere, no watcher) and
    ends with the launcher (its own parent-death signal). Nothing of it is inside the sandbox: the student's code
    can neither see it nor use the pidfd.
    """
    try:
        pidfd = os.pidfd_open(grader)
    except (AttributeError, OSError):
        return
    if os.getppid() != grader:  # the grader died before the pidfd was opened: the pid may be another's
        os._exit(1)
    launcher = os.getpid()
    try:
        watcher = os.fork()
    except OSError:
        os.close(pidfd)
        return
    if watcher:
        os.close(pidfd)
        return
    try:  # the watcher
        import select

        die_with_parent(signal.SIGKILL)
        if os.getppid() == launcher:
            os.closerange(0, pidfd)
            os.closerange(pidfd + 1, 1024)
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            while not poller.poll():
                pass
            os.kill(launcher, signal.SIGKILL)  # bwrap, by now: the sandbox ends with it
    finally:
        os._exit(0)


def enter_sandbox(options, cwd):
    """Replace this process with the kernel of `options` (:class:`Options`) in a fresh sandbox; raise
    SandboxError if not possible."""
    argv = options.rest
    connection_file = argv[argv.index("-f") + 1] if "-f" in argv[:-1] else None
    if connection_file is None:
        raise SandboxError("no connection file (-f) was given")
    folder = connection_folder(connection_file)
    # inside, its parent is the sandbox's init (no --grader-pid), and what is bound is bound
    inner = [f"--sandbox={options.mode}", options.limits.argument(), *argv]
    command = sandbox_command(Path(cwd), folder, options.limits, options.read_only, options.student_folder) + \
        _account_files() + \
        [*launcher_command(), *inner]
    if options.grader is not None:
        watch_grader(options.grader)  # before the process cap: the watcher is not the sandbox's
    cap_processes(options.limits.processes)  # the grader says once if it cannot be done (process_cap_problem)
    # bind_to_grader's PR_SET_PDEATHSIG is kept across exec: a grader killed outright takes its sandbox with it
    os.execvpe(command[0], command, sandbox_environment(options.limits, options.inherit))


# Inside the sandbox --------------------------------------------------------------------------------

class CPUTimeLimitExceeded(Exception):
    """A cell used more CPU time than ``Limits.cpu_seconds_per_cell``."""


def apply_limits(limits):
    """Set this process's resource limits (inherited by what it starts); return the problems, if any."""
    problems = [limit_memory(limits.memory_mb)]
    for which, value in [(resource.RLIMIT_FSIZE, limits.file_mb * 2**20),
                         (resource.RLIMIT_CPU, limits.cpu_seconds_total)]:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError) as error:
            problems.append(f"a limit could not be set on this platform ({error})")
    return [p for p in problems if p]


def limit_cpu_per_cell(shell, seconds):
    """From now on, each cell `shell` runs may use `seconds` of CPU time, then gets CPUTimeLimitExceeded.

    The soft ``RLIMIT_CPU`` is moved to the CPU time used so far plus `seconds` before each execution;
    the hard limit (``Limits.cpu_seconds_total``) stays, and kills a process that goes on regardless.
    """
    running = [False]

    def cpu_used():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def arm(*_):
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = math.ceil(cpu_used()) + seconds
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))

    def before():
        running[0] = True
        arm()

    def after():
        running[0] = False
        end_strays()

    def over_limit(signum, frame):
        if not running[0]:
            arm()  # between cells: nothing to stop
            return
        arm()  # one signal per cell
        raise CPUTimeLimitExceeded(f"this cell used more than {seconds} s of CPU time, the grading kernel's limit")

    signal.signal(signal.SIGXCPU, over_limit)
    shell.events.register("pre_execute", before)
    shell.events.register("post_execute", after)
    arm()


def end_strays():
    """Kill every process of the sandbox but its init and this kernel, and reap this kernel's children.

    Run after each cell: what a cell started (a detached child, a daemon, a fork bomb's copies) is gone
    before the next one, so it can neither watch the rest of the grading nor hold the process cap.
    Honest work leaves nothing running. Only inside the sandbox's own PID namespace.
    """
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, me):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break


@dataclass
class Options:
    """The grading kernel's own command-line options (the rest go to ipykernel)."""

    mode: str = "require"  #: --sandbox=: one of SANDBOX_MODES
    limits: Limits = Limits()  #: --limits=
    grader: int = None  #: --grader-pid=: the grading process, which this kernel must not outlive
    read_only: list = field(default_factory=list)  #: --read-only=PATH, repeated: more paths bound read-only
    #: --inherit-env=PATTERN, repeated: the grader's variables that reach the sandboxed kernel (sandbox_environment)
    inherit: list = field(default_factory=list)
    #: --student-folder=PATH: where the working folder (a staging folder) is bound, for a kernel started ahead
    student_folder: str = None
    rest: list = field(default_factory=list)  #: ipykernel's arguments


def parse_options(argv):
    """The :class:`Options` of the kernel's command line; exit with a message on a bad one."""
    options = Options()
    for arg in argv:
        name, _, value = arg.partition("=")
        if name == "--grader-pid":
            if not value.isdigit():
                sys.exit(f"hardened_grading kernel: {arg}: expected the grading process's pid")
            options.grader = int(value)
        elif name == "--sandbox":
            if value not in SANDBOX_MODES:
                sys.exit(f"hardened_grading kernel: --sandbox={value}: it must be one of {', '.join(SANDBOX_MODES)}")
            options.mode = value
        elif name == "--limits":
            try:
                options.limits = Limits.parse(value)
            except ValueError as error:
                sys.exit(f"hardened_grading kernel: {error}")
        elif name == "--read-only":
            options.read_only.append(value)
        elif name == "--inherit-env":
            options.inherit.append(value)
        elif name == "--student-folder":
            options.student_folder = value
        else:
            options.rest.append(arg)
    return options


def bind_to_grader(grader):
    """End this kernel with the process that started it, even if that one is SIGKILLed; exit at once if
    it is already gone.

    Done first, before the sandbox probe and the ``exec`` of bwrap: a grader killed while its kernel is
    starting (the worst moment) leaves no kernel behind, waiting forever for a grader that never comes.
    `grader` is the pid the grader gave (``--grader-pid``); without it, a parent that is already init is
    taken as gone.
    """
    die_with_parent(signal.SIGKILL)
    parent = os.getppid()
    orphaned = parent != grader if grader is not None else parent == 1
    if orphaned:
        os._exit(1)  # the grader died before the signal was set: nobody will ever connect


#: What ipykernel logs as an ERROR when an interrupt reaches it between cells (kernelbase.dispatch_shell).
INTERRUPT_CAUGHT = "KeyboardInterrupt caught in kernel"


class _GraderInterruptFilter(logging.Filter):
    """Drops ipykernel's ``ERROR | KeyboardInterrupt caught in kernel.``, which means nothing to the instructor.

    Nobody presses Ctrl-C in a grading kernel: its interrupts are the grader's. jupyter_client interrupts
    every kernel it shuts down (``shutdown_kernel``: interrupt, then the shutdown request), and the grader
    interrupts a call of the tests that runs over time (its timeout is recorded in the graded notebook).
    When such an interrupt lands while the kernel handles a message rather than runs a cell, ipykernel
    logs this line on the grader's terminal, at random. Only this one message of the kernel is dropped.
    """

    def filter(self, record):
        return not (record.levelno == logging.ERROR and str(record.msg).startswith(INTERRUPT_CAUGHT))


def without_debugger():
    """Start ipykernel without its debugger: nobody debugs a grading kernel, and importing debugpy (pydevd) is
    about a fifth of the CPU time of a kernel's start. ipykernel runs without it when ``debugpy`` cannot be
    imported (``ipykernel.debugger._is_debugpy_available``); a student's ``import debugpy`` fails too."""
    sys.modules["debugpy"] = None


def main():
    options = parse_options(sys.argv[1:])
    mode, limits, kernel_args = options.mode, options.limits, options.rest
    sandboxed = bool(os.environ.get("HARDENED_GRADING_IN_SANDBOX"))
    if not sandboxed:
        bind_to_grader(options.grader)
        # what the kernel writes to its own stdout and stderr reaches the grader's escaped, and capped
        capture_output(limit=limits.kernel_log_kb * 1024)
    # ipykernel's application and kernel log through the logger named after IPKernelApp
    logging.getLogger("IPKernelApp").addFilter(_GraderInterruptFilter())
    if mode != "off" and not sandboxed:
        # A grader that gives its pid has probed once for its whole run (grading._sandbox_problem), and asks
        # for the sandbox only if it found it: no probe per kernel.
        problem = None if options.grader is not None else sandbox_problem()
        if problem is None:
            try:
                enter_sandbox(options, Path.cwd())  # does not return
            except SandboxError as error:
                problem = str(error)
        if mode == "require":
            sys.exit(f"hardened_grading kernel: not started: {problem}. {SANDBOX_ADVICE}")
        print(f"hardened_grading kernel: running without a sandbox: {problem}; {UNSANDBOXED_MEANS}", file=sys.stderr)
    for problem in apply_limits(limits) if sandboxed else [limit_memory(limits.memory_mb)]:
        if problem:
            print(f"hardened_grading kernel: {problem}", file=sys.stderr)
    if sandboxed:
        # Its parent is the sandbox's own init: no parent to poll (--die-with-parent ends it), and no
        # "Ctrl-C will not work" notice for the grader's terminal.
        kernel_args.append("--IPKernelApp.parent_handle=1")
        kernel_args.append("--IPKernelApp.exec_lines=__import__('hardened_grading.kernel').kernel"
                           f".limit_cpu_per_cell(get_ipython(), {limits.cpu_seconds_per_cell})")
    # No history file: not in the grader's ~/.ipython, and not filling the sandbox's /tmp.
    kernel_args.append("--HistoryManager.hist_file=:memory:")
    without_debugger()
    sys.argv = ["ipykernel_launcher", *kernel_args]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
