"""posenc-frontier: tiled attention with an online softmax and a position bias computed per tile.

Sources:
- Milakov & Gimelshein (2018), "Online normalizer calculation for softmax": the running maximum
  and the rescaled running sum; Dao et al. (2022), "FlashAttention": the same, with the output
  accumulated per key tile and key tiles in the future of a query tile skipped.
- Press et al. (2022), ALiBi: ``-m * (i - j)``, as ``posenc_solutions.alibi.alibi_bias`` (whose
  ``alibi_attention`` is the materialised reference below).
- Hugging Face transformers 5.24.0, ``masking_utils.sdpa_mask`` with ``q_offset = Lk - Lq``: the
  queries are the last positions of the keys when decoding with a KV cache.
- Checked outside the repository (scratch venv, torch 2.13.0+cpu) against
  ``torch.nn.functional.scaled_dot_product_attention`` with the ALiBi bias and a -inf mask as an
  additive float ``attn_mask``, in float64: 200 random cases (Lk < 40, every tile size, causal or
  not, logits up to ~1e4), largest absolute difference 4.2e-13. This file imports neither torch nor
  transformers.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from posenc_solutions.alibi import alibi_attention, alibi_bias
from posenc_solutions.tiled_attention import alibi_tile_bias, online_softmax_update, tiled_biased_attention


def zero_bias(query_positions, key_positions):
    return np.zeros((len(query_positions), len(key_positions)))


def alibi(slope):
    return lambda query_positions, key_positions: alibi_tile_bias(slope, query_positions, key_positions)


class Recorder:
    """A bias_fn that records every call (copies of its arguments) and delegates to another."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def __call__(self, query_positions, key_positions):
        self.calls.append((np.array(query_positions), np.array(key_positions)))
        return self.inner(query_positions, key_positions)


def naive_attention(q, k, v, bias_fn, causal=True):
    """The materialised attention, one query at a time, with math.exp: the bias of all positions
    at once, the mask, a softmax stabilised by the row's largest visible logit."""
    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    lq, lk, d = q.shape[0], k.shape[0], q.shape[1]
    query_positions = np.arange(lk - lq, lk)
    bias = np.asarray(bias_fn(query_positions, np.arange(lk)), dtype=float)
    out = np.zeros((lq, v.shape[1]))
    for i in range(lq):
        logits = [float(q[i] @ k[j]) / math.sqrt(d) + bias[i, j] for j in range(lk)]
        visible = [j for j in range(lk) if (not causal or j <= query_positions[i]) and logits[j] > -math.inf]
        if not visible:
            continue
        top = max(logits[j] for j in visible)
        weights = {j: math.exp(logits[j] - top) for j in visible}
        total = sum(weights.values())
        out[i] = sum(weights[j] * v[j] for j in visible) / total
    return out


def fold(scores, values, splits):
    """online_softmax_update over the key tiles cut at `splits`, from the start state."""
    scores, values = np.asarray(scores, dtype=float), np.asarray(values, dtype=float)
    state = (np.full(scores.shape[0], -np.inf), np.zeros(scores.shape[0]), np.zeros((scores.shape[0], values.shape[1])))
    bounds = [0, *splits, scores.shape[1]]
    for start, stop in zip(bounds[:-1], bounds[1:]):
        state = online_softmax_update(*state, scores[:, start:stop], values[start:stop])
    return state


def finish(state):
    _, total, accumulator = state
    return accumulator / np.where(total > 0, total, 1.0)[:, None]


def random_case(seed, lq, lk, d=3, dv=2, scale=1.0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(lq, d)) * scale, rng.normal(size=(lk, d)) * scale, rng.normal(size=(lk, dv))


# --- literal values ----------------------------------------------------------------------------

def test_online_update_by_hand():
    # one tile: row 0 sees both keys (max 0, sum 2, acc 1 + 3), row 1 none.
    m, l, a = online_softmax_update(np.full(2, -np.inf), np.zeros(2), np.zeros((2, 1)),
                                    [[0.0, 0.0], [-np.inf, -np.inf]], [[1.0], [3.0]])
    np.testing.assert_array_equal(m, [0.0, -np.inf])
    np.testing.assert_array_equal(l, [2.0, 0.0])
    np.testing.assert_array_equal(a, [[4.0], [0.0]])
    # a second tile with a larger maximum: row 0 is rescaled by exp(0 - ln 2) = 1/2.
    m, l, a = online_softmax_update(m, l, a, [[math.log(2.0)], [5.0]], [[6.0]])
    np.testing.assert_allclose(m, [math.log(2.0), 5.0], rtol=1e-15)
    np.testing.assert_allclose(l, [2.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(a, [[8.0], [6.0]], rtol=1e-15)
    np.testing.assert_allclose(a / l[:, None], [[4.0], [6.0]], rtol=1e-15)


def test_online_update_smaller_maximum_keeps_the_old_one():
    # old state max 3; a tile with score 3 - ln 4 adds exp(-ln 4) = 1/4 of its value.
    m, l, a = online_softmax_update([3.0], [1.0], [[2.0, 0.0]], [[3.0 - math.log(4.0)]], [[4.0, 8.0]])
    assert m.tolist() == [3.0]
    np.testing.assert_allclose(l, [1.25], rtol=1e-15)
    np.testing.assert_allclose(a, [[3.0, 2.0]], rtol=1e-15)


def test_online_update_huge_new_maximum_wipes_the_old_state():
    m, l, a = online_softmax_update([0.0], [5.0], [[7.0]], [[1e4]], [[2.0]])
    assert m.tolist() == [1e4] and l.tolist() == [1.0] and a.tolist() == [[2.0]]


def test_online_update_keeps_float64_precision_and_range():
    # values that cancel: 2^30 + 1 - 2^30 = 1 at equal weights (float32 would hold 2^30 + 1 as 2^30)
    _, l, a = online_softmax_update([-np.inf], [0.0], [[0.0]], [[0.0, 0.0]], [[2.0 ** 30 + 1], [-2.0 ** 30]])
    assert l.tolist() == [2.0] and a.tolist() == [[1.0]]
    # a state beyond float32's range passes a tile of -inf unchanged
    m, l, a = online_softmax_update([0.0], [1e300], [[1e300]], [[-np.inf]], [[1.0]])
    assert m.tolist() == [0.0] and l.tolist() == [1e300] and a.tolist() == [[1e300]]


def test_tiled_attention_by_hand():
    # zero content scores, ALiBi slope ln 2: query 1 weighs keys 0, 1 as 1/2 : 1, query 2 keys
    # 0, 1, 2 as 1/4 : 1/2 : 1. Values 7, 0, 7: 7, 7/3 and (7/4 + 7) / (7/4) = 5.
    q, k, v = np.zeros((3, 2)), np.zeros((3, 2)), np.array([[7.0], [0.0], [7.0]])
    for tile_size in (1, 2, 3, 4):
        got = tiled_biased_attention(q, k, v, alibi(math.log(2.0)), tile_size)
        np.testing.assert_allclose(got, [[7.0], [7.0 / 3.0], [5.0]], rtol=1e-14)
        assert got.dtype == np.float64
    # not causal: query 0 also sees keys 1 and 2, with weights 2 and 4 (bias +ln 2, +2 ln 2).
    got = tiled_biased_attention(q, k, v, alibi(math.log(2.0)), 2, causal=False)
    np.testing.assert_allclose(got[0], [(7.0 + 0.0 + 4 * 7.0) / 7.0], rtol=1e-14)


def test_tiled_attention_decoding_positions_by_hand():
    # one query at position 2 (the last of 3 keys): it sees every key, weights 1/4 : 1/2 : 1.
    got = tiled_biased_attention(np.zeros((1, 1)), np.zeros((3, 1)), [[7.0], [0.0], [7.0]],
                                 alibi(math.log(2.0)), 2)
    np.testing.assert_allclose(got, [[5.0]], rtol=1e-14)


def test_content_scores_are_divided_by_sqrt_d():
    # d = 4: q . k_1 = 4 * ln 3 / 2, divided by sqrt(4) gives ln 3 for key 1: weights 1 : 3.
    q = np.full((1, 4), math.sqrt(math.log(3.0)))
    k = np.array([[0.0] * 4, [math.sqrt(math.log(3.0)) / 2] * 4])
    got = tiled_biased_attention(q, k, [[0.0], [4.0]], zero_bias, 1)
    np.testing.assert_allclose(got, [[3.0]], rtol=1e-14)


def test_alibi_tile_bias_by_hand():
    np.testing.assert_array_equal(alibi_tile_bias(0.5, [2, 3], [0, 1, 2, 3]),
                                  [[-1.0, -0.5, 0.0, 0.5], [-1.5, -1.0, -0.5, 0.0]])
    got = alibi_tile_bias(0.25, np.array([7], dtype=np.int64), np.array([4, 9], dtype=np.int64))
    assert got.dtype == np.float64 and got.shape == (1, 2)
    np.testing.assert_array_equal(got, [[-0.75, 0.5]])
    # positions float32 cannot hold (2^24 + 1): the distances stay exact
    np.testing.assert_array_equal(alibi_tile_bias(0.5, [2 ** 24 + 1], [2 ** 24, 2 ** 24 + 1]), [[-0.5, 0.0]])


# --- against the materialised attention --------------------------------------------------------

@pytest.mark.parametrize("lq, lk", [(1, 1), (5, 5), (7, 7), (1, 9), (3, 9), (6, 11), (10, 10)])
@pytest.mark.parametrize("causal", [True, False])
def test_every_tile_size_equals_the_materialised_attention(lq, lk, causal):
    q, k, v = random_case(lq * 100 + lk, lq, lk)
    slope = 0.3
    expected = naive_attention(q, k, v, alibi(slope), causal)
    if causal:  # posenc_solutions.alibi's materialised weights, times v (its bias is -m |i - j|)
        query_positions, key_positions = np.arange(lk - lq, lk), np.arange(lk)
        weights = alibi_attention(q @ k.T / math.sqrt(3), [slope], query_positions, key_positions)[0]
        np.testing.assert_allclose(weights @ v, expected, rtol=1e-12, atol=1e-14)
    for tile_size in range(1, lk + 2):
        got = tiled_biased_attention(q, k, v, alibi(slope), tile_size, causal)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("scale", [30.0, 1e3])
def test_huge_logits(scale):
    # logits up to ~1e6: exp overflows without the running maximum.
    q, k, v = random_case(7, 6, 9, d=4, scale=scale)
    expected = naive_attention(q, k, v, alibi(2.0))
    assert np.max(np.abs(q @ k.T)) > 50 * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tile_size in range(1, 11):
            got = tiled_biased_attention(q, k, v, alibi(2.0), tile_size)
            assert np.all(np.isfinite(got))
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(lk=st.integers(1, 14), data=st.data())
def test_random_inputs_equal_the_naive_attention(lk, data):
    lq = data.draw(st.integers(1, lk))
    tile_size = data.draw(st.integers(1, lk + 1))
    causal = data.draw(st.booleans())
    slope = data.draw(st.floats(0.0, 4.0))
    scale = data.draw(st.sampled_from([0.1, 1.0, 10.0, 100.0]))
    q, k, v = random_case(data.draw(st.integers(0, 2**32 - 1)), lq, lk, d=data.draw(st.integers(1, 5)),
                          dv=data.draw(st.integers(1, 3)), scale=scale)
    got = tiled_biased_attention(q, k, v, alibi(slope), tile_size, causal)
    np.testing.assert_allclose(got, naive_attention(q, k, v, alibi(slope), causal), rtol=1e-10, atol=1e-12)


def test_one_query_is_the_last_row_of_the_full_attention():
    # decoding with a KV cache: the last query alone gives the last row of the prefill.
    q, k, v = random_case(3, 9, 9)
    full = tiled_biased_attention(q, k, v, alibi(0.5), 4)
    for lq in range(1, 10):
        np.testing.assert_allclose(tiled_biased_attention(q[-lq:], k, v, alibi(0.5), 4), full[-lq:],
                                   rtol=1e-13, atol=1e-15)


def test_chunked_bias_with_minus_inf():
    # a bias_fn that hides keys outside the query's chunk of 3 (-inf): a query's early key tiles
    # are then entirely hidden, which the state must carry through without NaN.
    def chunked(query_positions, key_positions):
        same = query_positions[:, None] // 3 == key_positions[None, :] // 3
        return np.where(same, 0.0, -np.inf)

    q, k, v = random_case(11, 10, 10)
    expected = naive_attention(q, k, v, chunked)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tile_size in range(1, 12):
            np.testing.assert_allclose(tiled_biased_attention(q, k, v, chunked, tile_size), expected,
                                       rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(expected[9], v[9])  # position 9 starts a chunk: only itself


def test_a_query_that_sees_nothing_gets_zero():
    def hide_all(query_positions, key_positions):
        return np.full((len(query_positions), len(key_positions)), -np.inf)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tiled_biased_attention(np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 2)), hide_all, 2)
    np.testing.assert_array_equal(got, np.zeros((3, 2)))


# --- the bias is computed per tile -------------------------------------------------------------

@pytest.mark.parametrize("lq, lk", [(1, 1), (4, 4), (7, 7), (3, 10), (1, 10), (10, 10), (5, 13)])
@pytest.mark.parametrize("tile_size", [1, 2, 3, 4, 16])
@pytest.mark.parametrize("causal", [True, False])
def test_bias_fn_is_called_with_tiles_only(lq, lk, tile_size, causal):
    recorder = Recorder(alibi(0.5))
    q, k, v = random_case(1, lq, lk)
    tiled_biased_attention(q, k, v, recorder, tile_size, causal)
    offset = lk - lq
    pairs = []
    for query_positions, key_positions in recorder.calls:
        for positions in (query_positions, key_positions):
            assert positions.dtype == np.int64 and positions.ndim == 1
            assert 1 <= len(positions) <= tile_size
            np.testing.assert_array_equal(positions, np.arange(positions[0], positions[0] + len(positions)))
        # query tiles start at query index 0, key tiles at key 0; the last tiles are the short ones
        assert (query_positions[0] - offset) % tile_size == 0
        assert len(query_positions) == min(tile_size, lk - query_positions[0])
        assert key_positions[0] % tile_size == 0
        assert len(key_positions) == min(tile_size, lk - key_positions[0])
        pairs.append((int(query_positions[0]), int(key_positions[0])))
    assert len(pairs) == len(set(pairs))  # each tile once
    expected = set()
    for q_start in range(0, lq, tile_size):
        last_query = offset + min(q_start + tile_size, lq) - 1
        for k_start in range(0, lk, tile_size):
            if not (causal and k_start > last_query):
                expected.add((offset + q_start, k_start))
    assert set(pairs) == expected


def test_future_tiles_are_skipped():
    def no_future(query_positions, key_positions):
        assert key_positions.min() <= query_positions.max(), "called for a tile wholly in the future"
        return alibi_tile_bias(0.5, query_positions, key_positions)

    q, k, v = random_case(2, 12, 12)
    recorder = Recorder(no_future)
    tiled_biased_attention(q, k, v, recorder, 3)
    # 4 query tiles, 1 + 2 + 3 + 4 key tiles at or before them of the 16
    assert len(recorder.calls) == 10
    recorder = Recorder(alibi(0.5))
    tiled_biased_attention(q, k, v, recorder, 3, causal=False)
    assert len(recorder.calls) == 16


def test_bias_fn_never_sees_the_full_matrix():
    # with 64 positions and tiles of 8, no call ever asks for more than 8 x 8 values.
    sizes = []

    def sized(query_positions, key_positions):
        sizes.append(len(query_positions) * len(key_positions))
        return alibi_tile_bias(0.1, query_positions, key_positions)

    q, k, v = random_case(5, 64, 64, d=2, dv=1)
    tiled_biased_attention(q, k, v, sized, 8)
    assert max(sizes) == 64 and len(sizes) == 8 * 9 // 2


# --- the online update ------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 4), keys=st.integers(1, 10), data=st.data())
def test_one_big_tile_equals_small_tiles(rows, keys, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    scale = data.draw(st.sampled_from([1.0, 100.0, 1e4]))
    scores = rng.normal(size=(rows, keys)) * scale
    scores[rng.random((rows, keys)) < data.draw(st.sampled_from([0.0, 0.3, 0.8]))] = -np.inf
    values = rng.normal(size=(keys, 2))
    splits = sorted(data.draw(st.lists(st.integers(0, keys), max_size=4)))
    big = fold(scores, values, [])
    small = fold(scores, values, splits)
    np.testing.assert_array_equal(small[0], big[0])  # the maximum is exact
    np.testing.assert_allclose(finish(small), finish(big), rtol=1e-12, atol=1e-13)
    # the state itself, relative to the same maximum, agrees too
    np.testing.assert_allclose(small[1], big[1], rtol=1e-12)
    np.testing.assert_allclose(small[2], big[2], rtol=1e-12, atol=1e-13)
    # the materialised softmax of each row
    for i in range(rows):
        visible = np.isfinite(scores[i])
        if visible.any():
            weights = np.exp(scores[i, visible] - scores[i, visible].max())
            np.testing.assert_allclose(finish(big)[i], weights @ values[visible] / weights.sum(),
                                       rtol=1e-10, atol=1e-12)
        else:
            assert big[0][i] == -np.inf and big[1][i] == 0.0 and not big[2][i].any()


@settings(max_examples=30, deadline=None)
@given(keys=st.integers(2, 9), seed=st.integers(0, 2**32 - 1))
def test_tile_order_does_not_matter(keys, seed):
    rng = np.random.default_rng(seed)
    scores, values = rng.normal(size=(3, keys)) * 10, rng.normal(size=(keys, 2))
    cut = keys // 2
    forward = fold(scores, values, [cut])
    backward = fold(np.concatenate([scores[:, cut:], scores[:, :cut]], axis=1),
                    np.concatenate([values[cut:], values[:cut]]), [keys - cut])
    np.testing.assert_allclose(finish(forward), finish(backward), rtol=1e-12, atol=1e-13)


def test_all_masked_rows_stay_at_the_start_state_without_warnings():
    state = (np.full(2, -np.inf), np.zeros(2), np.zeros((2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            state = online_softmax_update(*state, np.full((2, 4), -np.inf), np.ones((4, 3)))
        m, l, a = state
        np.testing.assert_array_equal(m, [-np.inf, -np.inf])
        np.testing.assert_array_equal(l, [0.0, 0.0])
        np.testing.assert_array_equal(a, np.zeros((2, 3)))
        # and the first visible key then counts fully
        m, l, a = online_softmax_update(m, l, a, [[-np.inf, 2.0, -np.inf, -np.inf], [-np.inf] * 4],
                                        np.arange(12.0).reshape(4, 3))
    assert m.tolist() == [2.0, -np.inf] and l.tolist() == [1.0, 0.0]
    np.testing.assert_array_equal(a, [[3.0, 4.0, 5.0], [0.0, 0.0, 0.0]])
    assert not np.isnan(a).any()


def test_an_empty_tile_changes_nothing():
    m, l, a = online_softmax_update([1.0, -np.inf], [2.0, 0.0], [[3.0], [0.0]], np.zeros((2, 0)), np.zeros((0, 1)))
    assert m.tolist() == [1.0, -np.inf] and l.tolist() == [2.0, 0.0] and a.tolist() == [[3.0], [0.0]]


def test_inputs_unchanged():
    m, l, a = np.array([0.5, -np.inf]), np.array([1.0, 0.0]), np.array([[1.0], [0.0]])
    scores, values = np.array([[3.0, -np.inf], [1.0, 2.0]]), np.array([[1.0], [2.0]])
    copies = [x.copy() for x in (m, l, a, scores, values)]
    out = online_softmax_update(m, l, a, scores, values)
    for new in out:
        new[...] = 7.0
    for before, after in zip(copies, (m, l, a, scores, values)):
        np.testing.assert_array_equal(before, after)
    q, k, v = random_case(0, 3, 5)
    copies = [x.copy() for x in (q, k, v)]
    tiled_biased_attention(q, k, v, alibi(0.5), 2)
    for before, after in zip(copies, (q, k, v)):
        np.testing.assert_array_equal(before, after)


def test_lists_and_integers_are_accepted():
    got = tiled_biased_attention([[0]], [[0], [0]], [[1], [3]], zero_bias, 1)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [[2.0]])
    m, l, a = online_softmax_update([-np.inf], [0], [[0]], [[0]], [[5]])
    assert a.dtype == np.float64 and a.tolist() == [[5.0]]


# --- alibi_tile_bias ---------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(slope=st.floats(0.0, 8.0), data=st.data())
def test_alibi_tile_bias_is_alibi_bias_up_to_the_query(slope, data):
    query_positions = np.array(data.draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=6)))
    key_positions = np.array(data.draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=6)))
    got = alibi_tile_bias(slope, query_positions, key_positions)
    past = key_positions[None, :] <= query_positions[:, None]
    np.testing.assert_array_equal(got[past], alibi_bias([slope], query_positions, key_positions)[0][past])
    np.testing.assert_array_equal(got, -alibi_tile_bias(slope, key_positions, query_positions).T)
    for i, p in enumerate(query_positions):
        for j, kp in enumerate(key_positions):
            assert got[i, j] == -slope * (int(p) - int(kp))


def test_a_full_tile_of_alibi_is_the_materialised_bias():
    # the tiles of alibi_tile_bias put together are alibi_bias where keys are not in the future
    positions = np.arange(10)
    whole = alibi_tile_bias(0.25, positions, positions)
    tiles = np.block([[alibi_tile_bias(0.25, positions[i:i + 4], positions[j:j + 4]) for j in range(0, 10, 4)]
                      for i in range(0, 10, 4)])
    np.testing.assert_array_equal(tiles, whole)
    np.testing.assert_array_equal(np.tril(whole), np.tril(alibi_bias([0.25], positions, positions)[0]))


# --- errors -------------------------------------------------------------------------------------

Q, K, V = np.zeros((2, 3)), np.zeros((4, 3)), np.zeros((4, 2))


def wrong_shape(query_positions, key_positions):
    return np.zeros((len(query_positions), len(key_positions) + 1))


def nan_bias(query_positions, key_positions):
    return np.full((len(query_positions), len(key_positions)), np.nan)


ERRORS = [
    (tiled_biased_attention, (np.zeros(3), K, V, zero_bias, 2)),
    (tiled_biased_attention, (np.zeros((1, 2, 3)), K, V, zero_bias, 2)),
    (tiled_biased_attention, (Q, np.zeros(12), V, zero_bias, 2)),
    (tiled_biased_attention, (Q, K, np.zeros(4), zero_bias, 2)),
    (tiled_biased_attention, (Q, np.zeros((4, 2)), V, zero_bias, 2)),
    (tiled_biased_attention, (np.zeros((2, 0)), np.zeros((4, 0)), V, zero_bias, 2)),
    (tiled_biased_attention, (Q, K, np.zeros((5, 2)), zero_bias, 2)),
    (tiled_biased_attention, (np.zeros((5, 3)), K, V, zero_bias, 2)),
    (tiled_biased_attention, (Q, K, V, zero_bias, 0)),
    (tiled_biased_attention, (Q, K, V, zero_bias, -1)),
    (tiled_biased_attention, (Q, K, V, zero_bias, 2.0)),
    (tiled_biased_attention, (Q, K, V, zero_bias, 1.5)),
    (tiled_biased_attention, (Q, K, V, zero_bias, True)),
    (tiled_biased_attention, (Q, K, V, zero_bias, "2")),
    (tiled_biased_attention, (Q, K, V, wrong_shape, 2)),
    (tiled_biased_attention, (Q, K, V, lambda qp, kp: np.zeros((len(kp), len(qp))), 3)),
    (tiled_biased_attention, (Q, K, V, lambda qp, kp: 0.0, 2)),
    (tiled_biased_attention, (Q, K, V, nan_bias, 2)),
    (tiled_biased_attention, (Q, K, V, lambda qp, kp: np.where(kp[None, :] == 0, np.nan, zero_bias(qp, kp)), 2)),
    (online_softmax_update, (np.zeros((2, 1)), np.zeros(2), np.zeros((2, 1)), np.zeros((2, 3)), np.zeros((3, 1)))),
    (online_softmax_update, (np.zeros(2), np.zeros(3), np.zeros((2, 1)), np.zeros((2, 3)), np.zeros((3, 1)))),
    (online_softmax_update, (np.zeros(2), np.zeros(2), np.zeros(2), np.zeros((2, 3)), np.zeros((3, 1)))),
    (online_softmax_update, (np.zeros(2), np.zeros(2), np.zeros((3, 1)), np.zeros((2, 3)), np.zeros((3, 1)))),
    (online_softmax_update, (np.zeros(2), np.zeros(2), np.zeros((2, 1)), np.zeros(3), np.zeros((3, 1)))),
    (online_softmax_update, (np.zeros(2), np.zeros(2), np.zeros((2, 1)), np.zeros((2, 3)), np.zeros((2, 1)))),
    (online_softmax_update, (np.zeros(2), np.zeros(2), np.zeros((2, 1)), np.zeros((2, 3)), np.zeros((3, 2)))),
    (online_softmax_update, (np.zeros(2), np.zeros(2), np.zeros((2, 1)), [[0.0, np.nan, 0.0]] * 2, np.zeros((3, 1)))),
    (online_softmax_update, (np.zeros(2), np.zeros(2), np.zeros((2, 1)), [[0.0, np.inf, 0.0]] * 2, np.zeros((3, 1)))),
    (online_softmax_update, ([0.0, np.nan], np.zeros(2), np.zeros((2, 1)), np.zeros((2, 3)), np.zeros((3, 1)))),
    (alibi_tile_bias, (0.5, [[0, 1]], [0, 1])),
    (alibi_tile_bias, (0.5, [0, 1], 3)),
    (alibi_tile_bias, (0.5, 3, [0, 1])),
    (alibi_tile_bias, ([0.5, 0.25], [0, 1], [0, 1])),
    (alibi_tile_bias, (np.nan, [0, 1], [0, 1])),
    (alibi_tile_bias, ("0.5", [0, 1], [0, 1])),
]


@pytest.mark.parametrize("function, args", ERRORS)
def test_value_errors(function, args):
    with pytest.raises(ValueError):
        function(*args)


def test_error_messages_name_the_value():
    with pytest.raises(ValueError, match="1.5"):
        tiled_biased_attention(Q, K, V, zero_bias, 1.5)
    with pytest.raises(ValueError, match=r"\(5, 3\)"):
        tiled_biased_attention(np.zeros((5, 3)), K, V, zero_bias, 2)
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        tiled_biased_attention(Q, K, V, wrong_shape, 2)
    with pytest.raises(ValueError, match=r"\(1, 2\)"):
        alibi_tile_bias(0.5, [[0, 1]], [0, 1])
