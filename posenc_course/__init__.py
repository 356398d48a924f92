"""Course tooling for posenc: build the source notebook, make submissions, run nbgrader, report grades."""

from pathlib import Path

#: The repository root, which is also the nbgrader course directory.
ROOT = Path(__file__).resolve().parents[1]
