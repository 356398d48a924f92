"""Settings an instructor changes really change.

Each limit's default lives in one place, the engine (:class:`hardened_grading.sandbox.limits.Limits`, and
``ResilientExecute``'s ``GRADER_LIMITS``); the site's table of limits is read from it (tests/system/test_docs.py), not the other
way round, and ``nbgrader_config.py`` may set any value. A course whose ``nbgrader_config.py`` raises
every limit is graded by real ``nbgrader autograde``, and a cell of the submission reports, from inside
the sandboxed kernel, the limits it runs under: the raised ones. ``Execute.extra_arguments`` are added to;
the kernel's name is one setting; more read-only paths for the sandbox are a setting.
"""

import dataclasses
import json
import re
from types import SimpleNamespace

import nbformat
import pytest
from traitlets.config import Config

from hardened_grading import errors
from hardened_grading.sandbox import bwrap
from hardened_grading.sandbox import cgroup
from hardened_grading.sandbox import launcher
from hardened_grading.sandbox import limits as sandbox_limits
from hardened_grading.sandbox import probe
from posenc_course.course import generate, new_course
from hardened_grading.preprocessors.execute import GRADER_LIMITS, ResilientExecute
from posenc_course.layout import ASSIGNMENT, NOTEBOOK, ROOT
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers.children import run_nbgrader


LIMITS = [field.name for field in dataclasses.fields(sandbox_limits.Limits)] + list(GRADER_LIMITS)


def default(name):
    return ResilientExecute.class_traits()[name].default_value


def test_nbgrader_config_names_every_limit_and_restates_no_default():
    """An instructor finds every limit named in nbgrader_config.py; it sets none to a copy of its default
    (a copy would go stale, and would hide which values the course chose)."""
    text = (ROOT / "nbgrader_config.py").read_text()
    for name in LIMITS:
        assert re.search(rf"\b{name}\b", text), f"nbgrader_config.py does not name the limit {name}"
    set_there = dict(re.findall(r"^c\.ResilientExecute\.(\w+) = (\d+)", text, re.M))
    copies = [name for name, value in set_there.items() if name in LIMITS and int(value) == default(name)]
    assert not copies, f"nbgrader_config.py restates the defaults of {copies}"


def test_extra_arguments_are_added_to_not_replaced():
    """An instructor's ``Execute.extra_arguments`` reach the kernel, before the grader's own, once each time."""
    config = Config({"Execute": {"extra_arguments": ["--HistoryManager.enabled=False"]},
                     "ResilientExecute": {"sandbox": "off", "memory_mb": 4096}})
    execute = ResilientExecute(config=config)
    arguments = execute.kernel_arguments()
    assert arguments[0] == "--HistoryManager.enabled=False"
    assert "--sandbox=off" in arguments and any(a.startswith("--limits=memory_mb=4096,") for a in arguments)
    assert execute.kernel_arguments() == arguments, "the arguments grow with each notebook graded"


def test_the_graders_variables_that_reach_the_sandboxed_kernel_are_an_allow_list():
    """``inherited_environment`` reaches the kernel as its arguments; its patterns let through only what they name,
    never a variable the sandbox sets itself or one that changes what the kernel runs, even by a glob; naming one is
    an error that says why. (That a real kernel sees them: tests/grading/test_foreign_courses.py, the course ``magics``.)"""
    config = Config({"ResilientExecute": {"sandbox": "off", "inherited_environment": ["TZ", "LC_*", "PYTHON*"]}})
    arguments = ResilientExecute(config=config).kernel_arguments()
    assert [a for a in arguments if a.startswith("--inherit-env=")] == \
        ["--inherit-env=TZ", "--inherit-env=LC_*", "--inherit-env=PYTHON*"]
    assert launcher.parse_options(arguments).inherit == ["TZ", "LC_*", "PYTHON*"]
    grader = {"TZ": "Pacific/Chatham", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "POSENC_SECRET_TOKEN": "x",
              "PYTHONPATH": "/home/grader/lib", "PYTHONSTARTUP": "/home/grader/start.py", "LD_PRELOAD": "/x.so"}
    assert bwrap.inherited(["TZ", "LC_*", "PYTHON*", "LD_*"], grader) == \
        {"TZ": "Pacific/Chatham", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0"}
    with pytest.raises(Exception, match="PYTHONPATH never reaches the sandboxed kernel"):
        ResilientExecute(config=Config({"ResilientExecute": {"inherited_environment": ["PYTHONPATH"]}}))


# Every limit raised in nbgrader_config.py, and honoured -------------------------------------------

RAISED = {name: 2 * default(name) for name in LIMITS}
#: threads a cell starts: more than the default process cap lets it, fewer than the raised one
THREADS = default("processes") + 24
#: output of one cell, KiB: more than the default lets through, less than the raised limit
OUTPUT_KB = default("max_output_kb") * 3 // 2

REPORT = f'''# my own scratch cell: the limits this kernel runs under
import json, math, os, resource, threading
_usage = resource.getrusage(resource.RUSAGE_SELF)
_cpu_soft, _cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
_cpu_left = _cpu_soft - math.ceil(_usage.ru_utime + _usage.ru_stime)
_tmp = os.statvfs("/tmp")
_release, _threads = threading.Event(), []
try:
    for _ in range({THREADS}):
        _threads.append(threading.Thread(target=_release.wait))
        _threads[-1].start()
except RuntimeError:
    pass
finally:
    _release.set()
print("LIMITS", json.dumps({{
    "memory_mb": resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20, "cpu_seconds_per_cell": _cpu_left,
    "cpu_seconds_total": _cpu_hard, "file_mb": resource.getrlimit(resource.RLIMIT_FSIZE)[0] // 2**20,
    "tmp_mb": _tmp.f_blocks * _tmp.f_frsize // 2**20, "blas_threads": int(os.environ["OMP_NUM_THREADS"]),
    "threads": len(_threads), "sandboxed": os.environ.get("HARDENED_GRADING_IN_SANDBOX")}}))
'''
FLOOD = f"for _ in range({OUTPUT_KB}):\n    print('x' * 1023)"
#: lines written to the kernel's own stderr, KiB: more than the default lets through, less than the raised limit
KERNEL_LOG_KB = default("kernel_log_kb") * 3 // 2
KERNEL_LOG = (f"import os\nfor _i in range({KERNEL_LOG_KB}):\n    os.write(2, b'k' * 1000 + b'\\n')\n"
              "os.write(2, b'KERNEL-LOG-LAST\\n')")
#: files the submission leaves in its folder: more than the default keeps, fewer than the raised limit
FILES = default("max_files") + 100
MANY_FILES = f"import os\nos.makedirs('kept', exist_ok=True)\nfor _i in range({FILES}):\n    open(f'kept/{{_i}}', 'w').close()"


@pytest.mark.skipif(probe.sandbox_problem() is not None, reason="no bubblewrap sandbox here")
def test_nbgrader_config_can_raise_every_limit_and_the_kernel_honours_it(tmp_path):
    """Every limit raised, and the kernel renamed, in nbgrader_config.py: the kernel that grades is still the
    engine's sandboxed one, and it runs under the raised limits."""
    course = new_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as config:
        config.write("\n" + "".join(f"c.ResilientExecute.{name} = {value}\n" for name, value in RAISED.items())
                     + 'c.ResilientExecute.kernel_name = "course-grader"\n')
    release = generate(course)
    notebook = make_submission(reference_answers(course / "source" / ASSIGNMENT / NOTEBOOK), release_notebook=release)
    notebook.cells[0:0] = [nbformat.v4.new_code_cell(code) for code in (REPORT, FLOOD, KERNEL_LOG, MANY_FILES)]
    write_submission(notebook, course / "submitted", "raised")
    result = run_nbgrader(course, "autograde", ASSIGNMENT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    graded = nbformat.read(course / "autograded" / "raised" / ASSIGNMENT / NOTEBOOK, as_version=4)
    [line] = [line for cell in graded.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
              for line in output.get("text", "").splitlines() if line.startswith("LIMITS ")]
    seen = json.loads(line.removeprefix("LIMITS "))
    expected = {name: RAISED[name] for name in ("memory_mb", "cpu_seconds_total", "file_mb", "tmp_mb", "blas_threads")}
    assert {name: seen[name] for name in expected} == expected
    assert seen["sandboxed"] == "1", "the kernel of another name was not the engine's sandboxed kernel"
    # the soft CPU limit is moved to the CPU used, rounded up, plus the per-cell allowance, before each cell
    assert RAISED["cpu_seconds_per_cell"] - 1 <= seen["cpu_seconds_per_cell"] <= RAISED["cpu_seconds_per_cell"]
    if cgroup.process_cap_problem() is None:  # the cap is enforced here: the default one would stop the threads
        assert seen["threads"] == THREADS, f"{seen['threads']} of {THREADS} threads started under the raised cap"
    log = result.stdout + result.stderr
    assert "was dropped" not in log, "a cell's output under the raised max_output_kb was dropped"
    assert "[output beyond" not in json.dumps(graded), "a cell's output under the raised max_output_kb was dropped"
    assert "KERNEL-LOG-LAST" in log and "own output were dropped" not in log, \
        "the kernel's own output under the raised kernel_log_kb was dropped"
    kept = course / "autograded" / "raised" / ASSIGNMENT / "kept"
    assert len(list(kept.iterdir())) == FILES and "beyond the limit of" not in log, \
        "files under the raised max_files were left out"


# More read-only paths for the sandbox ------------------------------------------------------------

READS = '''# my own scratch cell: a data set outside the course
try:
    print("DATA", open({path!r}).read())
except OSError as error:
    print("DATA unreadable:", type(error).__name__)
try:
    open({path!r}, "a").write("changed")
    print("DATA written")
except OSError as error:
    print("DATA not written:", type(error).__name__)
'''


def data_lines(course, student):
    graded = nbformat.read(course / "autograded" / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    return [line for cell in graded.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
            for line in output.get("text", "").splitlines() if line.startswith("DATA")]


@pytest.mark.skipif(probe.sandbox_problem() is not None, reason="no bubblewrap sandbox here")
def test_read_only_paths_let_the_kernel_read_a_data_set_and_never_write_it(tmp_path):
    """``c.ResilientExecute.read_only_paths``: a data set outside the course is readable in the sandbox,
    not writable; without the setting, the sandbox does not show it at all."""
    dataset = tmp_path / "datasets"
    dataset.mkdir()
    (dataset / "values.txt").write_text("1 2 3")
    course = new_course(tmp_path / "course")
    release = generate(course)
    answers = reference_answers(course / "source" / ASSIGNMENT / NOTEBOOK)
    for student in ("without", "with"):
        notebook = make_submission(answers, release_notebook=release)
        notebook.cells.insert(0, nbformat.v4.new_code_cell(READS.format(path=str(dataset / "values.txt"))))
        write_submission(notebook, course / "submitted", student)
    result = run_nbgrader(course, "autograde", ASSIGNMENT, "--student", "without")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.ResilientExecute.read_only_paths = [{str(dataset)!r}]\n")
    result = run_nbgrader(course, "autograde", ASSIGNMENT, "--student", "with")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    assert data_lines(course, "without") == ["DATA unreadable: FileNotFoundError",
                                              "DATA not written: FileNotFoundError"]
    with_lines = data_lines(course, "with")
    assert with_lines[0] == "DATA 1 2 3" and with_lines[1].startswith("DATA not written: OSError"), with_lines
    assert (dataset / "values.txt").read_text() == "1 2 3"


@pytest.mark.parametrize("where, says", [
    ("course", "holds the course folder"),
    ("course/source", "is inside the course folder"),
    ("missing", "does not exist"),
    ("relative", "is not an absolute path"),
])
def test_a_read_only_path_that_would_show_the_course_is_refused(tmp_path, where, says):
    """A path that holds the course (its hidden tests, its gradebook), lies inside it, or is no real
    absolute path is refused, and the message names the setting and what to do."""
    root = tmp_path / "course"
    (root / "source").mkdir(parents=True)
    path = "data" if where == "relative" else str(tmp_path / where)
    problem = bwrap.read_only_problem(path, root)
    assert problem and says in problem, problem
    (tmp_path / "data").mkdir()
    assert bwrap.read_only_problem(str(tmp_path / "data"), root) is None, "a folder beside the course is fine"
    folder = root / "autograded" / "s" / ASSIGNMENT
    folder.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text("")
    (tmp_path / "kernel.json").write_text("{}")
    with pytest.raises(errors.SandboxError, match=f"ResilientExecute.read_only_paths: .*{says}"):
        bwrap.sandbox_command(folder, tmp_path, sandbox_limits.Limits(), [path])
