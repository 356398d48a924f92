"""Build the nbgrader source notebooks from their literate specs and the reference package.

Each spec (``authoring/exercises.md``, ``authoring/theory.md``) is markdown. Text becomes markdown cells, split
at lines holding only ``+++``. Fenced code blocks become code cells; the words after
```` ```python ```` say what kind:

``python``                            a plain code cell
``python locked ID``                  a read-only cell (helpers the tests use)
``python solution ID``                a solution cell; the code holds ``### BEGIN/END SOLUTION``
``python solution ID from=f1,f2``     a solution cell filled with the source of ``posenc_solutions.f1``
                                      and ``f2``: signature and docstring kept, body between markers
``python tests ID points=N``          an autograded test cell, hidden tests between
                                      ``### BEGIN/END HIDDEN TESTS``

The solution code therefore has one source of truth: ``posenc_solutions``.

    python -m posenc_course.notebook            # write source/posenc/exercises.ipynb and source/theory/theory.ipynb
    python -m posenc_course.notebook --check    # exit 1 if a committed notebook is stale
"""

import argparse
import ast
import inspect
import json
import re
import sys
import textwrap

import nbformat

import posenc_solutions

from . import ROOT
#: spec -> source notebook, one per nbgrader assignment
NOTEBOOKS = {
    ROOT / "authoring" / "exercises.md": ROOT / "source" / "posenc" / "exercises.ipynb",
    ROOT / "authoring" / "theory.md": ROOT / "source" / "theory" / "theory.ipynb",
}

FENCE = re.compile(r"^```python(?P<info>[^\n]*)\n(?P<code>.*?)^```\s*$", re.S | re.M)


def solution_source(name):
    """Source of ``posenc_solutions.<name>`` with its body wrapped in solution markers."""
    source = textwrap.dedent(inspect.getsource(getattr(posenc_solutions, name)))
    function = ast.parse(source).body[0]
    body = function.body
    first = body[1] if ast.get_docstring(function) is not None else body[0]
    lines = source.rstrip("\n").split("\n")
    head, tail = lines[:first.lineno - 1], lines[first.lineno - 1:]
    indent = re.match(r"\s*", tail[0]).group(0)
    return "\n".join(head + [indent + "### BEGIN SOLUTION"] + tail + [indent + "### END SOLUTION"])


def nbgrader_metadata(kind, grade_id, points=None):
    meta = {"grade": kind == "tests", "solution": kind == "solution", "locked": kind != "solution",
            "task": False, "schema_version": 3, "grade_id": grade_id}
    if kind == "tests":
        meta["points"] = points
    return meta


def code_cell(info, code):
    words = info.split()
    options = dict(word.split("=", 1) for word in words if "=" in word)
    plain = [word for word in words if "=" not in word]
    cell = nbformat.v4.new_code_cell(code.rstrip("\n"))
    if not plain:
        return cell
    kind, grade_id = plain
    if kind not in ("locked", "solution", "tests"):
        raise ValueError(f"unknown cell kind {kind!r} in ```python {info}")
    if "from" in options:
        sources = [solution_source(name) for name in options["from"].split(",")]
        cell.source = "\n\n\n".join(filter(None, [cell.source] + sources))
    points = float(options["points"]) if "points" in options else None
    if kind == "tests" and points is None:
        raise ValueError(f"test cell {grade_id} needs points=N")
    cell.metadata["nbgrader"] = nbgrader_metadata(kind, grade_id, points)
    return cell


def markdown_cells(text):
    for chunk in re.split(r"^\+\+\+\s*$", text, flags=re.M):
        if chunk.strip():
            yield nbformat.v4.new_markdown_cell(chunk.strip("\n"))


def build(spec_text):
    cells, position = [], 0
    for match in FENCE.finditer(spec_text):
        cells.extend(markdown_cells(spec_text[position:match.start()]))
        cells.append(code_cell(match.group("info").strip(), match.group("code")))
        position = match.end()
    cells.extend(markdown_cells(spec_text[position:]))
    for number, cell in enumerate(cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id.replace("_", "-") if grade_id else f"cell-{number:03d}"
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook


def render(notebook):
    return json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the source notebooks from their specs.")
    parser.add_argument("--check", action="store_true", help="only check that the committed notebooks are current")
    args = parser.parse_args(argv)
    stale = 0
    for spec, notebook in NOTEBOOKS.items():
        text = render(build(spec.read_text()))
        name = notebook.relative_to(ROOT)
        if args.check:
            current = notebook.exists() and notebook.read_text() == text
            stale += not current
            print(f"{name} is current" if current else f"{name} is stale: run `make notebook`",
                  file=sys.stdout if current else sys.stderr)
        else:
            notebook.parent.mkdir(parents=True, exist_ok=True)
            notebook.write_text(text)
            print(f"wrote {name}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
