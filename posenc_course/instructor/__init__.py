"""An instructor's tools: ``posenc-grade``, a class graded in parallel (:mod:`.grade`), and ``make demo``
(:mod:`.demo`).

The class report, the score table and grading on Slurm are the instructor's too; they stay in
:mod:`posenc_course` while they move into the engine's package.
"""
