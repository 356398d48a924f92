"""posenc-frontier: per-layer position schemes of 2025 models (Gemma 3, Llama 4's iRoPE).

Sources:
- Hugging Face transformers==5.24.0 (run with torch==2.13.0+cpu, in a scratch venv outside the
  repository), src/transformers/models/gemma3/configuration_gemma3.py: ``Gemma3TextConfig.__post_init__``
  builds ``layer_types`` as ``"sliding_attention" if bool((i + 1) % sliding_window_pattern) else
  "full_attention"`` (pattern 6 by default), and ``convert_rope_params_to_dict`` stores one RoPE per
  layer type, ``rope_parameters = {"sliding_attention": {"rope_type": "default", "rope_theta":
  rope_local_base_freq (10 000)}, "full_attention": {"rope_type": ..., "rope_theta": rope_theta
  (1 000 000)}}``, a legacy ``rope_scaling`` going to ``full_attention`` only;
  models/gemma3/modeling_gemma3.py: ``Gemma3RotaryEmbedding`` keeps ``sliding_attention_inv_freq`` and
  ``full_attention_inv_freq``. The literals ``HF_GEMMA3_*`` are its float32 buffers for head_dim 8 with
  Gemma 3 4B's settings (rope_scaling linear, factor 8), printed to 10 significant digits, so compared
  at rtol=1e-6. Compared outside this file: identical ``layer_types`` for 1..39 layers x pattern 1..9;
  inverse frequencies for head_dim 2, 8, 128, 256, factors 1, 2.5, 8, legacy and nested parameters,
  largest relative difference 1.1e-7 (float32).
- models/llama4/configuration_llama4.py: ``Llama4TextConfig.__post_init__``: ``no_rope_layers =
  [int((i + 1) % no_rope_layer_interval != 0) ...]`` (1 = the layer uses RoPE; interval 4 by default),
  ``layer_types`` "chunked_attention" for the RoPE layers, "full_attention" for the NoPE layers;
  identical for 1..49 layers x interval 1..9.
- masking_utils.py: ``chunked_causal_mask_function(chunk_size, left_padding)`` = ``causal_mask_function``
  and ``chunked_overlay`` (``(kv_idx - left_padding) // chunk_size == (q_idx - left_padding) //
  chunk_size``); ``sdpa_mask``'s docstring gives the 5 x 5 mask of chunk_size 3 used below. Identical to
  ``sdpa_mask(q_offset=Lk - Lq)`` in 1800 settings, and to ``create_chunked_causal_mask`` with a
  ``DynamicCache`` in prefill and decoding (``DECODE_ROWS`` below).
- models/llama4/modeling_llama4.py: ``Llama4TextAttention.forward`` multiplies the queries of its NoPE
  layers by ``log1p(floor((positions.float() + 1.0) / floor_scale)) * attn_scale + 1.0`` (8192 and 0.1
  by default), with ``positions = arange(q_len) + past_seen_tokens``; read off the queries given to
  the attention function: largest relative difference 3.1e-8.
This file imports neither torch nor transformers.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from posenc_solutions.layer_plans import (
    chunked_causal_mask,
    gemma3_layer_inv_freq,
    gemma3_layer_types,
    irope_uses_rope,
    nope_attention_scale,
)

# Gemma3RotaryEmbedding's buffers, head_dim 8, rope_local_base_freq 1e4, rope_theta 1e6,
# rope_scaling {"rope_type": "linear", "factor": 8.0}.
HF_GEMMA3_SLIDING = [1.0, 0.1000000015, 0.009999999776, 0.001000000047]
HF_GEMMA3_FULL = [0.125, 0.003952847328, 0.0001250000059, 3.952846782e-06]

# create_chunked_causal_mask with attention_chunk_size 4, after a prefill of 6 tokens, decoding one
# token at a time with a DynamicCache: (query position, first cached key position, HF's mask row).
# The chunked layers' cache holds the last 4 keys.
DECODE_ROWS = [
    (6, 3, [0, 1, 1, 1]),
    (7, 4, [1, 1, 1, 1]),
    (8, 5, [0, 0, 0, 1]),
    (9, 6, [0, 0, 1, 1]),
    (10, 7, [0, 1, 1, 1]),
    (11, 8, [1, 1, 1, 1]),
]

# sdpa_mask's docstring, "Creating a chunked attention mask" (chunk_size=3).
HF_CHUNKED_5x5 = [[1, 0, 0, 0, 0],
                  [1, 1, 0, 0, 0],
                  [1, 1, 1, 0, 0],
                  [0, 0, 0, 1, 0],
                  [0, 0, 0, 1, 1]]


# ---- naive implementations, written from HF's lines, one element at a time

def naive_layer_types(n, pattern):
    return ["sliding_attention" if bool((i + 1) % pattern) else "full_attention" for i in range(n)]


def naive_no_rope_layers(n, interval):
    return [int((i + 1) % interval != 0) for i in range(n)]


def naive_chunked(query_positions, key_positions, chunk):
    return [[kv <= q and kv // chunk == q // chunk for kv in key_positions] for q in query_positions]


def naive_scale(position, floor_scale, attn_scale):
    return math.log1p(math.floor((position + 1.0) / floor_scale)) * attn_scale + 1.0


# --- literal values ----------------------------------------------------------------------------

def test_gemma3_default_pattern():
    # Gemma 3 1B (26 layers) and 4B (34 layers): every sixth layer is global.
    types = gemma3_layer_types(26, 6)
    assert isinstance(types, list) and len(types) == 26
    assert [i for i, t in enumerate(types) if t == "full_attention"] == [5, 11, 17, 23]
    assert [i for i, t in enumerate(gemma3_layer_types(34, 6)) if t == "full_attention"] == [5, 11, 17, 23, 29]
    assert gemma3_layer_types(4, 2) == ["sliding_attention", "full_attention"] * 2
    assert gemma3_layer_types(3, 1) == ["full_attention"] * 3
    assert gemma3_layer_types(5, 6) == ["sliding_attention"] * 5


def test_gemma3_inv_freq_matches_hf_buffers():
    sliding = gemma3_layer_inv_freq("sliding_attention", 8, 10_000.0, 1_000_000.0, 8.0)
    full = gemma3_layer_inv_freq("full_attention", 8, 10_000.0, 1_000_000.0, 8.0)
    assert sliding.dtype == np.float64 and sliding.shape == (4,)
    assert full.dtype == np.float64 and full.shape == (4,)
    np.testing.assert_allclose(sliding, HF_GEMMA3_SLIDING, rtol=1e-6)
    np.testing.assert_allclose(full, HF_GEMMA3_FULL, rtol=1e-6)
    # by hand: 1e4 ** (-t/4) and 1e6 ** (-t/4) / 8
    np.testing.assert_allclose(sliding, [1.0, 0.1, 0.01, 0.001], rtol=1e-15)
    np.testing.assert_allclose(full, [1 / 8, 10 ** -1.5 / 8, 1e-3 / 8, 10 ** -4.5 / 8], rtol=1e-15)


def test_gemma3_4b_head_dim_256():
    # head_dim 256: the slowest full-attention pair turns once in 2 pi * 8 * 1e6 ** (254/256) tokens
    full = gemma3_layer_inv_freq("full_attention", 256, 10_000.0, 1_000_000.0, 8.0)
    sliding = gemma3_layer_inv_freq("sliding_attention", 256, 10_000.0, 1_000_000.0, 8.0)
    assert full.shape == sliding.shape == (128,)
    assert full[0] == 0.125 and sliding[0] == 1.0
    assert math.isclose(2 * math.pi / full[-1], 2 * math.pi * 8 * 1e6 ** (254 / 256), rel_tol=1e-12)
    assert math.isclose(2 * math.pi / sliding[-1], 2 * math.pi * 1e4 ** (254 / 256), rel_tol=1e-12)


def test_irope_default_interval():
    got = irope_uses_rope(8, 4)
    assert got.dtype == bool and got.shape == (8,)
    assert got.tolist() == [True, True, True, False, True, True, True, False]
    # 48 layers, interval 4: NoPE at 3, 7, ..., 47
    assert np.flatnonzero(~irope_uses_rope(48, 4)).tolist() == list(range(3, 48, 4))
    assert not irope_uses_rope(5, 1).any()
    assert irope_uses_rope(3, 4).all()


def test_chunked_mask_is_hfs_docstring_example():
    got = chunked_causal_mask(np.arange(5), np.arange(5), 3)
    assert got.dtype == bool and got.shape == (5, 5)
    np.testing.assert_array_equal(got, np.array(HF_CHUNKED_5x5, dtype=bool))


@pytest.mark.parametrize("query, first_key, row", DECODE_ROWS)
def test_chunked_mask_while_decoding_is_hfs(query, first_key, row):
    got = chunked_causal_mask([query], np.arange(first_key, first_key + 4), 4)
    np.testing.assert_array_equal(got, np.array([row], dtype=bool))


def test_nope_scale_by_hand():
    # Llama 4's defaults: 1 up to position 8190; ln 2 / 10 more from 8191 (floor(8192 / 8192) = 1).
    got = nope_attention_scale([0, 1, 8190, 8191, 16382, 16383], 8192, 0.1)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [1.0, 1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2),
                                     1 + 0.1 * math.log(3)], rtol=1e-15)
    # a million tokens: floor(1e6 / 8192) = 122
    np.testing.assert_allclose(nope_attention_scale(999_999, 8192, 0.1), 1 + 0.1 * math.log(123), rtol=1e-15)
    assert nope_attention_scale(999_999, 8192, 0.1).shape == ()


# --- against naive implementations -------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 100), pattern=st.integers(1, 12))
def test_gemma3_layer_types_is_hfs_loop(n, pattern):
    got = gemma3_layer_types(n, pattern)
    assert got == naive_layer_types(n, pattern)
    assert got.count("full_attention") == n // pattern


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 100), interval=st.integers(1, 12))
def test_irope_is_hfs_no_rope_layers(n, interval):
    got = irope_uses_rope(n, interval)
    np.testing.assert_array_equal(got.astype(int), naive_no_rope_layers(n, interval))
    assert int((~got).sum()) == n // interval


@settings(max_examples=60, deadline=None)
@given(head_dim=st.integers(1, 64).map(lambda h: 2 * h), local=st.floats(2.0, 1e6), glob=st.floats(2.0, 1e7),
       factor=st.floats(1.0, 64.0))
def test_gemma3_inv_freq_per_pair(head_dim, local, glob, factor):
    sliding = gemma3_layer_inv_freq("sliding_attention", head_dim, local, glob, factor)
    full = gemma3_layer_inv_freq("full_attention", head_dim, local, glob, factor)
    for t in range(head_dim // 2):
        assert math.isclose(sliding[t], 1.0 / local ** (2 * t / head_dim), rel_tol=1e-13)
        assert math.isclose(full[t], 1.0 / glob ** (2 * t / head_dim) / factor, rel_tol=1e-13)
    # the sliding layers never see the factor; the full layers never see the local base
    np.testing.assert_array_equal(sliding, gemma3_layer_inv_freq("sliding_attention", head_dim, local, 3.0, 1.0))
    np.testing.assert_allclose(full * factor, gemma3_layer_inv_freq("full_attention", head_dim, 5.0, glob),
                               rtol=1e-15)
    assert np.all(np.diff(sliding) < 0) and np.all(np.diff(full) < 0)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), chunk=st.integers(1, 9))
def test_chunked_mask_is_the_loop(data, chunk):
    query_positions = data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=8))
    key_positions = data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=8))
    got = chunked_causal_mask(query_positions, key_positions, chunk)
    np.testing.assert_array_equal(got, np.array(naive_chunked(query_positions, key_positions, chunk)))


@settings(max_examples=60, deadline=None)
@given(positions=st.lists(st.integers(0, 10**7), min_size=1, max_size=10), floor_scale=st.integers(1, 10_000),
       attn_scale=st.floats(-2.0, 2.0))
def test_nope_scale_is_the_formula(positions, floor_scale, attn_scale):
    got = nope_attention_scale(positions, floor_scale, attn_scale)
    assert got.dtype == np.float64
    for p, value in zip(positions, got):
        assert math.isclose(value, naive_scale(p, floor_scale, attn_scale), rel_tol=1e-14, abs_tol=1e-15)


# --- properties --------------------------------------------------------------------------------

@pytest.mark.parametrize("length, chunk", [(1, 1), (7, 1), (7, 3), (12, 4), (10, 10), (10, 64)])
def test_chunked_mask_properties(length, chunk):
    positions = np.arange(length)
    got = chunked_causal_mask(positions, positions, chunk)
    causal = positions[None, :] <= positions[:, None]
    assert not (got & ~causal).any()  # never more than causal
    np.testing.assert_array_equal(got.sum(axis=1), positions % chunk + 1)  # a query sees its chunk so far
    np.testing.assert_array_equal(np.diag(got), np.ones(length, dtype=bool))
    if chunk >= length:
        np.testing.assert_array_equal(got, causal)
    if chunk == 1:
        np.testing.assert_array_equal(got, np.eye(length, dtype=bool))
    # block diagonal: every chunk is a causal block of its own
    for start in range(0, length, chunk):
        block = slice(start, min(start + chunk, length))
        np.testing.assert_array_equal(got[block, block], causal[block, block])


def test_chunked_mask_decoding_rows_are_prefill_rows():
    # the last Lq queries against all keys: the last Lq rows of the prefill mask (HF's q_offset)
    full = chunked_causal_mask(np.arange(20), np.arange(20), 6)
    for lq in range(1, 21):
        np.testing.assert_array_equal(chunked_causal_mask(np.arange(20 - lq, 20), np.arange(20), 6), full[-lq:])


def test_nope_scale_shape_and_growth():
    positions = np.arange(60).reshape(3, 4, 5)
    got = nope_attention_scale(positions, 7, 0.1)
    assert got.shape == (3, 4, 5) and got.dtype == np.float64
    flat = got.ravel()
    assert np.all(np.diff(flat) >= 0)  # steps up every floor_scale positions
    assert np.flatnonzero(np.diff(flat)).tolist() == [5, 12, 19, 26, 33, 40, 47, 54]
    np.testing.assert_array_equal(nope_attention_scale(positions, 7, 0.0), np.ones((3, 4, 5)))
    np.testing.assert_array_equal(nope_attention_scale(np.arange(8191), 8192, 0.1), np.ones(8191))
    assert nope_attention_scale([], 8, 0.1).shape == (0,)


def test_inputs_unchanged_and_integer_types():
    positions = np.array([3, 1, 4], dtype=np.int32)
    before = positions.copy()
    nope_attention_scale(positions, 2, 0.1)
    chunked_causal_mask(positions, positions, 2)
    np.testing.assert_array_equal(positions, before)
    assert gemma3_layer_types(np.int64(4), np.int32(2)) == gemma3_layer_types(4, 2)
    np.testing.assert_array_equal(irope_uses_rope(np.int64(8), np.int16(4)), irope_uses_rope(8, 4))
    np.testing.assert_array_equal(chunked_causal_mask([0.0, 1.0], [0, 1], np.int64(1)), np.eye(2, dtype=bool))
    np.testing.assert_array_equal(gemma3_layer_inv_freq("full_attention", np.int64(4), 1e4, 100, 2),
                                  [0.5, 0.05])


def test_gemma3_inv_freq_takes_any_base_above_zero():
    np.testing.assert_array_equal(gemma3_layer_inv_freq("full_attention", 4, 1e4, 1.0, 2.0), [0.5, 0.5])
    np.testing.assert_allclose(gemma3_layer_inv_freq("sliding_attention", 4, 0.25, 1e6), [1.0, 2.0], rtol=1e-15)


# --- errors -------------------------------------------------------------------------------------

ERRORS = [
    (gemma3_layer_types, (0, 6)),
    (gemma3_layer_types, (-3, 6)),
    (gemma3_layer_types, (26, 0)),
    (gemma3_layer_types, (26.0, 6)),
    (gemma3_layer_types, (26, 6.5)),
    (gemma3_layer_types, (True, 6)),
    (gemma3_layer_types, (26, "6")),
    (gemma3_layer_inv_freq, ("global", 8, 1e4, 1e6)),
    (gemma3_layer_inv_freq, ("sliding_window", 8, 1e4, 1e6)),
    (gemma3_layer_inv_freq, (None, 8, 1e4, 1e6)),
    (gemma3_layer_inv_freq, (np.array(["full_attention"] * 2), 8, 1e4, 1e6)),
    (gemma3_layer_inv_freq, ("full_attention", 7, 1e4, 1e6)),
    (gemma3_layer_inv_freq, ("full_attention", 0, 1e4, 1e6)),
    (gemma3_layer_inv_freq, ("full_attention", 8.0, 1e4, 1e6)),
    (gemma3_layer_inv_freq, ("sliding_attention", 8, 0.0, 1e6)),
    (gemma3_layer_inv_freq, ("sliding_attention", 8, -1e4, 1e6)),
    (gemma3_layer_inv_freq, ("sliding_attention", 8, "1e4", 1e6)),
    (gemma3_layer_inv_freq, ("full_attention", 8, 1e4, 0.0)),
    (gemma3_layer_inv_freq, ("full_attention", 8, 1e4, np.nan)),
    (gemma3_layer_inv_freq, ("full_attention", 8, 1e4, np.inf)),
    (gemma3_layer_inv_freq, ("full_attention", 8, 1e4, 1e6, 0.5)),
    (gemma3_layer_inv_freq, ("full_attention", 8, 1e4, 1e6, np.nan)),
    (gemma3_layer_inv_freq, ("full_attention", 8, 1e4, 1e6, "8")),
    (irope_uses_rope, (0, 4)),
    (irope_uses_rope, (48, 0)),
    (irope_uses_rope, (48, -4)),
    (irope_uses_rope, (48.0, 4)),
    (irope_uses_rope, (48, 4.0)),
    (irope_uses_rope, (48, False)),
    (chunked_causal_mask, ([[0, 1]], [0, 1], 2)),
    (chunked_causal_mask, ([0, 1], 1, 2)),
    (chunked_causal_mask, ([0.5, 1], [0, 1], 2)),
    (chunked_causal_mask, ([0, 1], [0, np.inf], 2)),
    (chunked_causal_mask, ([0, 1], [0, np.nan], 2)),
    (chunked_causal_mask, (["a", "b"], [0, 1], 2)),
    (chunked_causal_mask, ([0, 1], [0, 1], 0)),
    (chunked_causal_mask, ([0, 1], [0, 1], -2)),
    (chunked_causal_mask, ([0, 1], [0, 1], 2.0)),
    (chunked_causal_mask, ([0, 1], [0, 1], True)),
    (nope_attention_scale, ([0, -1], 8192, 0.1)),
    (nope_attention_scale, ([0, 1.5], 8192, 0.1)),
    (nope_attention_scale, ([0, np.inf], 8192, 0.1)),
    (nope_attention_scale, ([0, np.nan], 8192, 0.1)),
    (nope_attention_scale, (["0"], 8192, 0.1)),
    (nope_attention_scale, ([0, 1], 0, 0.1)),
    (nope_attention_scale, ([0, 1], -8192, 0.1)),
    (nope_attention_scale, ([0, 1], np.inf, 0.1)),
    (nope_attention_scale, ([0, 1], 8192, np.nan)),
    (nope_attention_scale, ([0, 1], 8192, "0.1")),
]


@pytest.mark.parametrize("function, args", ERRORS)
def test_value_errors(function, args):
    with pytest.raises(ValueError):
        function(*args)


@pytest.mark.parametrize("function, args, value", [
    (gemma3_layer_types, (26, 0), "0"),
    (gemma3_layer_types, (26.0, 6), "26.0"),
    (gemma3_layer_inv_freq, ("global", 8, 1e4, 1e6), "global"),
    (gemma3_layer_inv_freq, ("full_attention", 7, 1e4, 1e6), "7"),
    (gemma3_layer_inv_freq, ("full_attention", 8, 1e4, 1e6, 0.5), "0.5"),
    (irope_uses_rope, (48, 0), "0"),
    (chunked_causal_mask, ([0, 1], [0, 1], -2), "-2"),
    (chunked_causal_mask, ([0.5, 1], [0, 1], 2), "0.5"),
    (nope_attention_scale, ([0, -1], 8192, 0.1), "-1"),
    (nope_attention_scale, ([0, 1], -8192, 0.1), "-8192"),
])
def test_error_messages_name_the_value(function, args, value):
    with pytest.raises(ValueError, match=value):
        function(*args)
