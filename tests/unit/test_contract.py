"""The contract (``docs/contract.md`` and the functions' docstrings): values on random inputs, shapes, dtypes, errors, no mutation.

Values are checked against ``alternative_solutions``, written independently from
the contract's formulas with loops and complex numbers.
"""

import inspect

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import posenc_solutions as ps

from ..helpers import alternative_solutions as alt

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
small_positions = st.integers(-300, 300)


def position_lists(max_size=7):
    return st.lists(small_positions, min_size=1, max_size=max_size).map(np.array)


def floats(shape):
    return hnp.arrays(np.float64, shape, elements=finite)


@st.composite
def attention_weights(draw, num_heads=None, lq=None, lk=None):
    shape = (num_heads or draw(st.integers(1, 3)), lq or draw(st.integers(1, 5)), lk or draw(st.integers(1, 6)))
    raw = draw(hnp.arrays(np.float64, shape, elements=st.floats(0, 1)))
    raw[..., 0] += 1e-3
    raw[raw < 0.2] = 0.0  # exact zeros, for 0 log 0
    raw[..., 0] += 1e-3
    return raw / raw.sum(axis=-1, keepdims=True)


@st.composite
def masks(draw):
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=2, max_side=7))
    return draw(hnp.arrays(draw(st.sampled_from([np.int64, np.int8, bool])), shape, elements=st.integers(0, 1)))


@st.composite
def cases(draw, name):
    """Arguments ``(args, kwargs)`` for the contract function `name`."""
    if name == "sinusoidal_row":
        return (draw(st.floats(-1e4, 1e4)), 2 * draw(st.integers(1, 12))), {"base": draw(st.sampled_from([2.0, 100.0, 1e4]))}
    if name == "sinusoidal_table":
        return (draw(st.integers(0, 12)), 2 * draw(st.integers(1, 12))), {"base": draw(st.sampled_from([7.0, 1e4]))}
    if name == "add_positions":
        lead = draw(st.lists(st.integers(1, 3), max_size=2))
        length, width, extra = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(0, 4))
        start = draw(st.integers(0, extra))
        return (draw(floats(tuple(lead) + (length, width))), draw(floats((length + extra, width)))), {"start": start}
    if name in ("relative_position_matrix", "causal_mask"):
        return (draw(position_lists()), draw(position_lists())), {}
    if name == "clipped_relative_bias":
        table = draw(floats((draw(st.integers(1, 3)), 2 * draw(st.integers(0, 5)) + 1)))
        return (table, draw(position_lists()), draw(position_lists())), {}
    if name == "t5_relative_position_bucket":
        rel = draw(hnp.arrays(np.int64, hnp.array_shapes(max_dims=2, max_side=6), elements=st.integers(-2000, 2000)))
        kwargs = {"bidirectional": draw(st.booleans()), "num_buckets": draw(st.sampled_from([8, 16, 32, 64])),
                  "max_distance": draw(st.sampled_from([40, 128, 500]))}
        return (rel,), kwargs
    if name == "t5_relative_bias":
        table = draw(floats((draw(st.integers(1, 3)), draw(st.sampled_from([8, 32])))))
        kwargs = {"bidirectional": draw(st.booleans()), "max_distance": draw(st.sampled_from([20, 128]))}
        return (table, draw(position_lists()), draw(position_lists())), kwargs
    if name == "rope_frequencies":
        return (2 * draw(st.integers(1, 64)),), {"base": draw(st.sampled_from([10.0, 1e4, 5e5]))}
    if name == "apply_rope":
        length, head_dim = draw(st.integers(1, 6)), 2 * draw(st.integers(1, 8))
        x = draw(floats(tuple(draw(st.lists(st.integers(1, 3), max_size=2))) + (length, head_dim)))
        pos = np.array(draw(st.lists(small_positions, min_size=length, max_size=length)))
        return (x, pos), {"base": draw(st.sampled_from([100.0, 1e4]))}
    if name == "pair_norms":
        return (draw(floats(tuple(draw(st.lists(st.integers(1, 3), max_size=2))) + (2 * draw(st.integers(1, 6)),))),), {}
    if name == "rotation_2d":
        return (draw(st.floats(-20, 20)),), {}
    if name == "rope_score_2d":
        return (draw(floats((2,))), draw(floats((2,))), draw(small_positions), draw(small_positions),
                draw(st.floats(0.001, 2))), {}
    if name == "rope_score_from_offset":
        return (draw(floats((2,))), draw(floats((2,))), draw(small_positions), draw(st.floats(0.001, 2))), {}
    if name == "alibi_slopes":
        return (draw(st.integers(1, 70)),), {}
    if name == "alibi_bias":
        return (ps.alibi_slopes(draw(st.integers(1, 12))), draw(position_lists()), draw(position_lists())), {}
    if name == "masked_softmax":
        logits = draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                                 elements=st.floats(-1e4, 1e4)))
        mask = draw(hnp.arrays(bool, logits.shape[-1:] if draw(st.booleans()) else logits.shape))
        return (logits, mask), {}
    if name == "alibi_attention":
        q, k = draw(position_lists()), draw(position_lists())
        heads = draw(st.integers(1, 4))
        scores = draw(floats((heads, len(q), len(k)) if draw(st.booleans()) else (len(q), len(k))))
        return (scores, ps.alibi_slopes(heads), q, k), {"causal": draw(st.booleans())}
    if name == "learned_table_parameters":
        return (draw(st.integers(0, 10**6)), draw(st.integers(0, 10**4))), {}
    if name == "position_parameter_count":
        scheme = draw(st.sampled_from(["learned", "sinusoidal", "rope", "alibi", "t5", "shaw"]))
        heads = draw(st.integers(1, 16))
        return (scheme,), {"d_model": heads * draw(st.integers(1, 64)), "num_heads": heads,
                           "num_layers": draw(st.integers(1, 48)), "max_positions": draw(st.integers(0, 8192)),
                           "num_buckets": draw(st.integers(1, 64)), "max_distance": draw(st.integers(0, 64))}
    if name == "interpolate_position_table":
        return (draw(floats((draw(st.integers(2, 9)), draw(st.integers(1, 3))))), draw(st.integers(2, 30))), {}
    if name == "position_ids_from_attention_mask":
        return (draw(masks()),), {}
    if name == "decode_position_ids":
        return (draw(masks()), draw(st.integers(0, 5))), {}
    if name == "first_bad_decode_step":
        prompt_len = draw(st.integers(0, 50))
        ids = prompt_len + np.arange(draw(st.integers(0, 8)))
        if ids.size and draw(st.booleans()):
            ids[draw(st.integers(0, ids.size - 1)):] += draw(st.sampled_from([-1, 1, 2]))
        return (prompt_len, ids), {}
    if name == "mean_attention_distance":
        w = draw(attention_weights())
        q = np.array(draw(st.lists(small_positions, min_size=w.shape[1], max_size=w.shape[1])))
        k = np.array(draw(st.lists(small_positions, min_size=w.shape[2], max_size=w.shape[2])))
        return (w, q, k), {}
    if name == "attention_entropy":
        return (draw(attention_weights()),), {}
    if name == "shift_invariance_gap":
        length, width = draw(st.integers(1, 5)), draw(st.integers(1, 4))
        fn = draw(st.sampled_from([absolute_logits, relative_logits]))
        return (fn, draw(floats((length, width))), draw(floats((length, width))), draw(st.integers(-50, 50))), {}
    if name == "needle_attention_by_depth":
        slopes = ps.alibi_slopes(draw(st.integers(1, 4)))
        context_len = draw(st.integers(1, 40))
        # Depths whose needle position is not a rounding tie.
        depths = [p / max(context_len - 1, 1) for p in draw(st.lists(st.integers(0, context_len - 1), max_size=5))]
        return ((lambda qp, kp: ps.alibi_bias(slopes, qp, kp)), context_len, depths), {
            "needle_logit": draw(st.floats(-5, 10))}
    raise AssertionError(f"no strategy for {name}")


def absolute_logits(q, k, positions):
    pe = ps.sinusoidal_table(int(np.max(np.abs(positions))) + 1, 2 * q.shape[1])[np.abs(positions)]
    return (q @ k.T) + pe @ pe.T


def relative_logits(q, k, positions):
    return (q @ k.T) - 0.1 * np.abs(np.subtract.outer(positions, positions))


ALL_FUNCTIONS = [name for names in ps.EXERCISES.values() for name in names]


def test_the_package_exports_the_28_contract_functions_once():
    assert len(ALL_FUNCTIONS) == 28 == len(set(ALL_FUNCTIONS))
    assert all(callable(getattr(ps, name)) for name in ALL_FUNCTIONS)


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_signature_matches_the_contract(name):
    expected = {
        "sinusoidal_row": "(position, d_model, base=10000.0)",
        "sinusoidal_table": "(num_positions, d_model, base=10000.0)",
        "add_positions": "(token_embeddings, position_table, start=0)",
        "relative_position_matrix": "(query_positions, key_positions)",
        "causal_mask": "(query_positions, key_positions)",
        "clipped_relative_bias": "(bias_table, query_positions, key_positions)",
        "t5_relative_position_bucket": "(relative_position, bidirectional=True, num_buckets=32, max_distance=128)",
        "t5_relative_bias": "(bias_table, query_positions, key_positions, bidirectional=True, max_distance=128)",
        "rope_frequencies": "(head_dim, base=10000.0)",
        "apply_rope": "(x, positions, base=10000.0)",
        "pair_norms": "(x)",
        "rotation_2d": "(angle)",
        "rope_score_2d": "(q, k, m, n, theta)",
        "rope_score_from_offset": "(q, k, offset, theta)",
        "alibi_slopes": "(num_heads)",
        "alibi_bias": "(slopes, query_positions, key_positions)",
        "masked_softmax": "(logits, mask)",
        "alibi_attention": "(scores, slopes, query_positions, key_positions, causal=True)",
        "learned_table_parameters": "(max_positions, d_model)",
        "position_parameter_count": "(scheme, *, d_model, num_heads, num_layers, max_positions=0, "
                                    "num_buckets=32, max_distance=16)",
        "interpolate_position_table": "(table, new_num_positions)",
        "position_ids_from_attention_mask": "(attention_mask)",
        "decode_position_ids": "(attention_mask, num_new_tokens)",
        "first_bad_decode_step": "(prompt_len, observed_position_ids)",
        "mean_attention_distance": "(weights, query_positions, key_positions)",
        "attention_entropy": "(weights)",
        "shift_invariance_gap": "(logit_fn, q, k, shift)",
        "needle_attention_by_depth": "(bias_fn, context_len, depths, needle_logit=5.0)",
    }
    assert str(inspect.signature(getattr(ps, name))) == expected[name]


def assert_same_answer(got, want):
    if want is None or isinstance(want, (int, bool)) and not isinstance(want, np.ndarray):
        assert got == want and type(got) is type(want), (got, want)
        return
    if isinstance(want, float):
        assert isinstance(got, float), type(got)
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "biu":
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
    else:
        assert got.dtype.kind == "f", got.dtype
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * (1 + np.abs(want).max(initial=0)))


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
@given(data=st.data())
def test_agrees_with_an_independent_implementation(name, data):
    args, kwargs = data.draw(cases(name))
    assert_same_answer(getattr(ps, name)(*args, **kwargs), getattr(alt, name)(*args, **kwargs))


def _read_only_copies(value):
    if isinstance(value, np.ndarray):
        frozen = value.copy()
        frozen.flags.writeable = False
        return frozen
    return value


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
@given(data=st.data())
def test_inputs_are_not_modified(name, data):
    args, kwargs = data.draw(cases(name))
    originals = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    getattr(ps, name)(*args, **kwargs)
    for before, after in zip(originals, args):
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(after, before)
    # A write into a read-only input would raise.
    getattr(ps, name)(*map(_read_only_copies, args), **kwargs)


@pytest.mark.parametrize("name, args, kwargs, dtype, shape", [
    ("relative_position_matrix", ([1, 2, 3], [0, 5]), {}, np.int64, (3, 2)),
    ("causal_mask", ([1, 2, 3], [0, 5]), {}, np.bool_, (3, 2)),
    ("position_ids_from_attention_mask", (np.array([[True, False], [True, True]]),), {}, np.int64, (2, 2)),
    ("decode_position_ids", ([[1, 0, 1]], 0), {}, np.int64, (1, 0)),
    ("decode_position_ids", ([[1, 0, 1], [0, 0, 0]], 2), {}, np.int64, (2, 2)),
    ("t5_relative_position_bucket", (np.zeros((2, 3), dtype=np.int32),), {}, None, (2, 3)),
    ("sinusoidal_table", (0, 8), {}, np.float64, (0, 8)),
    ("sinusoidal_row", (5, 8), {}, np.float64, (8,)),
    ("rope_frequencies", (10,), {}, np.float64, (5,)),
    ("apply_rope", (np.ones((2, 3, 4, 6), dtype=np.int64), [0, 1, 2, 3]), {}, np.float64, (2, 3, 4, 6)),
    ("pair_norms", (np.ones((3, 4, 6)),), {}, np.float64, (3, 4, 3)),
    ("rotation_2d", (0.3,), {}, np.float64, (2, 2)),
    ("alibi_attention", (np.zeros((3, 4)), [0.5, 0.25], [0, 1, 2], [0, 1, 2, 3]), {}, np.float64, (2, 3, 4)),
    ("masked_softmax", (np.zeros((2, 3, 4)), np.array([True, False, True, True])), {}, np.float64, (2, 3, 4)),
    ("masked_softmax", (np.zeros(4), np.ones((2, 4), dtype=bool)), {}, np.float64, (2, 4)),
    ("interpolate_position_table", (np.ones((4, 3)), 9), {}, np.float64, (9, 3)),
    ("add_positions", (np.ones((2, 3), dtype=np.int64), np.ones((3, 3), dtype=np.int64)), {}, np.float64, (2, 3)),
])
def test_shapes_and_dtypes(name, args, kwargs, dtype, shape):
    out = getattr(ps, name)(*args, **kwargs)
    assert out.shape == shape
    if dtype is not None:
        assert out.dtype == dtype
    else:
        assert out.dtype.kind == "i"


def test_scalar_results_are_python_numbers():
    assert type(ps.rope_score_2d([1, 2], [3, 4], 1, 2, 0.1)) is float
    assert type(ps.rope_score_from_offset([1, 2], [3, 4], 1, 0.1)) is float
    assert type(ps.shift_invariance_gap(relative_logits, np.ones((3, 2)), np.ones((3, 2)), 4)) is float
    assert type(ps.first_bad_decode_step(3, np.array([3, 5]))) is int
    assert type(ps.learned_table_parameters(np.int64(4), 3)) is int


def test_t5_bucket_prints_no_warning_for_zero_distance():
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        ps.t5_relative_position_bucket(np.zeros(3, dtype=np.int64))
        ps.t5_relative_position_bucket(np.arange(-3, 4), bidirectional=False)


def test_masked_softmax_is_stable_for_huge_logits():
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        out = ps.masked_softmax(np.array([[1e4, -1e4, 1e4], [-1e4, -1e4, -1e4]]), np.array([True, True, False]))
    np.testing.assert_array_equal(out, [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])


ERRORS = [
    ("sinusoidal_row", (1, 5), {}),
    ("sinusoidal_row", (1, 0), {}),
    ("sinusoidal_row", (1, 3.5), {}),
    ("sinusoidal_row", (1, 4), {"base": 0.0}),
    ("sinusoidal_row", (1, 4), {"base": -2.0}),
    ("sinusoidal_table", (-1, 4), {}),
    ("sinusoidal_table", (3, 7), {}),
    ("sinusoidal_table", (3, 4), {"base": 0.0}),
    ("add_positions", (np.ones(4), np.ones((5, 4))), {}),
    ("add_positions", (np.ones((2, 4)), np.ones(4)), {}),
    ("add_positions", (np.ones((2, 4)), np.ones((5, 3))), {}),
    ("add_positions", (np.ones((2, 4)), np.ones((5, 4))), {"start": -1}),
    ("add_positions", (np.ones((1, 4)), np.ones((5, 4))), {"start": -1}),  # one token: no broadcast error to lean on
    ("add_positions", (np.ones((2, 4)), np.ones((5, 4))), {"start": 4}),
    ("relative_position_matrix", ([[1, 2]], [1]), {}),
    ("relative_position_matrix", ([1, 2], 3), {}),
    ("clipped_relative_bias", (np.ones(3), [0], [0]), {}),
    ("clipped_relative_bias", (np.ones((2, 4)), [0], [0]), {}),
    ("rope_frequencies", (7,), {}),
    ("rope_frequencies", (0,), {}),
    ("apply_rope", (np.ones((3, 5)), [0, 1, 2]), {}),
    ("apply_rope", (np.ones((3, 4)), [0, 1]), {}),
    ("pair_norms", (np.ones((2, 3)),), {}),
    ("alibi_slopes", (0,), {}),
    ("alibi_slopes", (-3,), {}),
    ("learned_table_parameters", (-1, 4), {}),
    ("learned_table_parameters", (4, -1), {}),
    ("position_parameter_count", ("xpos",), {"d_model": 8, "num_heads": 2, "num_layers": 1}),
    ("interpolate_position_table", (np.ones(4), 3), {}),
    ("interpolate_position_table", (np.ones((1, 4)), 3), {}),
    ("interpolate_position_table", (np.ones((4, 2)), 1), {}),
    ("position_ids_from_attention_mask", ([1, 0, 1],), {}),
    ("position_ids_from_attention_mask", ([[1, 2, 1]],), {}),
    ("decode_position_ids", ([[1, 1]], -1), {}),
    ("decode_position_ids", ([1, 1], 2), {}),
    ("decode_position_ids", ([[1, -1]], 2), {}),
    ("needle_attention_by_depth", (lambda qp, kp: np.zeros((1, 1, len(kp))), 0, [0.5]), {}),
    ("needle_attention_by_depth", (lambda qp, kp: np.zeros((1, 1, len(kp))), 8, [0.5, 1.5]), {}),
    ("needle_attention_by_depth", (lambda qp, kp: np.zeros((1, 1, len(kp))), 8, [-0.1]), {}),
]


@pytest.mark.parametrize("name, args, kwargs", ERRORS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(ERRORS)])
def test_contract_value_errors(name, args, kwargs):
    with pytest.raises(ValueError) as error:
        getattr(ps, name)(*args, **kwargs)
    assert len(str(error.value)) > 15, "the message should say what was wrong"


def test_out_of_range_message_names_the_table_length():
    with pytest.raises(ValueError, match="P=5"):
        ps.add_positions(np.ones((1, 3, 4)), np.ones((5, 4)), start=3)
