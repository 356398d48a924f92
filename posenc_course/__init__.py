"""Course tooling for posenc: build the source notebook, make submissions, run nbgrader, report grades."""

from .layout import ROOT  # noqa: F401  (the repository root, which is also the course directory)
