"""The theory notebook runs clean, top to bottom, with only numpy and matplotlib, and shows its figures."""

import contextlib
import re
import time

import nbformat
import pytest

from posenc_course import ROOT

from ..helpers import plain_kernel

RELEASE = ROOT / "release" / "theory" / "theory.ipynb"

#: Chapters 1 to 10 follow the first assignment (posenc); from 11 on, the part "Advanced: the second
#: assignment" follows posenc-advanced, then from 18 on the part "Current: the third assignment" follows
#: posenc-current, one idea per chapter and at least one figure each.
FIRST_ADVANCED_CHAPTER = 11
ADVANCED_CHAPTERS = 7
FIRST_CURRENT_CHAPTER = FIRST_ADVANCED_CHAPTER + ADVANCED_CHAPTERS
CURRENT_CHAPTERS = 4
#: Figures of the later parts (11 to 21), on top of the first part's minimum of 10.
ADVANCED_FIGURES = 11 + CURRENT_CHAPTERS


@pytest.fixture(scope="module")
def executed():
    notebook = nbformat.read(str(RELEASE), as_version=4)
    started = time.perf_counter()
    plain_kernel.execute(notebook, timeout=120, allow_errors=False)
    print(f"theory.ipynb ran in {time.perf_counter() - started:.1f} s")
    return notebook


def figure_cells(notebook):
    return [(index, cell) for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
            and any("image/png" in output.get("data", {}) for output in cell.outputs)]


def test_every_cell_runs_without_error_or_warning(executed):
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", output
            assert not (output.output_type == "stream" and output.name == "stderr"), output.text


def test_it_has_no_grade_cells_and_imports_only_numpy_and_matplotlib():
    notebook = nbformat.read(str(RELEASE), as_version=4)
    assert not any(cell.metadata.get("nbgrader", {}).get("grade") for cell in notebook.cells)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    imported = set(re.findall(r"^\s*(?:import|from)\s+([\w.]+)", code, re.M))
    assert imported <= {"math", "numpy", "matplotlib.pyplot", "matplotlib.colors"}, imported


def chapter_headings(notebook):
    return [line for cell in notebook.cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("## ")]


def chapter_of_cell(notebook):
    """The chapter number each cell belongs to (0 before chapter 1)."""
    chapter, chapters = 0, []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    chapter = int(line[3:].split(".")[0])
        chapters.append(chapter)
    return chapters


def test_its_chapters_are_numbered_from_one_without_gaps():
    notebook = nbformat.read(str(RELEASE), as_version=4)
    found = chapter_headings(notebook)
    assert all(re.match(r"## [1-9]\d*\. \S", h) for h in found), found
    expected = [f"## {n}" for n in range(1, len(found) + 1)]
    assert [h.split(".")[0] for h in found] == expected, found
    assert len(found) >= FIRST_CURRENT_CHAPTER - 1 + CURRENT_CHAPTERS, found


@pytest.mark.parametrize("title, first", [("# Advanced: the second assignment", FIRST_ADVANCED_CHAPTER),
                                          ("# Current: the third assignment", FIRST_CURRENT_CHAPTER)])
def test_each_later_part_is_marked_before_its_first_chapter(title, first):
    notebook = nbformat.read(str(RELEASE), as_version=4)
    lines = [line for cell in notebook.cells if cell.cell_type == "markdown"
             for line in cell.source.splitlines() if line.startswith(("# ", "## "))]
    part = [n for n, line in enumerate(lines) if line.startswith(title)]
    assert len(part) == 1, lines
    assert lines[part[0] - 1].startswith(f"## {first - 1}."), lines
    assert lines[part[0] + 1].startswith(f"## {first}."), lines


def test_every_advanced_chapter_has_a_figure(executed):
    chapters = chapter_of_cell(executed)
    with_figures = {chapters[index] for index, _ in figure_cells(executed)}
    advanced = set(range(FIRST_ADVANCED_CHAPTER, len(chapter_headings(executed)) + 1))
    assert len(advanced) >= ADVANCED_CHAPTERS + CURRENT_CHAPTERS, sorted(advanced)
    assert advanced <= with_figures, sorted(advanced - with_figures)


def test_at_least_ten_figures_plus_the_advanced_ones_each_titled_labelled_and_explained(executed):
    figures = figure_cells(executed)
    assert len(figures) >= 10 + ADVANCED_FIGURES, len(figures)
    for index, cell in figures:
        source = cell.source
        assert "title=" in source or "heatmap(" in source, source[:200]
        assert ("xlabel=" in source and "ylabel=" in source) or "heatmap(" in source, source[:200]
        following = next(c for c in executed.cells[index + 1:] if c.cell_type == "markdown")
        assert following.source.startswith("**What to see:**"), following.source[:100]


@contextlib.contextmanager
def theory_helpers():
    """The namespace of the theory notebook's first code cells (imports, settings, helpers), run here with
    matplotlib's file backend; numpy's print options and matplotlib's settings are put back after."""
    import matplotlib
    import numpy as np

    notebook = nbformat.read(str(RELEASE), as_version=4)
    matplotlib.use("Agg")
    with np.printoptions(), matplotlib.rc_context():
        namespace = {}
        for cell in [c for c in notebook.cells if c.cell_type == "code"][:2]:
            exec(cell.source, namespace)
        yield namespace


def colour_key(values, **kwargs):
    with theory_helpers() as helpers:
        plt = helpers["plt"]
        fig, ax = plt.subplots()
        helpers["heatmap"](ax, values, "t", "x", "y", **kwargs)
        bar = fig.axes[-1]
        labels = [tick.get_text() for tick in bar.get_yticklabels()]
        plt.close(fig)
    return labels


def test_a_boolean_mask_gets_a_key_of_two_named_colours_not_a_0_to_1_scale():
    import numpy as np

    assert colour_key(np.tri(4, dtype=bool)) == ["False", "True"]
    assert colour_key(np.tri(4, dtype=bool), categories={False: "masked", True: "attends"}) == ["masked", "attends"]


def test_a_categorical_map_keys_only_the_categories_it_has():
    import numpy as np

    values = np.array([[0, 0, 1, 1, 2, 2, 3, 3]])
    assert colour_key(values, cmap="tab10", categories={t: f"pair {t}" for t in range(4)}) == [
        "pair 0", "pair 1", "pair 2", "pair 3"]


def test_legends_are_readable():
    """Legend text at least 10 points (at the figures' 90 dpi, 12 px tall), and no cell makes it smaller."""
    with theory_helpers() as helpers:
        size = helpers["matplotlib"].font_manager.FontProperties(
            size=helpers["plt"].rcParams["legend.fontsize"]).get_size_in_points()
    assert size >= 10
    notebook = nbformat.read(str(RELEASE), as_version=4)
    assert not [c.source for c in notebook.cells if c.cell_type == "code" and re.search(r"legend\([^)]*fontsize", c.source)]


def test_running_the_helpers_here_leaves_numpys_print_options_as_they_were():
    import numpy as np

    before = np.get_printoptions()
    with theory_helpers():
        assert np.get_printoptions()["precision"] == 4
    assert np.get_printoptions() == before
