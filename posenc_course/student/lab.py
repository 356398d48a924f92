"""JupyterLab for this course: a student's, or with ``--instructor`` an instructor's.

nbgrader installs all of its JupyterLab plugins for everybody. A student then meets the instructor's
tools (the Formgrader and Create Assignment menu entries) and an Assignment List that, without
nbgrader's exchange, shows "Error fetching courses!". So this environment's JupyterLab is a student's:
``make install`` runs ``python -m posenc_course.student.lab student``, which disables :data:`INSTRUCTOR_PLUGINS`
and :data:`INSTRUCTOR_SERVER_EXTENSIONS` with nbgrader's documented commands (``jupyter labextension
disable --level=sys_prefix`` and ``jupyter server extension disable --sys-prefix``). nbgrader's Validate
button stays. ``posenc-lab --instructor`` enables them again for one JupyterLab, through a configuration
folder of higher priority (``JUPYTER_CONFIG_PATH``), and serves the course folder, where formgrader finds
``nbgrader_config.py``.

    posenc-lab [PATH ...] [JUPYTER LAB OPTIONS]          # a student's JupyterLab (plain `jupyter lab` is too)
    posenc-lab --instructor [JUPYTER LAB OPTIONS]        # with formgrader, at the course folder
    python -m posenc_course.student.lab student          # make this environment's JupyterLab a student's

As root, JupyterLab refuses to start without ``--allow-root``; ``posenc-lab`` adds it, and says so.

``posenc-lab`` stops its JupyterLab when it is stopped: SIGTERM, SIGHUP or SIGINT (Ctrl-C, without
JupyterLab's "Shutdown this Jupyter server?" question) is passed on to JupyterLab as SIGTERM, which
shuts its kernels down and frees its port; whatever of it is still running after :data:`STOP_SECONDS`
(the server, a kernel) is then killed.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ..layout import course_root

#: nbgrader's JupyterLab plugins that only an instructor (or a course with nbgrader's exchange) uses.
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:course-list",
                      "@jupyter/nbgrader:menu")  # the Nbgrader menu: it holds only the four above
#: nbgrader's server extensions behind those plugins. ``validate_assignment`` (the Validate button) stays.
INSTRUCTOR_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader",
                                "nbgrader.server_extensions.assignment_list",
                                "nbgrader.server_extensions.course_list")


def jupyter(*args):
    """Run ``jupyter ARGS`` of this environment; raise CalledProcessError with its output if it fails."""
    return subprocess.run([sys.executable, "-m", "jupyter", *args], check=True, capture_output=True, text=True)


#: JupyterLab settings of a student's set-up, written into this environment's ``overrides.json``: no pop-up
#: asking about Jupyter's news; every cell of a notebook rendered (``windowingMode: none``): with JupyterLab's
#: default, which renders only the cells on screen, Run → Run All Cells leaves the view on the notebook's title,
#: where the notebook promises it ends on the progress cell (tests/system/test_browser.py runs with these settings
#: and no other).
STUDENT_SETTINGS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"},
                    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}


def make_student_setup(prefix=sys.prefix):
    """Disable the instructor's plugins and server extensions in this environment (``sys.prefix``), and
    write :data:`STUDENT_SETTINGS` into its JupyterLab ``settings/overrides.json``, keeping what is there."""
    jupyter("labextension", "disable", "--level=sys_prefix", *INSTRUCTOR_PLUGINS)
    jupyter("server", "extension", "disable", "--sys-prefix", *INSTRUCTOR_SERVER_EXTENSIONS)
    overrides = Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    settings = json.loads(overrides.read_text()) if overrides.exists() else {}
    for plugin, values in STUDENT_SETTINGS.items():
        settings.setdefault(plugin, {}).update(values)
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(json.dumps(settings, indent=1) + "\n")


def write_instructor_config(folder):
    """Write into `folder` the configuration that enables the instructor's plugins again; return it."""
    folder = Path(folder)
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    (folder / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: False for name in INSTRUCTOR_PLUGINS}}, indent=1))
    (folder / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {name: True for name in INSTRUCTOR_SERVER_EXTENSIONS}}},
                   indent=1))
    return folder


def instructor_environment(folder, environment=None):
    """`environment` (or this process's) with the instructor's configuration, written into `folder`,
    first on ``JUPYTER_CONFIG_PATH``: for a Jupyter server with formgrader."""
    environment = dict(os.environ if environment is None else environment)
    extra = environment.get("JUPYTER_CONFIG_PATH")
    environment["JUPYTER_CONFIG_PATH"] = os.pathsep.join(filter(None, [str(write_instructor_config(folder)), extra]))
    return environment


def lab_command(args, instructor=False, uid=None):
    """The ``jupyter lab`` command line of ``posenc-lab ARGS``, and a note for the user or None."""
    uid = os.getuid() if uid is None and hasattr(os, "getuid") else uid
    command = [sys.executable, "-m", "jupyter", "lab", *args]
    note = None
    if uid == 0 and "--allow-root" not in args:
        command.append("--allow-root")
        note = "posenc-lab: running as root, so --allow-root is added (JupyterLab refuses root without it)"
    if instructor and not any(arg.startswith(("--ServerApp.root_dir", "--notebook-dir")) for arg in args):
        command.append(f"--ServerApp.root_dir={course_root()}")
    return command, note


#: Seconds JupyterLab has to stop by itself (and stop its kernels) before what is left of it is killed.
STOP_SECONDS = 20
#: The signals that stop ``posenc-lab``, and its JupyterLab with it.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name))


def _descendants(pid):
    """The processes started by process `pid`, at any depth (its server's kernels among them), or []."""
    try:
        import psutil

        return psutil.Process(pid).children(recursive=True)
    except Exception:  # psutil missing, or the process gone: nothing to add
        return []


def _kill(processes):
    """SIGTERM each of `processes` still alive, then SIGKILL those alive 3 s later."""
    try:
        import psutil
    except ImportError:
        return
    alive = [p for p in processes if p.is_running()]
    for process in alive:
        try:
            process.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(alive, timeout=3)
    for process in alive:
        try:
            process.kill()
        except psutil.Error:
            pass


def run_lab(command, environment):
    """Run JupyterLab's `command` until it ends, or until a signal of :data:`STOP_SIGNALS` stops this
    process: then stop JupyterLab and its kernels (see the module's docstring). Return the exit code."""
    child = subprocess.Popen(command, env=environment)
    received, started_by_it = [], []

    def stop(signum, frame):
        if child.poll() is None:
            started_by_it.extend(_descendants(child.pid))
            child.send_signal(signal.SIGKILL if received else signal.SIGTERM)
            if not received:  # JupyterLab has STOP_SECONDS to stop by itself
                timer = threading.Timer(STOP_SECONDS, lambda: child.poll() is None and child.kill())
                timer.daemon = True
                timer.start()
        received.append(signum)

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        code = child.wait()
    except KeyboardInterrupt:  # a Ctrl-C before the handler was in place
        stop(signal.SIGINT, None)
        code = child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if received:
        _kill(started_by_it + _descendants(child.pid))
        return 128 + received[0]
    return code


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["student"]:
        make_student_setup()
        print("this environment's JupyterLab is a student's: nbgrader's Validate, without its instructor tools "
              "(posenc-lab --instructor has them)")
        return 0
    instructor = "--instructor" in argv
    args = [arg for arg in argv if arg != "--instructor"]
    command, note = lab_command(args, instructor)
    if note:
        print(note, file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="posenc-lab-") as folder:
        environment = instructor_environment(folder) if instructor else dict(os.environ)
        return run_lab(command, environment)


if __name__ == "__main__":
    sys.exit(main())
