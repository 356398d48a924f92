"""Properties that hold for every input: checked with hypothesis."""

import numpy as np
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import posenc_solutions as ps

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
positions = st.integers(-10_000, 10_000)
even_dims = st.integers(1, 16).map(lambda half: 2 * half)


@st.composite
def rope_inputs(draw):
    length = draw(st.integers(1, 8))
    head_dim = draw(even_dims)
    x = draw(hnp.arrays(np.float64, (draw(st.integers(1, 3)), length, head_dim), elements=finite))
    pos = np.array(draw(st.lists(positions, min_size=length, max_size=length)))
    base = draw(st.sampled_from([10.0, 500.0, 10000.0, 1e6]))
    return x, pos, base


@given(rope_inputs())
def test_rope_preserves_pair_norms(inputs):
    x, pos, base = inputs
    np.testing.assert_allclose(ps.pair_norms(ps.apply_rope(x, pos, base)), ps.pair_norms(x), atol=1e-9)


@given(rope_inputs(), st.integers(-5000, 5000))
def test_rope_logits_depend_only_on_offset(inputs, shift):
    x, pos, base = inputs
    q, k = x, x[..., ::-1, :] + 1.0
    before = np.einsum("hid,hjd->hij", ps.apply_rope(q, pos, base), ps.apply_rope(k, pos, base))
    after = np.einsum("hid,hjd->hij", ps.apply_rope(q, pos + shift, base), ps.apply_rope(k, pos + shift, base))
    scale = 1 + np.abs(before).max()
    np.testing.assert_allclose(after, before, atol=1e-7 * scale)


@given(st.integers(1, 20), st.lists(positions, min_size=1, max_size=6),
       st.lists(positions, min_size=1, max_size=6), st.integers(-10_000, 10_000))
def test_alibi_bias_is_shift_invariant(num_heads, q, k, shift):
    slopes = ps.alibi_slopes(num_heads)
    q, k = np.array(q), np.array(k)
    np.testing.assert_array_equal(ps.alibi_bias(slopes, q + shift, k + shift), ps.alibi_bias(slopes, q, k))


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=st.floats(-1e4, 1e4, allow_nan=False)),
       st.data())
def test_masked_softmax_rows_sum_to_one_or_zero(logits, data):
    mask = data.draw(hnp.arrays(bool, logits.shape))
    weights = ps.masked_softmax(logits, mask)
    assert not np.isnan(weights).any()
    assert (weights[~mask] == 0).all()
    expected = np.where(mask.any(axis=-1), 1.0, 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), expected, atol=1e-12)


@given(st.integers(0, 6), st.integers(1, 4), st.lists(positions, min_size=1, max_size=8),
       st.lists(positions, min_size=1, max_size=8), st.data())
def test_clipped_bias_equals_unclipped_lookup_inside_K(max_offset, num_heads, q, k, data):
    table = data.draw(hnp.arrays(np.float64, (num_heads, 2 * max_offset + 1), elements=finite))
    q, k = np.array(q), np.array(k)
    bias = ps.clipped_relative_bias(table, q, k)
    offsets = q[:, None] - k[None, :]
    inside = np.abs(offsets) <= max_offset
    unclipped = table[:, np.where(inside, offsets + max_offset, 0)]
    np.testing.assert_array_equal(bias[:, inside], unclipped[:, inside])
    # Outside the window, every entry is the edge column on its side.
    edge = table[:, np.where(offsets > 0, 2 * max_offset, 0)]
    np.testing.assert_array_equal(bias[:, ~inside], edge[:, ~inside])


@given(st.booleans(), st.sampled_from([8, 16, 32, 64]), st.sampled_from([16, 64, 128, 1000]))
def test_t5_bucket_is_monotone_in_distance_and_in_range(bidirectional, num_buckets, max_distance):
    distance = np.arange(0, 3 * max_distance)
    half = num_buckets // 2 if bidirectional else num_buckets
    assume(max_distance > half // 2)
    past = ps.t5_relative_position_bucket(-distance, bidirectional, num_buckets, max_distance)
    assert (np.diff(past) >= 0).all()
    assert past.min() >= 0 and past.max() <= half - 1
    future = ps.t5_relative_position_bucket(distance[1:], bidirectional, num_buckets, max_distance)
    if bidirectional:
        assert (np.diff(future) >= 0).all()
        assert future.min() >= half and future.max() <= num_buckets - 1
    else:
        assert (future == 0).all()


@given(st.integers(2, 12).flatmap(lambda p: hnp.arrays(np.float64, (p, 3), elements=finite)))
def test_interpolating_to_own_length_is_identity(table):
    np.testing.assert_array_equal(ps.interpolate_position_table(table, table.shape[0]), table)


@given(st.integers(2, 12).flatmap(lambda p: hnp.arrays(np.float64, (p, 2), elements=finite)),
       st.integers(2, 40))
def test_interpolation_keeps_endpoints(table, new_len):
    out = ps.interpolate_position_table(table, new_len)
    np.testing.assert_allclose(out[[0, -1]], table[[0, -1]], atol=1e-12)


@given(hnp.arrays(np.int8, hnp.array_shapes(min_dims=2, max_dims=2, max_side=8), elements=st.integers(0, 1)),
       st.integers(0, 6))
def test_decode_ids_continue_where_mask_ids_end(mask, num_new):
    ids = ps.position_ids_from_attention_mask(mask)
    new = ps.decode_position_ids(mask, num_new)
    last = np.where(mask.any(axis=1), np.max(np.where(mask == 1, ids, -1), axis=1), -1)
    expected = last[:, None] + 1 + np.arange(num_new)
    np.testing.assert_array_equal(new, expected)


@given(st.integers(1, 32), st.floats(-1e4, 1e4), st.integers(-1000, 1000))
def test_sinusoidal_shift_is_a_fixed_rotation_of_each_pair(half, position, shift):
    d_model = 2 * half
    before, after = ps.sinusoidal_row(np.array([position, position + shift]), d_model)
    angle = shift * 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    # (sin, cos) of p + k: sin(a+b) = sin a cos b + cos a sin b, cos(a+b) = cos a cos b - sin a sin b.
    sin, cos = before[0::2], before[1::2]
    np.testing.assert_allclose(after[0::2], sin * np.cos(angle) + cos * np.sin(angle), atol=1e-8)
    np.testing.assert_allclose(after[1::2], cos * np.cos(angle) - sin * np.sin(angle), atol=1e-8)
