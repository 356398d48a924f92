"""Values from the literature and from hand computation, written as literals."""

import math

import numpy as np
import pytest

import posenc_solutions as ps


def test_alibi_slopes_for_8_heads_are_powers_of_one_half():
    expected = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    np.testing.assert_allclose(ps.alibi_slopes(8), expected, rtol=1e-15)


def test_alibi_slopes_for_12_heads_interleave_the_16_head_ladder():
    root2 = math.sqrt(2)
    expected = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256,
                1 / root2, 1 / (2 * root2), 1 / (4 * root2), 1 / (8 * root2)]
    np.testing.assert_allclose(ps.alibi_slopes(12), expected, rtol=1e-15)


@pytest.mark.parametrize("relative_position, bucket", [
    (0, 0), (-7, 7), (-8, 8), (-12, 9), (-16, 10), (-91, 15), (1, 17), (91, 31),
])
def test_t5_bidirectional_buckets(relative_position, bucket):
    got = ps.t5_relative_position_bucket(np.array([relative_position]), bidirectional=True,
                                         num_buckets=32, max_distance=128)
    assert got.tolist() == [bucket]


@pytest.mark.parametrize("relative_position, bucket", [
    (-15, 15), (-16, 16), (-19, 17), (-113, 31), (1, 0), (7, 0), (500, 0),
])
def test_t5_causal_buckets(relative_position, bucket):
    got = ps.t5_relative_position_bucket(np.array([relative_position]), bidirectional=False,
                                         num_buckets=32, max_distance=128)
    assert got.tolist() == [bucket]


def test_sinusoidal_row_at_position_1_for_d_model_4():
    # sin(1), cos(1), sin(1/100), cos(1/100): the second pair's frequency is 10000**(-2/4).
    expected = [0.8414709848078965, 0.5403023058681398, 0.009999833334166664, 0.9999500004166653]
    np.testing.assert_allclose(ps.sinusoidal_row(1, 4), expected, rtol=1e-14)


def test_sinusoidal_row_at_position_0_is_sin0_cos0():
    np.testing.assert_array_equal(ps.sinusoidal_row(0, 6), [0.0, 1.0, 0.0, 1.0, 0.0, 1.0])


def test_rope_at_position_0_is_the_identity():
    x = np.array([[0.3, -1.2, 2.5, 0.7, -0.4, 1.1]])
    np.testing.assert_array_equal(ps.apply_rope(x, [0]), x)


def test_rope_quarter_turn_of_the_fastest_pair():
    # theta_0 = 1, so position pi/2 turns (1, 0) into (0, 1), counter-clockwise.
    out = ps.apply_rope(np.array([[1.0, 0.0]]), [math.pi / 2])
    np.testing.assert_allclose(out, [[0.0, 1.0]], atol=1e-15)


def test_position_ids_from_left_padded_mask():
    assert ps.position_ids_from_attention_mask([[0, 0, 1, 1, 1]]).tolist() == [[0, 0, 0, 1, 2]]


def test_position_ids_right_padding_and_gaps():
    got = ps.position_ids_from_attention_mask([[1, 1, 0, 0], [1, 0, 1, 1]])
    assert got.tolist() == [[0, 1, 0, 0], [0, 0, 1, 2]]


def test_decode_ids_after_left_padding():
    assert ps.decode_position_ids([[0, 0, 1, 1, 1]], 3).tolist() == [[3, 4, 5]]


def test_gpt2_learned_table_parameters():
    assert ps.learned_table_parameters(1024, 768) == 786_432


@pytest.mark.parametrize("scheme, expected", [
    ("learned", 2048 * 512), ("sinusoidal", 0), ("rope", 0), ("alibi", 0),
    ("t5", 32 * 8),
    ("shaw", 6 * 2 * 33 * 64),
])
def test_position_parameter_counts(scheme, expected):
    got = ps.position_parameter_count(scheme, d_model=512, num_heads=8, num_layers=6, max_positions=2048)
    assert got == expected and isinstance(got, int)


def test_alibi_bias_example():
    expected = [[[-0.0, -0.5, -1.0], [-0.5, -0.0, -0.5]]]
    np.testing.assert_array_equal(ps.alibi_bias([0.5], [0, 1], [0, 1, 2]), expected)


def test_entropy_of_uniform_rows_is_log_L():
    np.testing.assert_allclose(ps.attention_entropy(np.full((2, 3, 8), 1 / 8)), [2.0794415416798357] * 2)


def test_first_bad_decode_step_examples():
    assert ps.first_bad_decode_step(5, [5, 6, 7]) is None
    assert ps.first_bad_decode_step(5, []) is None
    assert ps.first_bad_decode_step(5, [0, 1, 2]) == 0
    assert ps.first_bad_decode_step(5, [5, 6, 6, 8]) == 2
