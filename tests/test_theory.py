"""The theory notebook runs clean, top to bottom, with only numpy and matplotlib, and shows its figures."""

import re
import time

import nbformat
import pytest
from nbclient import NotebookClient

from posenc_course import ROOT

RELEASE = ROOT / "release" / "theory" / "theory.ipynb"


@pytest.fixture(scope="module")
def executed():
    notebook = nbformat.read(str(RELEASE), as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=False).execute()
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
    assert imported <= {"math", "numpy", "matplotlib.pyplot"}, imported


def test_it_follows_the_ten_chapters():
    notebook = nbformat.read(str(RELEASE), as_version=4)
    headings = [line for cell in notebook.cells if cell.cell_type == "markdown"
                for line in cell.source.splitlines() if line.startswith("## ")]
    assert [h.split(".")[0] for h in headings] == [f"## {n}" for n in range(1, 11)], headings


def test_at_least_ten_figures_each_titled_labelled_and_explained(executed):
    figures = figure_cells(executed)
    assert len(figures) >= 10, len(figures)
    for index, cell in figures:
        source = cell.source
        assert "title=" in source or "heatmap(" in source, source[:200]
        assert ("xlabel=" in source and "ylabel=" in source) or "heatmap(" in source, source[:200]
        following = next(c for c in executed.cells[index + 1:] if c.cell_type == "markdown")
        assert following.source.startswith("**What to see:**"), following.source[:100]
