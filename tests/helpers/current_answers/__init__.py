"""Wrong and alternative answers of the third assignment, ``posenc-current``, one module per group of exercises.

The tables have the shapes of ``tests/helpers/advanced_answers`` (its docstring says what each holds):
``WRONG[label] = (exercise, {function_name: code})`` must lose points in its own exercise only;
``WRONG_CONCEPTS[label] = (exercise, {answer cell grade_id: code})``; ``ALTERNATIVES[function_name] = code`` (a
list of codes where one function has several) must keep full marks. This package merges the modules' tables and
refuses a label used twice.
"""

from importlib import import_module

MODULES = ("rope", "layer_plans", "mrope", "swin_v2", "tiled_attention")

WRONG, WRONG_CONCEPTS, ALTERNATIVES = {}, {}, {}
for _name in MODULES:
    _module = import_module(f"{__name__}.{_name}")
    for _merged, _table in ((WRONG, _module.WRONG), (WRONG_CONCEPTS, _module.WRONG_CONCEPTS),
                            (ALTERNATIVES, _module.ALTERNATIVES)):
        _twice = set(_merged) & set(_table)
        assert not _twice, f"tests/helpers/current_answers/{_name}.py repeats {sorted(_twice)}"
        _merged.update(_table)
