"""Quality assurance of the graded notebooks' tests: mutation testing, ``make mutants``.

:mod:`.mutation` makes the mutants, :mod:`.mutants` grades them, :mod:`.mutant_plugin` runs the contract tests
against one of them.
"""
