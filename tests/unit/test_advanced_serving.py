"""posenc-advanced exercise 8: position ids of packed rows, and the positions caches keep.

Sources:
- Hugging Face transformers, src/transformers/data/data_collator.py, ``DataCollatorWithFlattening``
  (v4.44 and later): ``position_ids += list(range(len(input_ids)))`` for each example; and
  src/transformers/modeling_flash_attention_utils.py, ``prepare_fa2_from_position_ids``: the
  document boundaries (``cu_seqlens``) are the indices where ``position_ids == 0``, plus the length.
- Jiang et al. (2023), "Mistral 7B", Section 2: rolling buffer cache of W = 4096 keys, position i
  stored in slot i mod W.
- Xiao et al. (2023), "Efficient Streaming Language Models with Attention Sinks", Section 3.2: a
  cache holding tokens [0, 1, 2, 3, 6, 7, 8] while decoding token 9, positions within the cache
  [0, ..., 7]; and mit-han-lab/streaming-llm, streaming_llm/kv_cache.py (commit d729b3f),
  ``StartRecentKVCache(start_size=4, recent_size=512)``: cache_size = start_size + recent_size, keep
  everything while seq_len <= cache_size, else ``k[:start_size]`` and ``k[seq_len - recent_size:]``.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_solutions import (
    attention_sink_positions,
    packed_causal_mask,
    packed_position_ids,
    sliding_window_positions,
)

from ..helpers.advanced_answers import rope_layouts as rope_layouts_answers

# Loaded by path, not through the package: tests/helpers/advanced_answers/__init__.py merges every module.
ALTERNATIVES = rope_layouts_answers.ALTERNATIVES


def _alternative(name):
    namespace = {"np": np, "math": math}
    exec(ALTERNATIVES[name], namespace)
    return namespace[name]


# ---- naive implementations, written in the test

def _naive_ids_and_documents(lengths):
    ids, documents = [], []
    for number, n in enumerate(lengths):
        for i in range(n):
            ids.append(i)
            documents.append(number)
    return ids, documents


def _naive_mask(lengths):
    _, documents = _naive_ids_and_documents(lengths)
    size = len(documents)
    return np.array([[documents[i] == documents[j] and j <= i for j in range(size)]
                     for i in range(size)])


def _rolling_buffer(num_tokens, window):
    """Mistral's rolling buffer: position i overwrites slot i mod W."""
    slots = [None] * window
    for position in range(num_tokens):
        slots[position % window] = position
    return sorted(p for p in slots if p is not None)


def _streaming_cache(num_tokens, cache_size, num_sinks):
    """StartRecentKVCache run one token at a time: append, then trim to sinks + recent."""
    cache = []
    for position in range(num_tokens):
        cache.append(position)
        if len(cache) > cache_size:
            cache = cache[:num_sinks] + cache[len(cache) - (cache_size - num_sinks):]
    return cache


lengths_strategy = st.lists(st.integers(1, 9), min_size=1, max_size=6)


# ---- packing

@given(lengths_strategy)
def test_packed_ids_and_mask_match_the_naive_loops(lengths):
    ids, _ = _naive_ids_and_documents(lengths)
    got = packed_position_ids(lengths)
    assert got.dtype == np.int64
    assert got.tolist() == ids
    mask = packed_causal_mask(np.array(lengths))
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, _naive_mask(lengths))


@given(lengths_strategy)
def test_flash_attention_recovers_the_documents_from_the_ids(lengths):
    # prepare_fa2_from_position_ids: cu_seqlens = indices where position_ids == 0, then the length
    ids = packed_position_ids(lengths)
    cu_seqlens = np.concatenate([np.flatnonzero(ids == 0), [len(ids)]])
    assert cu_seqlens.tolist() == np.concatenate([[0], np.cumsum(lengths)]).tolist()
    mask = packed_causal_mask(lengths)
    for start, end in zip(cu_seqlens[:-1], cu_seqlens[1:]):
        block = mask[start:end, start:end]
        np.testing.assert_array_equal(block, np.tril(np.ones(block.shape, dtype=bool)))
        assert not mask[start:end, :start].any() and not mask[start:end, end:].any()


def test_packing_literals():
    # DataCollatorWithFlattening on examples of 3 and 2 tokens: position_ids [0, 1, 2, 0, 1]
    assert packed_position_ids([3, 2]).tolist() == [0, 1, 2, 0, 1]
    assert packed_causal_mask([2, 1]).astype(int).tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 1]]


@pytest.mark.parametrize("lengths", [[3, 2], (3, 2), np.array([3, 2]), np.array([3, 2], np.int32),
                                     [np.int64(3), np.int64(2)], np.array([3.0, 2.0])])
def test_packing_accepts_lists_tuples_and_arrays(lengths):
    assert packed_position_ids(lengths).tolist() == [0, 1, 2, 0, 1]
    assert packed_causal_mask(lengths).shape == (5, 5)


# ---- caches

@given(st.integers(0, 60), st.integers(1, 12))
def test_sliding_window_matches_the_rolling_buffer(num_tokens, window):
    got = sliding_window_positions(num_tokens, window)
    assert got.dtype == np.int64
    assert got.tolist() == _rolling_buffer(num_tokens, window)


@given(st.integers(0, 60), st.integers(1, 12), st.data())
def test_sinks_match_the_streaming_cache(num_tokens, cache_size, data):
    num_sinks = data.draw(st.integers(0, cache_size - 1))
    got = attention_sink_positions(num_tokens, cache_size, num_sinks)
    assert got.dtype == np.int64
    assert got.tolist() == _streaming_cache(num_tokens, cache_size, num_sinks)


def test_cache_literals():
    # StreamingLLM, Section 3.2: cache [0, 1, 2, 3, 6, 7, 8] while decoding token 9
    assert attention_sink_positions(9, 7, 4).tolist() == [0, 1, 2, 3, 6, 7, 8]
    # streaming-llm's default StartRecentKVCache(4, 512): after 1000 tokens, 0..3 and 488..999
    assert attention_sink_positions(1000, 516, 4).tolist() == [0, 1, 2, 3] + list(range(488, 1000))
    assert attention_sink_positions(516, 516, 4).tolist() == list(range(516))
    # Mistral 7B, W = 4096: after 5000 tokens the rolling buffer holds 904 .. 4999
    assert sliding_window_positions(5000, 4096).tolist() == list(range(904, 5000))
    assert sliding_window_positions(10, 4).tolist() == [6, 7, 8, 9]
    assert attention_sink_positions(10, 6, 2).tolist() == [0, 1, 6, 7, 8, 9]


def test_caches_accept_numpy_integers():
    assert sliding_window_positions(np.int64(9), np.int32(3)).tolist() == [6, 7, 8]
    assert attention_sink_positions(np.int64(12), np.int64(5), np.int64(1)).tolist() == [0, 8, 9,
                                                                                       10, 11]


def test_empty_caches():
    assert sliding_window_positions(0, 3).shape == (0,)
    assert attention_sink_positions(0, 4, 1).shape == (0,)
    assert attention_sink_positions(0, 4, 1).dtype == np.int64


# ---- alternatives, errors, inputs

@given(lengths_strategy, st.integers(0, 40), st.integers(1, 10), st.data())
def test_alternatives_agree_with_the_reference(lengths, num_tokens, cache_size, data):
    num_sinks = data.draw(st.integers(0, cache_size - 1))
    assert (_alternative("packed_position_ids")(lengths).tolist()
            == packed_position_ids(lengths).tolist())
    np.testing.assert_array_equal(_alternative("packed_causal_mask")(np.array(lengths)),
                                  packed_causal_mask(lengths))
    assert (_alternative("sliding_window_positions")(num_tokens, cache_size).tolist()
            == sliding_window_positions(num_tokens, cache_size).tolist())
    assert (_alternative("attention_sink_positions")(num_tokens, cache_size, num_sinks).tolist()
            == attention_sink_positions(num_tokens, cache_size, num_sinks).tolist())


ERRORS = [
    (packed_position_ids, ([],), "no documents"),
    (packed_position_ids, (np.array([[2, 3]]),), "2-D lengths"),
    (packed_position_ids, (4,), "0-D lengths"),
    (packed_position_ids, ([3, 0],), "an empty document"),
    (packed_position_ids, ([2, -1],), "a negative length"),
    (packed_position_ids, ([2.5, 1],), "a fractional length"),
    (packed_causal_mask, ([],), "mask: no documents"),
    (packed_causal_mask, ([[1, 2]],), "mask: 2-D lengths"),
    (packed_causal_mask, ([2, 0],), "mask: an empty document"),
    (sliding_window_positions, (5, 0), "window 0"),
    (sliding_window_positions, (-1, 4), "negative num_tokens"),
    (attention_sink_positions, (10, 0, 0), "cache_size 0"),
    (attention_sink_positions, (10, 4, -1), "negative num_sinks"),
    (attention_sink_positions, (10, 4, 4), "num_sinks == cache_size"),
    (attention_sink_positions, (10, 4, 6), "num_sinks > cache_size"),
    (attention_sink_positions, (-1, 4, 1), "negative num_tokens (sinks)"),
]


@pytest.mark.parametrize("function, args, why", ERRORS, ids=[e[2] for e in ERRORS])
def test_value_errors(function, args, why):
    with pytest.raises(ValueError):
        function(*args)


def test_inputs_unchanged():
    lengths = np.array([3, 1, 2])
    packed_position_ids(lengths)
    packed_causal_mask(lengths)
    assert lengths.tolist() == [3, 1, 2]
