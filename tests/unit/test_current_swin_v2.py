"""posenc third assignment: Swin Transformer V2's log-spaced continuous position bias.

Sources:
- Liu et al. 2022, "Swin Transformer V2: Scaling Up Capacity and Resolution", section 3.3: the
  bias is a small meta network (MLP) of the log-spaced coordinates
  ``sign(x) * log(1 + |x|)``, here in base 8 on offsets scaled to [-8, 8].
- Hugging Face transformers, src/transformers/models/swinv2/modeling_swinv2.py,
  ``Swinv2SelfAttention.create_coords_table_and_index`` (``relative_coords_table`` from
  ``stack(meshgrid([dh, dw], indexing="ij")).permute(1, 2, 0)``, divided by the pretrained or the
  window side - 1, times 8, log2(|x| + 1) / log2(8)) and ``forward``
  (``continuous_position_bias_mlp``: Linear(2, 512), ReLU, Linear(512, heads, bias=False), read
  with ``relative_position_index``, permuted heads first, ``16 * sigmoid``). The numerical
  comparison with transformers itself is kept out of this file (no torch here).
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from posenc_solutions.swin import swin_relative_bias, swin_relative_position_index
from posenc_solutions.swin_v2 import swin_v2_position_bias, swin_v2_relative_coords_table

LOG9 = math.log2(9) / 3  # the largest coordinate of a window's own offsets, 1.0566


# ---- independent implementations

def table_by_loop(height, width, pretrained_height=0, pretrained_width=0):
    """Offset by offset, from the formula."""
    sides = (pretrained_height, pretrained_width) if pretrained_height else (height, width)
    out = np.zeros((2 * height - 1, 2 * width - 1, 2))
    for i in range(2 * height - 1):
        for j in range(2 * width - 1):
            for axis, offset in enumerate((i - (height - 1), j - (width - 1))):
                if offset == 0:
                    continue  # sign(0) = 0, also for a side of 1
                u = 8.0 * offset / (sides[axis] - 1)
                out[i, j, axis] = math.copysign(math.log2(abs(u) + 1) / math.log2(8), u)
    return out


def table_hf_steps(height, width, pretrained_height=0, pretrained_width=0):
    """create_coords_table_and_index's steps in numpy (torch.meshgrid with indexing="ij")."""
    relative_coords_h = np.arange(-(height - 1), height).astype(float)
    relative_coords_w = np.arange(-(width - 1), width).astype(float)
    table = np.stack(np.meshgrid(relative_coords_h, relative_coords_w, indexing="ij")).transpose(1, 2, 0).copy()
    if pretrained_height > 0:
        table[:, :, 0] /= pretrained_height - 1
        table[:, :, 1] /= pretrained_width - 1
    else:
        table[:, :, 0] /= height - 1
        table[:, :, 1] /= width - 1
    table *= 8
    return np.sign(table) * np.log2(np.abs(table) + 1.0) / math.log2(8)


def bias_by_loop(table, w1, b1, w2, height, width):
    """Token pair by token pair: the pair's offset, its table entry, the MLP by sums, 16 sigmoid."""
    n = height * width
    hidden, heads = len(b1), len(w2[0])
    out = np.zeros((heads, n, n))
    for a in range(n):
        for b in range(n):
            (ha, wa), (hb, wb) = divmod(a, width), divmod(b, width)
            u = table[ha - hb + height - 1][wa - wb + width - 1]
            units = [max(u[0] * w1[0][k] + u[1] * w1[1][k] + b1[k], 0.0) for k in range(hidden)]
            for h in range(heads):
                z = sum(units[k] * w2[k][h] for k in range(hidden))
                out[h, a, b] = 16.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
    return out


def bias_hf_steps(table, w1, b1, w2, height, width):
    """Swinv2SelfAttention.forward's steps in numpy, with V1's index."""
    heads, n = w2.shape[1], height * width
    values = (np.maximum(table @ w1 + b1, 0) @ w2).reshape(-1, heads)
    index = swin_relative_position_index(height, width)
    bias = values[index.reshape(-1)].reshape(n, n, -1).transpose(2, 0, 1)
    return 16 / (1 + np.exp(-bias))


def random_mlp(rng, hidden, heads, scale=1.0):
    return (rng.normal(size=(2, hidden)) * scale, rng.normal(size=hidden) * scale,
            rng.normal(size=(hidden, heads)) * scale)


# ---- swin_v2_relative_coords_table: literal values

def test_table_of_a_2x3_window_by_hand():
    # dh in {-1, 0, 1} over 1, dw in {-2, ..., 2} over 2; times 8: dh -> +-8, dw -> +-8, +-4.
    got = swin_v2_relative_coords_table(2, 3)
    assert got.shape == (3, 5, 2) and got.dtype == np.float64
    log5 = math.log2(5) / 3
    dh = np.array([-LOG9, 0.0, LOG9])
    dw = np.array([-LOG9, -log5, 0.0, log5, LOG9])
    np.testing.assert_allclose(got[:, :, 0], np.repeat(dh[:, None], 5, axis=1), rtol=1e-15)
    np.testing.assert_allclose(got[:, :, 1], np.repeat(dw[None, :], 3, axis=0), rtol=1e-15)


def test_pretrained_window_by_hand():
    # A 2 x 2 window normalised as a pretrained 9 x 9 one: +-1 / 8 * 8 = +-1 -> log2(2) / 3.
    got = swin_v2_relative_coords_table(2, 2, 9, 9)
    np.testing.assert_allclose(got[:, :, 0], [[-1 / 3] * 3, [0.0] * 3, [1 / 3] * 3], rtol=1e-15)
    np.testing.assert_allclose(got[:, :, 1], [[-1 / 3, 0.0, 1 / 3]] * 3, rtol=1e-15)


def test_swin_v2_window_8_and_its_fine_tuned_window_16():
    # SwinV2-T (window 8, 256 x 256): offsets -7 .. 7 over 7, the ends at +-log2(9)/3.
    table = swin_v2_relative_coords_table(8, 8)
    assert table.shape == (15, 15, 2)
    np.testing.assert_allclose(table[[0, 14], 7, 0], [-LOG9, LOG9], rtol=1e-15)
    np.testing.assert_allclose(table[7, 7], [0.0, 0.0])
    # Fine-tuned at window 16 keeping the pretrained 8: offset 15 -> 8 * 15 / 7, beyond 1.0566.
    big = swin_v2_relative_coords_table(16, 16, 8, 8)
    assert big.shape == (31, 31, 2)
    np.testing.assert_allclose(big[30, 0], [math.log2(8 * 15 / 7 + 1) / 3, -math.log2(8 * 15 / 7 + 1) / 3],
                               rtol=1e-15)
    # the offsets that fit the old window keep their old coordinates
    np.testing.assert_allclose(big[15 - 7:15 + 8, 15 - 7:15 + 8], table, rtol=1e-15)


def test_a_side_of_one_gives_zeros():
    # The only offset along a side of 1 is 0, whatever the divisor (HF: 0 for 1 x 1, NaN for Wh x 1).
    np.testing.assert_array_equal(swin_v2_relative_coords_table(1, 1), np.zeros((1, 1, 2)))
    tall = swin_v2_relative_coords_table(3, 1)
    np.testing.assert_array_equal(tall[:, :, 1], np.zeros((5, 1)))
    np.testing.assert_allclose(tall[:, 0, 0], swin_v2_relative_coords_table(3, 3)[:, 2, 0], rtol=1e-15)
    wide = swin_v2_relative_coords_table(1, 3)
    np.testing.assert_array_equal(wide[:, :, 0], np.zeros((1, 5)))
    np.testing.assert_allclose(wide[0, :, 1], swin_v2_relative_coords_table(3, 3)[2, :, 1], rtol=1e-15)
    assert np.isfinite(swin_v2_relative_coords_table(1, 4, 5, 5)).all()


# ---- swin_v2_relative_coords_table: against a loop and HF's steps, and properties

SIDES = st.integers(1, 9)


@settings(max_examples=60, deadline=None)
@given(height=SIDES, width=SIDES, pretrained=st.one_of(st.just((0, 0)), st.tuples(st.integers(2, 12),
                                                                                   st.integers(2, 12))))
def test_table_matches_a_loop_and_hf_steps(height, width, pretrained):
    got = swin_v2_relative_coords_table(height, width, *pretrained)
    assert got.shape == (2 * height - 1, 2 * width - 1, 2) and got.dtype == np.float64
    np.testing.assert_allclose(got, table_by_loop(height, width, *pretrained), rtol=1e-14, atol=0)
    if pretrained[0] or (height > 1 and width > 1):  # where HF's steps divide by no zero
        np.testing.assert_allclose(got, table_hf_steps(height, width, *pretrained), rtol=1e-14, atol=0)


@settings(max_examples=60, deadline=None)
@given(height=SIDES, width=SIDES)
def test_table_properties(height, width):
    table = swin_v2_relative_coords_table(height, width)
    # last axis (dh, dw): dh varies along the rows only, dw along the columns only
    np.testing.assert_array_equal(table[:, :, 0], np.repeat(table[:, :1, 0], 2 * width - 1, axis=1))
    np.testing.assert_array_equal(table[:, :, 1], np.repeat(table[:1, :, 1], 2 * height - 1, axis=0))
    # odd: the opposite offset has the opposite coordinates; the centre is (0, 0)
    np.testing.assert_array_equal(table[::-1, ::-1], -table)
    np.testing.assert_array_equal(table[height - 1, width - 1], [0.0, 0.0])
    # swapping the window's sides swaps the axes
    np.testing.assert_array_equal(swin_v2_relative_coords_table(width, height),
                                  table.transpose(1, 0, 2)[:, :, ::-1])
    # increasing along each axis, the window's own ends at +-log2(9)/3
    assert (np.diff(table[:, 0, 0]) > 0).all() and (np.diff(table[0, :, 1]) > 0).all()
    assert np.abs(table).max() <= LOG9 + 1e-15
    if height > 1:
        np.testing.assert_allclose(table[-1, 0, 0], LOG9, rtol=1e-15)


@settings(max_examples=40, deadline=None)
@given(height=SIDES, width=SIDES, pretrained=st.integers(2, 12))
def test_table_pretrained_scale(height, width, pretrained):
    # Normalising by the pretrained side: offset d -> log2(8 d / (P - 1) + 1) / 3, for any window.
    table = swin_v2_relative_coords_table(height, width, pretrained, pretrained)
    d = np.arange(height)
    np.testing.assert_allclose(table[height - 1:, 0, 0], np.log2(8 * d / (pretrained - 1) + 1) / 3, rtol=1e-14)
    if height == pretrained and width == pretrained:
        np.testing.assert_array_equal(table, swin_v2_relative_coords_table(height, width))


# ---- swin_v2_position_bias: literal values

def test_bias_docstring_example_by_hand():
    # relu(100 * dh-coordinate): 100 * 1.0566 for a query one row below its key, saturating the
    # sigmoid at 1 (16); 0 elsewhere (16 * 1/2 = 8).
    got = swin_v2_position_bias(swin_v2_relative_coords_table(2, 2), [[100.0], [0.0]], [0.0], [[1.0]], 2, 2)
    np.testing.assert_array_equal(got, [[[8, 8, 8, 8], [8, 8, 8, 8], [16, 16, 8, 8], [16, 16, 8, 8]]])


def test_bias_of_a_constant_mlp_by_hand():
    # w1 = 0, b1 = ln 3, w2 = [1, -1]: sigmoid(ln 3) = 3/4 -> 12, sigmoid(-ln 3) = 1/4 -> 4.
    table = swin_v2_relative_coords_table(2, 3)
    got = swin_v2_position_bias(table, np.zeros((2, 1)), [math.log(3)], [[1.0, -1.0]], 2, 3)
    assert got.shape == (2, 6, 6) and got.dtype == np.float64
    np.testing.assert_allclose(got[0], np.full((6, 6), 12.0), rtol=1e-15)
    np.testing.assert_allclose(got[1], np.full((6, 6), 4.0), rtol=1e-14)


def test_bias_with_a_swin_v2_sized_mlp():
    # HF's continuous_position_bias_mlp: 512 hidden units; window 8, 3 heads (SwinV2-T stage 1).
    rng = np.random.default_rng(0)
    table = swin_v2_relative_coords_table(8, 8)
    w1, b1, w2 = random_mlp(rng, 512, 3, scale=0.1)
    got = swin_v2_position_bias(table, w1, b1, w2, 8, 8)
    assert got.shape == (3, 64, 64)
    np.testing.assert_allclose(got, bias_hf_steps(table, w1, b1, w2, 8, 8), rtol=1e-13)


# ---- swin_v2_position_bias: against a loop and HF's steps, and properties

@settings(max_examples=40, deadline=None)
@given(height=st.integers(1, 4), width=st.integers(1, 4), hidden=st.integers(1, 6), heads=st.integers(1, 3),
       scale=st.sampled_from([0.5, 3.0, 50.0]), seed=st.integers(0, 2**31 - 1))
def test_bias_matches_a_loop_and_hf_steps(height, width, hidden, heads, scale, seed):
    rng = np.random.default_rng(seed)
    table = swin_v2_relative_coords_table(height, width)
    w1, b1, w2 = random_mlp(rng, hidden, heads, scale)
    got = swin_v2_position_bias(table, w1, b1, w2, height, width)
    n = height * width
    assert got.shape == (heads, n, n) and got.dtype == np.float64
    # The logits, summed in another order, differ by at most (hidden + 3) roundings of terms whose magnitudes add up
    # to at most `terms`; 16 sigmoid(z) moves by at most that, relatively (|d ln sigmoid / dz| <= 1): tiny sigmoids
    # deep in the tail (1e-184 at scale 50) are compared to that bound, not to one of fixed size.
    terms = float(((np.abs(table.reshape(-1, 2)) @ np.abs(w1) + np.abs(b1)) @ np.abs(w2)).max())
    rtol = 1e-12 + (hidden + 3) * np.finfo(float).eps * terms
    np.testing.assert_allclose(got, bias_by_loop(table, w1, b1, w2, height, width), rtol=rtol, atol=1e-300)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(got, bias_hf_steps(table, w1, b1, w2, height, width), rtol=rtol, atol=1e-300)


@settings(max_examples=40, deadline=None)
@given(height=st.integers(1, 4), width=st.integers(1, 4), heads=st.integers(1, 3), seed=st.integers(0, 2**31 - 1))
def test_bias_is_v1_bias_of_the_mlp_table(height, width, heads, seed):
    # Swin V2 replaces V1's learned table by 16 sigmoid(MLP(coordinates)); the reading is V1's.
    rng = np.random.default_rng(seed)
    table = swin_v2_relative_coords_table(height, width)
    w1, b1, w2 = random_mlp(rng, 5, heads)
    v1_table = 16 / (1 + np.exp(-(np.maximum(table.reshape(-1, 2) @ w1 + b1, 0) @ w2)))
    np.testing.assert_allclose(swin_v2_position_bias(table, w1, b1, w2, height, width),
                               swin_relative_bias(v1_table, height, width), rtol=1e-13)


@settings(max_examples=40, deadline=None)
@given(height=st.integers(1, 4), width=st.integers(1, 4), heads=st.integers(1, 3), seed=st.integers(0, 2**31 - 1))
def test_bias_properties(height, width, heads, seed):
    rng = np.random.default_rng(seed)
    table = swin_v2_relative_coords_table(height, width)
    w1, b1, w2 = random_mlp(rng, 4, heads, scale=5.0)
    bias = swin_v2_position_bias(table, w1, b1, w2, height, width)
    n = height * width
    assert ((bias >= 0) & (bias <= 16)).all()
    # equal offsets, equal bias: the diagonal (offset (0, 0)) is constant per head
    for h in range(heads):
        np.testing.assert_array_equal(np.diag(bias[h]), np.full(n, bias[h, 0, 0]))
    index = swin_relative_position_index(height, width)
    for a in range(n):
        for b in range(n):
            same = index == index[a, b]
            np.testing.assert_array_equal(bias[:, same], np.repeat(bias[:, a, b][:, None], same.sum(), axis=1))
    # an MLP that is even in its input (|x| = relu(x) + relu(-x)) gives a symmetric bias
    even_w1 = np.array([[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]]) * rng.normal()
    even_w2 = np.repeat(rng.normal(size=(2, heads)), 2, axis=0)
    even = swin_v2_position_bias(table, even_w1, np.zeros(4), even_w2, height, width)
    np.testing.assert_allclose(even, even.transpose(0, 2, 1), rtol=1e-15)


def test_bias_saturates_without_overflow():
    table = swin_v2_relative_coords_table(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low = swin_v2_position_bias(table, np.zeros((2, 1)), [1.0], [[-1e6]], 3, 3)
        high = swin_v2_position_bias(table, np.zeros((2, 1)), [1.0], [[1e6]], 3, 3)
    np.testing.assert_array_equal(low, np.zeros((1, 9, 9)))
    np.testing.assert_array_equal(high, np.full((1, 9, 9), 16.0))


def test_inputs_unchanged_and_float64():
    rng = np.random.default_rng(3)
    table = swin_v2_relative_coords_table(2, 3).astype(np.float32)
    w1, b1, w2 = (a.astype(np.float32) for a in random_mlp(rng, 4, 2))
    before = [a.copy() for a in (table, w1, b1, w2)]
    got = swin_v2_position_bias(table, w1, b1, w2, 2, 3)
    assert got.dtype == np.float64
    for a, b in zip((table, w1, b1, w2), before):
        np.testing.assert_array_equal(a, b)
    got = swin_v2_position_bias(table.tolist(), w1.tolist(), b1.tolist(), w2.tolist(), np.int64(2), 3)
    assert got.shape == (2, 6, 6)


# ---- errors, each with an input numpy would accept

TABLE_ERRORS = [
    ((0, 3), "window_height.*0"),
    ((3, -1), "window_width.*-1"),
    ((2.5, 2), "window_height.*2.5"),
    ((2, 2.0), "window_width.*2.0"),
    ((True, 2), "window_height.*True"),
    ((2, np.float64(3)), "window_width"),
    ((3, 3, 1, 1), "pretrained_window_height.*1"),
    ((3, 3, 4, 1), "pretrained_window_width.*1"),
    ((3, 3, -4, -4), "pretrained_window_height.*-4"),
    ((3, 3, -1, -1), "pretrained_window_height.*-1"),
    ((3, 3, 4.5, 4), "pretrained_window_height.*4.5"),
    ((3, 3, 4, 0), r"\(4, 0\)"),  # HF divides dw by -1 here
    ((3, 3, 0, 4), r"\(0, 4\)"),
]


@pytest.mark.parametrize("args, message", TABLE_ERRORS)
def test_table_value_errors(args, message):
    with pytest.raises(ValueError, match=message):
        swin_v2_relative_coords_table(*args)


T22 = swin_v2_relative_coords_table(2, 2)
W1, B1, W2 = np.ones((2, 4)), np.ones(4), np.ones((4, 3))
BIAS_ERRORS = [
    ((T22, W1, B1, W2, 0, 2), "window_height"),
    ((T22, W1, B1, W2, 2, 1.5), "window_width"),
    ((T22.reshape(9, 2), W1, B1, W2, 2, 2), r"\(9, 2\)"),  # flattened: matmul would accept it
    ((T22, W1, B1, W2, 2, 3), r"\(3, 3, 2\)"),
    ((swin_v2_relative_coords_table(2, 3), W1, B1, W2, 3, 2), r"\(3, 5, 2\)"),
    ((np.ones((3, 3, 3)), W1, B1, W2, 2, 2), r"\(3, 3, 3\)"),
    ((T22, np.ones(2), np.ones(()), np.ones((1, 3)), 2, 2), r"w1.*\(2,\)"),  # 1-D w1
    ((T22, np.ones((3, 4)), B1, W2, 2, 2), r"w1.*\(3, 4\)"),
    ((T22, np.ones((2, 4, 1)), B1, W2, 2, 2), r"w1.*\(2, 4, 1\)"),
    ((T22, W1, np.ones(1), W2, 2, 2), r"b1.*\(1,\)"),  # would broadcast
    ((T22, W1, np.float64(1.0), W2, 2, 2), r"b1.*\(\)"),  # would broadcast
    ((T22, W1, np.ones((1, 4)), W2, 2, 2), r"b1.*\(1, 4\)"),  # would broadcast
    ((T22, W1, B1, np.ones(4), 2, 2), r"w2.*\(4,\)"),  # matmul would give one value per row
    ((T22, W1, B1, np.ones((5, 3)), 2, 2), r"w2.*\(5, 3\)"),
    ((T22, W1, B1, np.ones((4, 3, 1)), 2, 2), r"w2.*\(4, 3, 1\)"),
]


@pytest.mark.parametrize("args, message", BIAS_ERRORS)
def test_bias_value_errors(args, message):
    with pytest.raises(ValueError, match=message):
        swin_v2_position_bias(*args)
