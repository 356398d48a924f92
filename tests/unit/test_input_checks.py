"""Every input check of the contract is tried with an input that the rest of the function accepts.

A student who forgets a check that the contract lists (``ValueError`` if the widths differ, ...) writes a
function that raises nothing where it should, or raises numpy's own ValueError on some inputs and not on
others: a width-1 table broadcasts, one position broadcasts over L, a float window side is rounded. For each
such check of the reference solutions, of every graded assignment, the check is taken out
(:func:`posenc_course.mutation.dropped_guards`) and the notebook's own test cells, hidden ones included, are
judged against the result in this process (:func:`posenc_course.mutants.judge_in_process`, the real
judge): a test cell of the function's exercise must fail.

Some checks cannot be told apart this way, because the reference's next line turns away every input the
contract says they reject with a ValueError of its own (a shape unpacked into two names, a reshape). Those are listed in
:data:`CAUGHT_BY_THE_NEXT_LINE` with the line that does it; the tests still try an input that a student's
other way of writing the function would accept, and the list is checked to be exactly the survivors.
"""


import numpy as np
import pytest

import posenc_solutions
from posenc_course.layout import ADVANCED, ASSIGNMENT, CURRENT, exercise_functions
from posenc_course.qa.mutants import judge_in_process
from posenc_course.qa.mutation import dropped_guards


#: ``{(assignment, mutant name): the reference's line that raises ValueError for every input the check rejects}``
CAUGHT_BY_THE_NEXT_LINE = {
    (ASSIGNMENT, "add_positions: `if tokens.ndim < 2:` -> `pass`"):
        "length, width = tokens.shape[-2:]  (the test tries np.zeros(6), which a broadcasting answer accepts)",
    (ASSIGNMENT, "apply_rope: `if x.ndim < 2 or x.shape[-1] % 2:` -> `pass`"):
        "rope_frequencies(x.shape[-1], base), whose contract raises ValueError for an odd dimension",
    (ASSIGNMENT, "alibi_slopes: `if (isinstance(num_heads, (bool, np.bool_))` -> `pass`"):
        "math.log2(num_heads) for num_heads < 1 (the test tries -2, for which np.arange(1, num_heads + 1) is empty)",
    (ADVANCED, "rel_shift: `if x.ndim < 2:` -> `pass`"):
        "lq, lk = x.shape[-2:]",
    (ADVANCED, "transformer_xl_scores: `if k.shape[-1] != d:` -> `pass`"):
        "(q + u) @ np.swapaxes(k, -1, -2): matmul does not broadcast the contracted widths",
    (ADVANCED, "permute_for_half_split: `if weight.ndim != 2:` -> `pass`"):
        "rows, d_model = weight.shape",
    (ADVANCED, "permute_for_half_split: `if rows % num_heads:` -> `pass`"):
        "weight.reshape(num_heads, head_dim, d_model), for every weight with at least one column",
}


def surviving_dropped_checks(assignment):
    """The names of the mutants of :func:`dropped_guards` that every test cell of their exercise passes, each
    judged as ``make mutants --in-process`` judges a mutant (:func:`posenc_course.mutants.judge_in_process`)."""
    dropped = [mutant for exercise, names in exercise_functions(assignment).items() for name in names
               for mutant in dropped_guards(getattr(posenc_solutions, name), exercise)]
    scores = judge_in_process(dropped, assignment)
    return [mutant.name for mutant in dropped if scores[mutant.key][0] >= scores[mutant.key][1]]


@pytest.mark.parametrize("assignment", [ASSIGNMENT, ADVANCED, CURRENT])
def test_an_answer_that_leaves_out_an_input_check_of_the_contract_loses_points(assignment):
    survivors = set(surviving_dropped_checks(assignment))
    listed = {name for where, name in CAUGHT_BY_THE_NEXT_LINE if where == assignment}
    missed = sorted(survivors - listed)
    assert not missed, (
        f"{assignment}: these answers without an input check the contract lists keep full marks: add a hidden test "
        "that tries an input the rest of the function accepts (one numpy would broadcast or round):\n  "
        + "\n  ".join(missed))
    stale = sorted(listed - survivors)
    assert not stale, f"{assignment}: caught now, so remove them from CAUGHT_BY_THE_NEXT_LINE:\n  " + "\n  ".join(stale)


def test_a_dropped_check_is_the_reference_with_one_if_made_pass():
    """The width check of add_positions taken out: a width-1 table then broadcasts, where the reference refuses it."""
    [width_check] = [m for m in dropped_guards(posenc_solutions.add_positions, "ex02") if "width" in m.before]
    assert width_check.before.strip() == "if table.shape[1] != width:" and width_check.after.strip() == "pass"
    namespace = {"np": np}
    exec(width_check.source, namespace)
    tokens, table = np.ones((2, 3)), np.arange(5.0)[:, None]
    np.testing.assert_array_equal(namespace["add_positions"](tokens, table), [[1.0] * 3, [2.0] * 3])
    with pytest.raises(ValueError, match="width"):
        posenc_solutions.add_positions(tokens, table)
