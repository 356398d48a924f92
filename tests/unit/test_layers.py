"""The suite's own layout (tests/conftest.py): a test module's folder says its layer and gives its tier, collection
refuses a test module in no known folder and a module that imports a test module, and the heaviest-first order names
only slow modules that exist. And the project's layers (docs/maintainers/architecture.md, ``posenc_docs.LAYERS``): a
part imports only parts of the layers below it, so the benchmarks import no test helper."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import conftest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS.parent / "docs" / "_ext"))
import posenc_docs  # noqa: E402


def collect(folder, *options):
    """``pytest --collect-only`` of a suite in `folder` whose tests/ has this suite's conftest.py, with `options`: the
    finished process (its own run: not recorded, nothing checked for processes left behind)."""
    shutil.copy(TESTS / "conftest.py", folder / "tests" / "conftest.py")
    env = {k: v for k, v in os.environ.items() if k not in (conftest.RUN_MARKER, "POSENC_RECORD_RUN")}
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-o", "addopts=", *options, "tests"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


#: A pytest plugin that prints each collected test's markers once collection is done (after conftest.py gave them).
SHOW_MARKERS = """def pytest_collection_finish(session):
    for item in session.items:
        print("MARKERS", item.nodeid, sorted(marker.name for marker in item.iter_markers()))
"""


def write(path, text="def test_it():\n    pass\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_test_module_in_no_known_folder_or_importing_a_test_module_is_refused(tmp_path):
    write(tmp_path / "tests" / "unit" / "test_fine.py")
    write(tmp_path / "tests" / "grading" / "test_slow_fine.py")
    write(tmp_path / "tests" / "test_stray.py")
    write(tmp_path / "tests" / "elsewhere" / "test_lost.py")
    write(tmp_path / "tests" / "helpers" / "test_in_the_library.py")
    write(tmp_path / "tests" / "helpers" / "shared.py", "from tests.unit.test_fine import test_it\n")
    write(tmp_path / "tests" / "unit" / "test_borrows.py", "from .test_fine import test_it  # noqa: F401\n")
    result = collect(tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    folders = "tests/unit/, tests/grading/, tests/system/"
    for stray in ("tests/test_stray.py", "tests/elsewhere/test_lost.py", "tests/helpers/test_in_the_library.py"):
        assert f"{stray} is a test module in no known folder: put it in {folders}" in out, out
    assert "tests/unit/test_borrows.py imports from the test module(s) .test_fine: what tests share is in tests/helpers/" \
        in out, out
    assert "tests/helpers/shared.py imports from the test module(s) tests.unit.test_fine" in out, out


def test_a_test_module_in_a_known_folder_is_collected_and_its_folder_gives_its_tier(tmp_path):
    write(tmp_path / "tests" / "unit" / "test_fast.py")
    write(tmp_path / "tests" / "grading" / "test_runs.py")
    write(tmp_path / "tests" / "system" / "test_browser.py")
    write(tmp_path / "show_markers.py", SHOW_MARKERS)  # python -m pytest finds it in its folder
    result = collect(tmp_path, "-p", "show_markers")
    assert result.returncode == 0 and "3 tests collected" in result.stdout, result.stdout + result.stderr
    markers = {line.split()[1].split("::")[0]: line.split(" ", 2)[2] for line in result.stdout.splitlines()
               if line.startswith("MARKERS ")}
    # what make test-fast (-m "not slow ...") and each tier's -m pick
    assert "'slow'" not in markers["tests/unit/test_fast.py"], markers
    assert "'slow'" in markers["tests/grading/test_runs.py"] and "'browser'" not in markers["tests/grading/test_runs.py"]
    assert "'slow'" in markers["tests/system/test_browser.py"] and "'browser'" in markers["tests/system/test_browser.py"]


def test_no_module_of_the_suite_imports_a_test_module():
    found = {str(path.relative_to(TESTS)): conftest.test_modules_imported(path) for path in TESTS.rglob("*.py")}
    assert not {path: modules for path, modules in found.items() if modules}
    assert conftest.test_modules_imported(TESTS / "unit" / "test_layers.py") == []


def test_every_test_module_is_in_a_known_folder_and_the_helpers_hold_none():
    misplaced = [str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py")
                 if path.relative_to(TESTS).parts[0] not in conftest.LAYERS]
    assert not misplaced


def test_the_heaviest_first_order_names_only_slow_modules_that_exist():
    slow = {path.stem for layer, markers in conftest.LAYERS.items() if "slow" in markers
            for path in (TESTS / layer).glob("test_*.py")}
    assert set(conftest.HEAVIEST_FIRST) <= slow, set(conftest.HEAVIEST_FIRST) - slow
    assert len(set(conftest.HEAVIEST_FIRST)) == len(conftest.HEAVIEST_FIRST)
    assert set(conftest.SYSTEM_MARKERS) <= {path.stem for path in (TESTS / "system").glob("test_*.py")}
    names = [path.stem for path in TESTS.rglob("test_*.py")]
    assert len(names) == len(set(names)), "the scheduler knows a module by its name: no two may share one"


def test_each_part_of_the_project_imports_only_parts_of_the_layers_below_it():
    """benchmarks/bench_slurm.py imported tests' Slurm cluster and PostgreSQL server: they are in posenc_course/qa/."""
    breaks = posenc_docs.layer_breaks(posenc_docs.imports_between_parts())
    assert not breaks, "\n".join(breaks)


def test_a_benchmark_that_imports_a_test_helper_breaks_the_layers(tmp_path):
    write(tmp_path / "benchmarks" / "bench_x.py", "from tests.helpers.postgres import postgresql_server\n")
    write(tmp_path / "posenc_solutions" / "core.py", "import posenc_course.layout\n")
    write(tmp_path / "posenc_course" / "layout.py", "import posenc_solutions\nimport hardened_grading.cells\n")
    write(tmp_path / "tests" / "helpers" / "postgres.py", "from posenc_course.qa.postgres import postgresql_server\n")
    counts = posenc_docs.imports_between_parts(tmp_path)
    assert counts == {("benchmarks", "tests"): 1, ("posenc_solutions", "posenc_course"): 1,
                      ("posenc_course", "posenc_solutions"): 1, ("posenc_course", "hardened_grading"): 1,
                      ("tests", "posenc_course"): 1}
    breaks = posenc_docs.layer_breaks(counts)
    assert [line.split(" (")[0] for line in breaks] == ["benchmarks/ imports tests", "posenc_solutions/ imports posenc_course"]
    assert "posenc_course/qa/" in breaks[0]

