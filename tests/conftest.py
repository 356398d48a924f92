"""The suite's layers, tiers and scheduling, its check that a run leaves nothing running, and its run recorder.

A test module's folder says its layer, and the layer gives its tier (LAYERS): nothing else marks a test slow.
Where a module goes is what it does:

- ``tests/unit/``: in memory or in small processes, milliseconds to seconds each; no real grading run (nbgrader,
  posenc-grade) of a whole notebook or class. The fast tier: no marker (``make test-fast``).
- ``tests/grading/``: real grading runs: nbgrader's commands, posenc-grade, kernels, the sandbox, on whole notebooks
  or classes. Marked ``slow``.
- ``tests/system/``: the world around the course: a real browser, every supported Python, a Slurm cluster, the
  engine's wheel, the site's build, Hugging Face's own code in a venv of its own. Marked ``slow``, and with what
  each starts (SYSTEM_MARKERS: ``browser``, ``pythons``, ``slurm``).
- ``tests/helpers/``: the helper library the test modules share; no test in it.

A test that uses the ``postgresql`` fixture (tests/helpers/postgres.py) is marked ``postgres``, wherever it is.
Collection refuses a test module in no folder of LAYERS (or in tests/helpers/), and any module of tests/ that
imports a test module: each imports what it shares from tests/helpers/ (tests/unit/test_layers.py shows both).
HEAVIEST_FIRST orders the slow modules for ``make test``'s workers; it is an order, not a tier.
"""

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import settings

# No deadlines: the machine is shared and noisy. CI runs a fixed, derandomised set of examples.
settings.register_profile("dev", deadline=None, max_examples=60)
settings.register_profile("ci", deadline=None, max_examples=100, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# Tiers: the markers; the layers (folders) give them (this module's docstring).
TIERS = {
    "browser": "drives JupyterLab, or the course site, in a real browser (chromium)",
    "pythons": "installs the course with every supported Python, from a clean clone",
    "postgres": "starts a PostgreSQL server of its own",
    "slurm": "starts a one-node Slurm cluster of its own (root, Debian's slurmctld, slurmd and munge)",
    "slow": "runs real grading (nbgrader, kernels, the sandbox) on whole notebooks or classes, or a system test",
}
#: ``{folder of tests/: the markers of every test in it}``: the only folders a test module may be in.
LAYERS = {"unit": (), "grading": ("slow",), "system": ("slow",)}
#: The folder of the helper library: no test module in it.
HELPERS = "helpers"
#: What a system test starts besides, by module: more markers, to pick or leave out with -m. (``postgres`` is given
#: to every test that uses the ``postgresql`` fixture, tests/helpers/postgres.py, wherever it is.)
SYSTEM_MARKERS = {"test_browser": ("browser",), "test_inert_browser": ("browser",), "test_site_browser": ("browser",),
                  "test_formgrader_browser": ("browser",),
                  "test_pythons": ("pythons",), "test_slurm": ("slurm",)}
#: The slow modules, heaviest first (by their time in a full run; `--durations` at the end of each run shows it): the
#: suite starts them first, so that no long module is left to run alone at the end. An order, not a tier: a slow
#: module missing here is still slow (its folder), and is started after these, before the fast ones.
HEAVIEST_FIRST = ("test_grade_class", "test_pythons", "test_grading_advanced", "test_grading", "test_grading_current",
                  "test_grade_class_runs", "test_attacks_folder", "test_two_graders",
                  "test_mutation", "test_slurm",
                  "test_browser", "test_foreign_courses", "test_check", "test_feedback", "test_inert_browser",
                  "test_sandbox", "test_hostile_output",
                  "test_hostile_channels",
                  "test_habits_state", "test_habits",
                  "test_new_exercise", "test_platforms", "test_workflows", "test_class_report", "test_settings",
                  "test_engine_wheel", "test_site_browser", "test_docs", "test_theory", "test_leaks", "test_unreadable")
# Tests that may run on any worker, each alone (`make test` runs the suite on every core with pytest-xdist):
# their module has no fixture that several of them share. Every other module runs whole on one worker, so
# that a module's fixtures (a class graded once, a PostgreSQL server) are made once. test_answers_in_process, two
# thirds of the fast tier's time on one worker, judges each answer on its own (its cached set-ups are made once
# per worker, in a second or two).
SPREAD_MODULES = {"test_pythons", "test_grade_class_runs", "test_answers_in_process"}
#: This folder: tests/.
TESTS = Path(__file__).resolve().parent


#: Set in the environment of the run's first process (and so of every process the run starts, xdist's
#: workers too): what is still running with it when the run ends was left behind.
RUN_MARKER = "POSENC_TEST_RUN"
#: Seconds the run's own processes (xdist's workers) may take to end once the run is over, on a loaded machine.
LEFT_BEHIND_GRACE = float(os.environ.get("POSENC_LEFT_BEHIND_GRACE", 60))


#: ``POSENC_RECORD_RUN=1 make test`` appends the run's summary line (commit, machine, workers, counts, minutes)
#: to this file, which the site includes (docs/maintainers/testing.md); ``POSENC_RECORD_NOTE`` adds a note.
RECORDED_RUNS = Path(__file__).resolve().parents[1] / "docs" / "measured" / "test_runs.txt"
_STARTED = time.time()


def recording(config):
    """Whether this process is a run to record: asked for, and the run itself (not a worker, nor a pytest that a
    test starts, which inherits the environment)."""
    return bool(os.environ.get("POSENC_RECORD_RUN")) and not hasattr(config, "workerinput") and \
        os.environ.get(RUN_MARKER) == str(os.getpid())


def machine_line():
    """The commit and the machine, as the benchmarks name them (benchmarks/bench_class.py)."""
    sys.path.insert(0, str(RECORDED_RUNS.parents[2] / "benchmarks"))
    from bench_class import machine

    return machine()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The run's own summary, kept in RECORDED_RUNS when asked: measured times are written by the tool."""
    if not recording(config):
        return
    counts = ", ".join(f"{len(terminalreporter.stats[key])} {key}" for key in ("passed", "failed", "error", "skipped")
                       if terminalreporter.stats.get(key))
    workers = getattr(config.option, "numprocesses", None) or "one process"
    note = os.environ.get("POSENC_RECORD_NOTE", "")
    line = (f"{time.strftime('%Y-%m-%d', time.gmtime())}  {config._posenc_machine}\n    workers {workers}: {counts} in "
            f"{(time.time() - _STARTED) / 60:.1f} min{'; ' + note if note else ''}\n")
    RECORDED_RUNS.parent.mkdir(parents=True, exist_ok=True)
    with RECORDED_RUNS.open("a") as runs:
        runs.write(line)
    terminalreporter.write_line(f"recorded in {RECORDED_RUNS}")


def build_matplotlib_font_cache():
    """Build matplotlib's font cache (in this user's home) before any worker starts. On a new machine the first
    ``import matplotlib.pyplot`` builds it under a lock file that another process waits for 5 s at most, then
    raises TimeoutError: kernels and site builds starting together on a busy machine (the theory notebook's
    first cell in the browser test) would fail there, not in what they test."""
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True, timeout=600)


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    if not hasattr(config, "workerinput"):  # the run's first process: the xdist controller, or the only one
        os.environ.setdefault(RUN_MARKER, f"{os.getpid()}")
        build_matplotlib_font_cache()
    if recording(config):  # the commit as it was when the run started, before the record changes the tree
        config._posenc_machine = machine_line()


def module_of(nodeid):
    """The test module's name in a node id: ``test_grading`` for ``tests/grading/test_grading.py::test_x[a]``."""
    return nodeid.partition("::")[0].rpartition("/")[2].removesuffix(".py")


def layer_of(path):
    """The folder of tests/ that `path` is in (``unit``, ``helpers``...), ``""`` for a file of tests/ itself, or None
    for a path outside tests/ (the doctests of posenc_solutions)."""
    try:
        parts = Path(path).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 else ""


def test_modules_imported(path):
    """The test modules (``test_*``) that the Python file at `path` imports, as written: ``..grading.test_x``."""
    found = []
    for node in ast.walk(ast.parse(Path(path).read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if any(p.startswith("test_") for p in alias.name.split("."))]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if any(p.startswith("test_") for p in (node.module or "").split(".")):
                found.append(module)
            else:
                found += [f"{module}.{alias.name}" for alias in node.names if alias.name.startswith("test_")]
    return found


class Refused(pytest.File):
    """A file of tests/ that collection refuses: collecting it fails with `reason`, which names it."""

    reason = ""

    def collect(self):
        raise self.CollectError(self.reason)


def refusal(file_path):
    """Why collection refuses the Python file `file_path` of tests/, or None."""
    layer = layer_of(file_path)
    if layer is None or file_path.suffix != ".py" or file_path.name == "conftest.py":
        return None
    where = file_path.relative_to(TESTS.parent) if file_path.is_relative_to(TESTS.parent) else file_path
    if file_path.name.startswith("test_") and layer not in LAYERS:
        return (f"{where} is a test module in no known folder: put it in "
                f"{', '.join(f'tests/{folder}/' for folder in LAYERS)} (the rule is in tests/conftest.py), "
                f"its helpers in tests/{HELPERS}/")
    imported = test_modules_imported(file_path)
    if imported:
        return (f"{where} imports from the test module(s) {', '.join(imported)}: what tests share is in "
                f"tests/{HELPERS}/, and every module imports it from there")
    return None


def pytest_collect_file(file_path, parent):
    """Refuse a test module in no folder of LAYERS, and a module of tests/ that imports a test module."""
    reason = refusal(file_path)
    if reason:
        refused = Refused.from_parent(parent, path=file_path)
        refused.reason = reason
        return refused
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = module_of(item.nodeid)
        layer = layer_of(item.path)
        for marker in (*LAYERS.get(layer, ()), *(SYSTEM_MARKERS.get(module, ()) if layer == "system" else ())):
            item.add_marker(marker)
        if "postgresql" in getattr(item, "fixturenames", ()) or "[postgresql]" in item.name:
            item.add_marker(pytest.mark.postgres)
    # Heaviest first, then the other slow modules, then the fast ones; a stable sort keeps each module's own order.
    rank = {module: i for i, module in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(module_of(item.nodeid),
                                         len(rank) + (0 if item.get_closest_marker("slow") else 1)))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which a run may leave out (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """How `pytest -n N` shares the tests among its workers: a module's tests all go to one worker (its
    module fixtures are made once), except SPREAD_MODULES', each of which may go to any; in the order of
    collection, heaviest first. (xdist's own ``--dist loadgroup`` cannot be used: under pytest 9 it no
    longer groups anything.)"""
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # keep the collection's order, not xdist's (most tests first)

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return nodeid if module_of(nodeid) in SPREAD_MODULES else nodeid.partition("::")[0]

    return ByModule(config, log)


def processes_of_this_run(marker, folder):
    """``{pid: command line}`` of the processes, other than this one, that have `marker` in their environment or
    name `folder` (the run's temporary folder) on their command line: a sandbox (bwrap), whose environment is
    cleared, names the course folder it binds. Zombies, which have ended, are not counted."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # it ended while we looked, or is not ours to read
            continue
        if state != "Z" and (marker in environ or (folder and folder in command)):
            found[int(entry)] = command.strip()
    return found


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session, exitstatus):
    """After the whole run (xdist's workers torn down), nothing it started may still be running: no grader,
    worker, kernel, sandbox, server or browser. The run waits for them to end, up to LEFT_BEHIND_GRACE
    seconds, then fails and names each one (they are left running, to be looked at)."""
    yield
    config = session.config
    if hasattr(config, "workerinput") or not sys.platform.startswith("linux") or \
            os.environ.get(RUN_MARKER) != str(os.getpid()):
        return
    marker = f"{RUN_MARKER}={os.getpid()}".encode()
    factory = getattr(config, "_tmp_path_factory", None)  # the run's temporary folder (xdist's workers' are in it)
    folder = f"{factory.getbasetemp()}/" if factory is not None else None
    deadline = time.monotonic() + LEFT_BEHIND_GRACE
    while (left := processes_of_this_run(marker, folder)) and time.monotonic() < deadline:
        time.sleep(0.2)
    if left:
        sys.stderr.write(f"\nERROR: {len(left)} process(es) started by this test run were still running "
                         f"{LEFT_BEHIND_GRACE} s after it ended:\n"
                         + "".join(f"  {pid}: {command[:300]}\n" for pid, command in sorted(left.items())))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def unprivileged_grader():
    """``(user, Python)`` of the unprivileged grader that the attack suites grade as
    (``tests/helpers/graders.py``), made once per test process."""
    from .helpers import graders

    yield from graders.unprivileged()
