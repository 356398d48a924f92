"""The bubblewrap command that starts a kernel in a fresh sandbox: its binds, its environment, and entering it."""

import fnmatch
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

from ..cells import course_root
from ..errors import SandboxError
from .cgroup import cap_processes
from .command import launcher_command
from .parent import watch_grader

#: Read-only system paths: programs and libraries (bound, or re-made as the links they are on a merged /usr).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

#: The only files of /etc the sandbox sees: what the dynamic linker, the time zone and fonts need. Its
#: /etc/passwd and /etc/group are made up (:func:`_account_files`): one user, with /tmp as its home.
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/fonts")

#: Imported by the kernel: where they live is bound read-only when it is outside the environment.
#: The engine's own folder (``hardened_grading/``), bound read-only: the kernel's start-up inside runs it.
ENGINE_FOLDER = Path(__file__).resolve().parents[1]
KERNEL_PACKAGES = ("ipykernel", "IPython", "numpy", "zmq", "traitlets", "jupyter_client", "tornado")


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
    paths.add(ENGINE_FOLDER)  # this package (the kernel's own start-up)
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
    started ahead (:mod:`hardened_grading.sandbox.ahead`), is the student's folder that `cwd` (a staging folder, also in
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
           "PYTHONPATH": str(ENGINE_FOLDER.parent)}
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[name] = str(limits.blas_threads)
    env.update(inherited(inherit))
    return env


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
        watch_grader(options.grader, folder)  # before the process cap: the watcher is not the sandbox's
    cap_processes(options.limits.processes)  # the grader says once if it cannot be done (process_cap_problem)
    # bind_to_grader's PR_SET_PDEATHSIG is kept across exec: a grader killed outright takes its sandbox with it
    os.execvpe(command[0], command, sandbox_environment(options.limits, options.inherit))
