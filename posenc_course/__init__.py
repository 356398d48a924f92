"""Course tooling for posenc: build the source notebook, make submissions, report grades; grading is the engine's
(:mod:`hardened_grading`)."""

from .layout import ROOT  # noqa: F401  (the repository root, which is also the course directory)
