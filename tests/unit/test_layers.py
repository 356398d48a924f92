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
    assert [line.split(" (")[0] for line in breaks] == ["benchmarks/ imports tests",
                                                        "posenc_solutions/ imports posenc_course"]
    assert "posenc_course/qa/" in breaks[0]


# -- the picture of the layers (docs/maintainers/architecture.md) -------------------------------------------------

#: How near, in pixels, an arrow's end must be to a box to be on it, and how far text may touch other text.
NEAR = 4


def shaft_points(patch, steps=40):
    """The points, in pixels, along the shaft of an arrow `patch` (its path's first part; the head follows)."""
    import numpy as np

    path = patch.get_transform().transform_path(patch.get_path())
    points = []
    for segment, code in path.iter_bezier():
        if points and code == 1:  # a MOVETO after the shaft: the head
            break
        points.extend(tuple(point) for point in segment(np.linspace(0, 1, steps)))
    return points


def inside(point, extent, margin=0.0):
    """Whether `point` is in `extent` (a Bbox, pixels), grown by `margin` (shrunk when negative)."""
    x, y = point
    return extent.x0 - margin <= x <= extent.x1 + margin and extent.y0 - margin <= y <= extent.y1 + margin


def picture_flaws(fig):
    """What a reader would see wrong in a drawn picture of the layers: an arrow whose tail or tip is on no box (it
    ends in empty space), an arrow across a box that is not its own, text over other text."""
    from matplotlib.patches import FancyArrowPatch

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    parts = {name for _, names in posenc_docs.LAYERS for name in names}
    boxes = {t.get_text(): t.get_bbox_patch().get_window_extent(renderer) for t in ax.texts if t.get_text() in parts}
    flaws = []
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    arrows += [t.arrow_patch for t in ax.texts if getattr(t, "arrow_patch", None)]  # ax.annotate's arrows
    for patch in arrows:
        points = shaft_points(patch)
        ends = [next((name for name, box in boxes.items() if inside(point, box, NEAR)), None)
                for point in (points[0], points[-1])]
        if None in ends:
            flaws.append(f"an arrow from {ends[0] or 'empty space'} ends in {ends[1] or 'empty space'}")
        for name, box in boxes.items():
            if name not in ends and any(inside(point, box, -NEAR) for point in points):
                flaws.append(f"an arrow from {ends[0] or 'empty space'} to {ends[1] or 'empty space'} crosses the box "
                             f"of {name}")
    texts = [(t.get_text(), (t.get_bbox_patch() or t).get_window_extent(renderer)) for t in ax.texts if t.get_text()]
    for i, (text, extent) in enumerate(texts):
        for other, other_extent in texts[i + 1:]:
            if extent.padded(-1).overlaps(other_extent.padded(-1)):
                flaws.append(f"{text!r} is over {other!r}")
    return flaws


def test_the_picture_of_the_layers_has_every_arrow_between_boxes_and_no_text_over_text():
    """The site's picture as the code's imports draw it, and with an import that breaks the layers (benchmarks
    importing a test helper): no arrow into empty space or across another box, no count over a name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = posenc_docs.imports_between_parts()
    for drawn in (counts, {**counts, ("benchmarks", "tests"): 2}):
        fig = posenc_docs.layers_figure(drawn)
        try:
            assert picture_flaws(fig) == [], drawn
            assert len([p for p in fig.axes[0].patches if p.get_path() is not None]) == len(drawn)
        finally:
            plt.close(fig)


def test_a_count_over_a_name_and_an_arrow_into_empty_space_are_found():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    fig = posenc_docs.layers_figure({})
    ax = fig.axes[0]
    ax.text(3.0, 2 * posenc_docs.ROW, "2", fontsize=8)  # on "benchmarks"
    ax.add_patch(FancyArrowPatch((1.0, 2 * posenc_docs.ROW - 0.2), (1.0, 0.9), arrowstyle="->"))  # tests to nowhere
    ax.add_patch(FancyArrowPatch((1.0, 2 * posenc_docs.ROW - 0.2), (5.0, 0.2), arrowstyle="->"))  # across the middle
    try:
        flaws = picture_flaws(fig)
    finally:
        plt.close(fig)
    assert "'benchmarks' is over '2'" in flaws, flaws
    assert "an arrow from tests ends in empty space" in flaws, flaws
    assert "an arrow from tests to posenc_solutions crosses the box of posenc_course" in flaws, flaws
