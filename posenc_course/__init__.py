"""Course tooling for posenc, a folder per audience; grading is the engine's (:mod:`hardened_grading`).

- :mod:`.authoring`: the notebooks built from their specs, and released;
- :mod:`.student`: ``posenc-check`` and ``posenc-lab``;
- :mod:`.instructor`: ``posenc-grade`` and the demo;
- :mod:`.qa`: mutation testing of the notebooks' tests.

What several audiences use stays here, at the top: the course's names, paths and metadata (:mod:`.layout`), the
course in a new directory (:mod:`.course`), submissions made from the release (:mod:`.submissions`: the demo,
the tests, the benchmarks and mutation testing make them), and :mod:`.commands`, the ``posenc`` command that lists
and runs every command. The class report, the score table and Slurm grading (:mod:`.class_report`,
:mod:`.report`, :mod:`.slurm`) are moving into the engine's package.
"""

from .layout import ROOT  # noqa: F401  (the repository root, which is also the course directory)
