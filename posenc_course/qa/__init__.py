"""Quality assurance of the graded notebooks' tests: mutation testing, ``make mutants``; and the servers that the
tests and the benchmarks start for themselves.

:mod:`.mutation` makes the mutants, :mod:`.mutants` grades them, :mod:`.mutant_plugin` runs the contract tests
against one of them. :mod:`.slurm_cluster` starts a one-node Slurm cluster and :mod:`.postgres` a PostgreSQL server,
here because both ``tests/`` and ``benchmarks/`` use them and neither may import the other.
"""
