"""posenc-advanced ex05: Swin Transformer's 2-D relative position index and bias.

Conventions are those of microsoft/Swin-Transformer, models/swin_transformer.py at commit
f82860bfb5225915aca09c3227159ee9e1df874d, ``WindowAttention.__init__`` (the table of
(2*Wh - 1) * (2*Ww - 1) rows and num_heads columns, and the buffer relative_position_index) and
``WindowAttention.forward`` (table[index.view(-1)].view(N, N, -1).permute(2, 0, 1)).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from posenc_solutions.swin import swin_relative_bias, swin_relative_position_index

from ..helpers.advanced_answers import transformer_xl as transformer_xl_answers

# Loaded by path: the package tests.advanced_answers imports every scheme's module.
ANSWERS = vars(transformer_xl_answers)


def alternative(name):
    namespace = {"np": np, "math": math}
    exec(ANSWERS["ALTERNATIVES"][name], namespace)
    return namespace[name]


def index_swin_steps(height, width):
    """WindowAttention.__init__'s steps, one by one, in numpy (meshgrid is "ij" in torch)."""
    coords = np.stack(np.meshgrid(np.arange(height), np.arange(width), indexing="ij"))
    coords_flatten = coords.reshape(2, -1)
    relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
    relative_coords = relative_coords.transpose(1, 2, 0).copy()
    relative_coords[:, :, 0] += height - 1
    relative_coords[:, :, 1] += width - 1
    relative_coords[:, :, 0] *= 2 * width - 1
    return relative_coords.sum(-1)


def index_by_loop(height, width):
    n = height * width
    out = np.zeros((n, n), dtype=np.int64)
    for a in range(n):
        for b in range(n):
            (ha, wa), (hb, wb) = divmod(a, width), divmod(b, width)
            out[a, b] = (ha - hb + height - 1) * (2 * width - 1) + (wa - wb + width - 1)
    return out


# --- literal values ----------------------------------------------------------------------------

def test_index_of_a_2x2_window_is_swins():
    # Swin's relative_position_index for window_size = (2, 2), worked out from its code:
    # tokens (0,0), (0,1), (1,0), (1,1); (dh + 1) * 3 + (dw + 1).
    expected = [[4, 3, 1, 0], [5, 4, 2, 1], [7, 6, 4, 3], [8, 7, 5, 4]]
    got = swin_relative_position_index(2, 2)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)


def test_index_of_a_2x3_window_by_hand():
    # (dh + 1) * 5 + (dw + 2), tokens (0,0) (0,1) (0,2) (1,0) (1,1) (1,2).
    expected = [[7, 6, 5, 2, 1, 0], [8, 7, 6, 3, 2, 1], [9, 8, 7, 4, 3, 2],
                [12, 11, 10, 7, 6, 5], [13, 12, 11, 8, 7, 6], [14, 13, 12, 9, 8, 7]]
    np.testing.assert_array_equal(swin_relative_position_index(2, 3), expected)


def test_swin_t_window_7():
    # configs/swin/swin_tiny_patch4_window7_224.yaml: WINDOW_SIZE 7, NUM_HEADS [3, 6, 12, 24]:
    # a table of 13 * 13 = 169 rows; the diagonal (offset (0, 0)) reads row 6 * 13 + 6 = 84.
    index = swin_relative_position_index(7, 7)
    assert index.shape == (49, 49)
    assert index.min() == 0 and index.max() == 168
    assert len(np.unique(index)) == 169
    np.testing.assert_array_equal(np.diag(index), np.full(49, 84))
    table = np.zeros((169, 3))
    assert swin_relative_bias(table, 7, 7).shape == (3, 49, 49)
    assert table.size == 507  # the concept question's count


# --- against Swin's steps and a loop ----------------------------------------------------------

WINDOWS = [(1, 1), (1, 4), (4, 1), (2, 2), (2, 3), (3, 2), (3, 5), (7, 7)]


@pytest.mark.parametrize("height, width", WINDOWS)
def test_index_matches_swins_steps_and_a_loop(height, width):
    got = swin_relative_position_index(height, width)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, index_swin_steps(height, width))
    np.testing.assert_array_equal(got, index_by_loop(height, width))
    np.testing.assert_array_equal(alternative("swin_relative_position_index")(height, width), got)


@pytest.mark.parametrize("height, width", WINDOWS)
def test_bias_reads_the_table_heads_first(height, width):
    rows = (2 * height - 1) * (2 * width - 1)
    table = np.random.default_rng(height * 10 + width).normal(size=(rows, 3))
    got = swin_relative_bias(table, height, width)
    n = height * width
    assert got.shape == (3, n, n)
    index = index_by_loop(height, width)
    for h in range(3):
        for a in range(n):
            for b in range(n):
                assert got[h, a, b] == table[index[a, b], h]
    # Swin's forward: table[index.view(-1)].view(N, N, -1).permute(2, 0, 1)
    swin = table[index_swin_steps(height, width).reshape(-1)].reshape(n, n, -1).transpose(2, 0, 1)
    np.testing.assert_array_equal(got, swin)
    np.testing.assert_allclose(alternative("swin_relative_bias")(table, height, width), got,
                               rtol=1e-15)


# --- properties --------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(height=st.integers(1, 6), width=st.integers(1, 6))
def test_index_properties(height, width):
    index = swin_relative_position_index(height, width)
    n, rows = height * width, (2 * height - 1) * (2 * width - 1)
    centre = (height - 1) * (2 * width - 1) + width - 1
    assert index.shape == (n, n)
    assert index.min() >= 0 and index.max() < rows
    # offset (0, 0) on the diagonal; offset and its opposite add up to twice the centre
    np.testing.assert_array_equal(np.diag(index), np.full(n, centre))
    np.testing.assert_array_equal(index + index.T, np.full((n, n), 2 * centre))
    # one row per 2-D offset: equal offsets share an index, different offsets never do
    h, w = np.divmod(np.arange(n), width)
    offsets = np.stack([h[:, None] - h[None, :], w[:, None] - w[None, :]], axis=-1)
    seen = {}
    for a in range(n):
        for b in range(n):
            key = tuple(offsets[a, b])
            assert seen.setdefault(key, index[a, b]) == index[a, b]
    assert len(set(seen.values())) == len(seen)


@settings(max_examples=20, deadline=None)
@given(height=st.integers(1, 4), width=st.integers(1, 4), heads=st.integers(1, 4))
def test_bias_with_an_arange_table_is_the_index(height, width, heads):
    rows = (2 * height - 1) * (2 * width - 1)
    table = np.arange(rows, dtype=float)[:, None] * np.arange(1, heads + 1)[None, :]
    got = swin_relative_bias(table, height, width)
    index = swin_relative_position_index(height, width)
    for h in range(heads):
        np.testing.assert_array_equal(got[h], index * (h + 1))


# --- errors and inputs -------------------------------------------------------------------------

ERRORS = [
    (swin_relative_position_index, (0, 3)),
    (swin_relative_position_index, (2, -1)),
    (swin_relative_position_index, (2.5, 2)),
    (swin_relative_position_index, (2, 1.5)),
    (swin_relative_bias, (np.ones(9), 2, 2)),
    (swin_relative_bias, (np.ones((9, 2, 1)), 2, 2)),
    (swin_relative_bias, (np.ones((9, 2)), 2, 3)),
    (swin_relative_bias, (np.ones((16, 2)), 2, 2)),
    (swin_relative_bias, (np.ones((1, 2)), 0, 1)),
]


@pytest.mark.parametrize("function, args", ERRORS)
def test_value_errors(function, args):
    with pytest.raises(ValueError):
        function(*args)


@pytest.mark.parametrize("function, args", ERRORS[:3] + ERRORS[4:8])
def test_alternatives_raise_value_errors(function, args):
    with pytest.raises(ValueError):
        alternative(function.__name__)(*args)


def test_table_unchanged():
    table = np.random.default_rng(0).normal(size=(15, 2))
    before = table.copy()
    out = swin_relative_bias(table, 3, 2)
    out[...] = 0.0
    np.testing.assert_array_equal(table, before)
