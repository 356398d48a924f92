"""Wrong and alternative answers of the second assignment, ``posenc-advanced``, one module per scheme.

Each module holds three tables, in the shapes of the first assignment's ``wrong_solutions``:

- ``WRONG[label] = (exercise, {function_name: code})``: a mistake students make; it must lose points
  in its own exercise and keep full marks in every other one;
- ``WRONG_CONCEPTS[label] = (exercise, {answer cell grade_id: code})``: a concept answer gone wrong;
- ``ALTERNATIVES[function_name] = code``: a correct answer written differently from the reference
  (loops, einsum, complex numbers, another equal formula); it must get full marks;
- ``STUDENT_ALTERNATIVES[function_name] = code`` (``found_in_review`` only): one more student's correct
  answers, all of them written in a way of their own; they must get full marks too.

Code is a string, as a student would write it in the notebook: ``np``, ``math`` and the notebook's
other functions are there. This package merges the modules' tables and refuses a label used twice.
"""

from importlib import import_module

MODULES = ("shaw", "transformer_xl", "rope_scaling", "rope_layouts", "found_in_review")

WRONG, WRONG_CONCEPTS, ALTERNATIVES, STUDENT_ALTERNATIVES = {}, {}, {}, {}
for _name in MODULES:
    _module = import_module(f"{__name__}.{_name}")
    for _merged, _table in ((WRONG, _module.WRONG), (WRONG_CONCEPTS, _module.WRONG_CONCEPTS),
                            (ALTERNATIVES, _module.ALTERNATIVES),
                            (STUDENT_ALTERNATIVES, getattr(_module, "STUDENT_ALTERNATIVES", {}))):
        _twice = set(_merged) & set(_table)
        assert not _twice, f"tests/helpers/advanced_answers/{_name}.py repeats {sorted(_twice)}"
        _merged.update(_table)
