"""The third assignment's RoPE references: a config.json's settings, llama3's bands, LongRoPE, stale keys,
partial and proportional rotary, DeepSeek's YaRN scales.

Each is checked here against an independent form (loops, or the formula written another way), on known values
worked by hand, and on every ValueError its docstring lists, tried with an input numpy would accept. Their
agreement with Hugging Face transformers' own code, run as it is, is tests/system/test_hf_agreement.py's.
"""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from posenc_solutions.deepseek_yarn import deepseek_yarn_scales, yarn_mscale
from posenc_solutions.dynamic_cache import cached_keys, rotation_lengths, stale_keys
from posenc_solutions.longrope import longrope_attention_factor, longrope_inv_freq
from posenc_solutions.partial_rotary import apply_partial_rotary, apply_proportional_rope
from posenc_solutions.rope_config import (head_dim_from_config, inv_freq_from_config, llama3_frequency_bands,
                                          rope_parameters_from_config)
from posenc_solutions.rope_layouts import apply_rope_half_split
from posenc_solutions.rope_scaling import dynamic_ntk_inv_freq, llama3_inv_freq


def rotate_pairs(x, positions, pairs, theta):
    """Turn each pair (i, j) of dimensions of x (L, d) by position * theta, one scalar at a time."""
    out = np.array(x, dtype=np.float64)
    for row, position in enumerate(positions):
        for (i, j), frequency in zip(pairs, theta):
            c, s = math.cos(position * frequency), math.sin(position * frequency)
            out[row, i], out[row, j] = x[row][i] * c - x[row][j] * s, x[row][j] * c + x[row][i] * s
    return out


# ---- rope_parameters_from_config, head_dim_from_config, inv_freq_from_config

def test_three_spellings_of_one_setting_read_alike():
    old = {"rope_theta": 5e5, "max_position_embeddings": 131072,
           "rope_scaling": {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}}
    newer = {"rope_theta": 5e5, "max_position_embeddings": 131072,
             "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}}
    v5 = {"max_position_embeddings": 131072,
          "rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0, "low_freq_factor": 1.0,
                              "high_freq_factor": 4.0}}
    for config in (old, newer, v5):
        settings = rope_parameters_from_config(config)
        assert (settings["rope_type"], settings["rope_theta"]) == ("llama3", 5e5), settings
        assert settings["original_max_position_embeddings"] == 131072, "no pretraining length: max_position"


def test_settings_rules():
    assert rope_parameters_from_config({}) == {"rope_type": "default", "rope_theta": 10000.0}
    assert rope_parameters_from_config({"rope_scaling": None, "rope_theta": 3.0})["rope_theta"] == 3.0
    # rope_scaling (the older key) wins over rope_parameters, as in HF's convert_rope_params_to_dict
    both = {"rope_scaling": {"rope_type": "linear", "factor": 2.0}, "rope_parameters": {"rope_type": "default"}}
    assert rope_parameters_from_config(both)["rope_type"] == "linear"
    # Phi-3 keeps the pretraining length at top level, and it wins
    phi = {"original_max_position_embeddings": 4096, "max_position_embeddings": 131072,
           "rope_scaling": {"type": "longrope", "short_factor": [1], "long_factor": [2],
                            "original_max_position_embeddings": 9}}
    assert rope_parameters_from_config(phi)["original_max_position_embeddings"] == 4096
    # the length is only added for the types that need it
    assert "original_max_position_embeddings" not in rope_parameters_from_config(
        {"max_position_embeddings": 8, "rope_scaling": {"rope_type": "linear", "factor": 2.0}})
    partial = rope_parameters_from_config({"partial_rotary_factor": 0.5, "rope_theta": 1.0})
    assert partial["partial_rotary_factor"] == 0.5


def test_settings_leave_the_config_alone():
    config = {"rope_scaling": {"type": "linear", "factor": 2.0}}
    rope_parameters_from_config(config)
    assert config == {"rope_scaling": {"type": "linear", "factor": 2.0}}


@pytest.mark.parametrize("config", [
    [("rope_theta", 1.0)],
    {"rope_scaling": [1, 2]},
    {"rope_scaling": {"rope_type": "su"}},
    {"rope_parameters": {"rope_type": "llama3", "factor": 8.0}},  # no length anywhere
])
def test_settings_errors(config):
    with pytest.raises(ValueError):
        rope_parameters_from_config(config)


def test_head_dim():
    assert head_dim_from_config({"hidden_size": 3072, "num_attention_heads": 24}) == 128
    assert head_dim_from_config({"head_dim": None, "hidden_size": 64, "num_attention_heads": 4}) == 16
    with pytest.raises(ValueError):
        head_dim_from_config({"hidden_size": 64})


def test_config_dispatch_matches_the_rules():
    llama = {"hidden_size": 64, "num_attention_heads": 4, "rope_theta": 500.0, "max_position_embeddings": 64,
             "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                              "original_max_position_embeddings": 32}}
    inv_freq, factor = inv_freq_from_config(llama)
    np.testing.assert_array_equal(inv_freq, llama3_inv_freq(16, 500.0, 8.0, 1.0, 4.0, 32))
    assert factor == 1.0
    dynamic = {"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 32,
               "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    np.testing.assert_array_equal(inv_freq_from_config(dynamic, seq_len=80)[0],
                                  dynamic_ntk_inv_freq(16, 10000.0, 2.0, 32, 80))
    np.testing.assert_array_equal(inv_freq_from_config(dynamic)[0], 10000.0 ** (-np.arange(0, 16, 2) / 16))
    partial = {"head_dim": 16, "partial_rotary_factor": 0.5, "rope_theta": 100.0}
    np.testing.assert_allclose(inv_freq_from_config(partial)[0], 100.0 ** (-np.arange(4) / 4), rtol=1e-15)
    yarn = {"head_dim": 8, "max_position_embeddings": 2400,
            "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 600, "attention_factor": 0.5}}
    inv_freq, factor = inv_freq_from_config(yarn)  # factor from the lengths: 2400 / 600 = 4
    np.testing.assert_allclose(inv_freq, [1.0, 0.0625, 0.0025, 0.00025], rtol=1e-12)
    assert factor == 0.5, "a stated attention_factor replaces the computed one"


@pytest.mark.parametrize("config", [
    {"head_dim": 8, "rope_scaling": {"rope_type": "linear"}},
    {"head_dim": 8, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
    {"head_dim": 8, "max_position_embeddings": 9, "rope_scaling": {"rope_type": "yarn", "factor": 2.0, "mscale": 1.0}},
    {"head_dim": 8, "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 4}},  # no factor at all
    {"head_dim": 8, "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 4,
                                     "original_max_position_embeddings": 4}},  # no long_factor
    {"head_dim": 8, "partial_rotary_factor": 0.25},  # 2 rotated dimensions: fine; 0.1 below is not
    {"head_dim": 8, "partial_rotary_factor": 0.1},
])
def test_config_dispatch_errors(config):
    if config.get("partial_rotary_factor") == 0.25:
        assert inv_freq_from_config(config)[0].shape == (1,)
        return
    with pytest.raises(ValueError):
        inv_freq_from_config(config)


# ---- llama3_frequency_bands

@given(st.sampled_from([2, 4, 8, 64, 128]), st.floats(2.0, 1e6), st.floats(0.1, 4.0), st.floats(0.1, 8.0),
       st.floats(1.0, 1e5))
def test_bands_say_which_rule_llama3_applies(head_dim, base, low, gap, length):
    high = low + gap
    bands = llama3_frequency_bands(head_dim, base, low, high, length)
    inv_freq = base ** (-np.arange(0, head_dim, 2) / head_dim)
    scaled = llama3_inv_freq(head_dim, base, 8.0, low, high, length)
    assert np.all(np.diff(bands) >= 0)
    np.testing.assert_array_equal(scaled[bands == 0], inv_freq[bands == 0])
    np.testing.assert_allclose(scaled[bands == 2], inv_freq[bands == 2] / 8.0, rtol=1e-15)
    for t in np.flatnonzero(bands == 1):  # wavelength from L/high to L/low, both ends included
        wavelength = 2 * math.pi / inv_freq[t]
        assert length / high <= wavelength <= length / low


def test_bands_at_the_thresholds():
    # base 4: wavelengths 2 pi, pi, pi / 2 (pairs of head_dim 6 turn at 4^(-2t/6)... use exact ones)
    inv_freq = 16.0 ** (-np.arange(0, 4, 2) / 4)  # [1, 0.25]: wavelengths 2 pi and 8 pi
    assert inv_freq.tolist() == [1.0, 0.25]
    # L / high = 2 pi exactly (not below: blended) and L / low = 8 pi exactly (not above: blended)
    length = 8 * math.pi
    assert llama3_frequency_bands(4, 16.0, 1.0, 4.0, length).tolist() == [1, 1]
    assert llama3_frequency_bands(4, 16.0, 1.0, 3.99, length).tolist() == [0, 1]
    assert llama3_frequency_bands(4, 16.0, 1.01, 4.0, length).tolist() == [1, 2]


def test_bands_take_any_base_above_zero():
    # base 1: every pair turns at frequency 1, wavelength 2 pi, between L / high = 5 and L / low = 10
    assert llama3_frequency_bands(6, 1.0, 1.0, 2.0, 10.0).tolist() == [1, 1, 1]


@pytest.mark.parametrize("args", [(3, 1e4, 1.0, 4.0, 8192), (4.5, 1e4, 1.0, 4.0, 8192), (True, 1e4, 1.0, 4.0, 8192),
                                  (4, 0.0, 1.0, 4.0, 8192), (4, 1e4, 0.0, 4.0, 8192), (4, 1e4, 2.0, 2.0, 8192),
                                  (4, 1e4, 1.0, 4.0, 0), ("8", 1e4, 1.0, 4.0, 8192)])
def test_bands_errors(args):
    with pytest.raises(ValueError):
        llama3_frequency_bands(*args)


# ---- LongRoPE

def test_longrope_switches_after_the_pretraining_length():
    rng = np.random.default_rng(1)
    short, long = 1 + rng.random(4), 1 + 9 * rng.random(4)
    plain = 500.0 ** (-np.arange(0, 8, 2) / 8)
    for seq_len, factors in ((None, short), (1, short), (64, short), (65, long), (10 ** 6, long)):
        inv_freq, _ = longrope_inv_freq(8, 500.0, short, long, 64, 256, seq_len)
        np.testing.assert_allclose(inv_freq, plain / factors, rtol=1e-14, err_msg=f"seq_len={seq_len}")


def test_longrope_attention_factor():
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, 256, 3)[1] == pytest.approx(math.sqrt(1 + math.log(4) /
                                                                                             math.log(64)))
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, 64, 3)[1] == 1.0
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, None, 3, factor=4.0)[1] == longrope_attention_factor(4.0, 64)
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, 256, 3, attention_factor=0.25)[1] == 0.25
    assert longrope_attention_factor(0.5, 64) == 1.0


def test_longrope_at_the_edges_of_its_contract():
    # base 1 (> 0): the plain frequencies are all 1, divided by the short factors
    np.testing.assert_array_equal(longrope_inv_freq(4, 1.0, [1.0, 2.0], [4.0, 8.0], 4096, 131072, 10)[0], [1.0, 0.5])
    # the smallest pretraining length, L = 2: seq_len 3 takes the long factor; s = 4, a = sqrt(1 + ln 4 / ln 2)
    inv_freq, a = longrope_inv_freq(2, 10.0, [1.0], [2.0], 2, 8, 3)
    assert inv_freq.tolist() == [0.5] and a == pytest.approx(math.sqrt(3.0), rel=1e-15)
    # s <= 1, from max_position = 1 (>= 1) or a given factor 0.5 (> 0): attention factor 1
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, 1, 3)[1] == 1.0
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, 16, 3)[1] == 1.0
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, None, 3, factor=0.5)[1] == 1.0
    assert longrope_inv_freq(2, 10.0, [1.0], [2.0], 64, 256, 3, attention_factor=0.5)[1] == 0.5
    # factors of any size > 0, held in float64
    np.testing.assert_allclose(longrope_inv_freq(4, 10000.0, [1e-40, 1e40], [1.0, 1.0], 64, 256, 3)[0],
                               [1e40, 1e-42], rtol=1e-14)


@pytest.mark.parametrize("args, kwargs", [
    ((3, 10.0, [1.0], [1.0], 64, 256, 3), {}),
    ((0, 10.0, [], [], 64, 256, 3), {}),                 # head_dim 0: empty factor lists would fit
    (("4", 10.0, [1.0, 1.0], [1.0, 1.0], 64, 256, 3), {}),
    ((4, 10.0, [1.0], [1.0, 1.0], 64, 256, 3), {}),      # a short list
    ((4, 10.0, [[1.0, 1.0]], [1.0, 1.0], 64, 256, 3), {}),  # broadcasts, but is not (d/2,)
    ((4, 10.0, [1.0, 0.0], [1.0, 1.0], 64, 256, 3), {}),
    ((4, 0.0, [1.0, 1.0], [1.0, 1.0], 64, 256, 3), {}),
    ((4, 10.0, [1.0, 1.0], [1.0, 1.0], 1, 256, 3), {}),
    ((4, 10.0, [1.0, 1.0], [1.0, 1.0], 64.5, 256, 3), {}),
    ((4, 10.0, [1.0, 1.0], [1.0, 1.0], 64, None, 3), {}),
    ((4, 10.0, [1.0, 1.0], [1.0, 1.0], 64, 256, 0), {}),
    ((4, 10.0, [1.0, 1.0], [1.0, 1.0], 64, 256, 3), {"factor": 0.0}),
    ((4, 10.0, [1.0, 1.0], [1.0, 1.0], 64, 256, 3), {"attention_factor": -1.0}),
])
def test_longrope_errors(args, kwargs):
    with pytest.raises(ValueError):
        longrope_inv_freq(*args, **kwargs)


# ---- stale keys

def test_rotation_lengths():
    assert rotation_lengths(1, 1).tolist() == [1]
    assert rotation_lengths(4, 4).tolist() == [4, 4, 4, 4]
    assert rotation_lengths(5, 1).tolist() == [1, 2, 3, 4, 5]


@given(st.integers(1, 12), st.data())
def test_cached_keys_one_token_at_a_time(num_tokens, data):
    prompt_len = data.draw(st.integers(1, num_tokens))
    rng = np.random.default_rng(num_tokens * 31 + prompt_len)
    keys = rng.normal(size=(num_tokens, 6))
    calls = []

    def inv_freq_for_length(length):
        calls.append(length)
        return np.array([1.0, 0.3, 0.01]) / length

    cache = cached_keys(keys, prompt_len, inv_freq_for_length)
    assert sorted(calls) == sorted(set(calls)) == list(range(prompt_len, num_tokens + 1)), "once per length"
    pairs = [(0, 3), (1, 4), (2, 5)]
    for t in range(num_tokens):  # what one forward pass of length max(P, t + 1) gives key t
        theta = np.array([1.0, 0.3, 0.01]) / max(prompt_len, t + 1)
        np.testing.assert_allclose(cache[t], rotate_pairs(keys[t:t + 1], [t], pairs, theta)[0], atol=1e-12)


def test_cached_keys_with_fixed_frequencies_is_plain_rope_and_batches():
    rng = np.random.default_rng(2)
    keys = rng.normal(size=(2, 3, 7, 8))
    plain = lambda length: 100.0 ** (-np.arange(0, 8, 2) / 8)  # noqa: E731
    before = keys.copy()
    np.testing.assert_allclose(cached_keys(keys, 3, plain), apply_rope_half_split(keys, np.arange(7), 100.0),
                               atol=1e-12)
    np.testing.assert_array_equal(keys, before)


def test_stale_keys_change_the_logits():
    """The point of the exercise: recomputing the stale keys with today's frequencies changes the scores."""
    rng = np.random.default_rng(3)
    keys, query = rng.normal(size=(12, 8)), rng.normal(size=(1, 8))
    frequencies = lambda length: dynamic_ntk_inv_freq(8, 100.0, 4.0, 6, length)  # noqa: E731
    cache = cached_keys(keys, 4, frequencies)
    fresh = apply_rope_half_split(keys, np.arange(12), 100.0 * (4 * 12 / 6 - 3) ** (8 / 6))
    rotated_query = apply_rope_half_split(query, [11], 100.0 * (4 * 12 / 6 - 3) ** (8 / 6))
    stale = stale_keys(12, 4, 6)
    np.testing.assert_allclose(cache[~stale], fresh[~stale], atol=1e-12)
    gaps = np.abs(rotated_query @ cache.T - rotated_query @ fresh.T)[0]
    assert stale[0] and gaps[0] == 0, "position 0 turns by 0 with any frequencies: stale, and still right"
    assert np.all(gaps[1:][stale[1:]] > 1e-6) and np.all(gaps[~stale] < 1e-9), gaps


def test_stale_keys_known_values():
    assert stale_keys(1, 1, 1).tolist() == [False]
    assert stale_keys(5, 5, 4).tolist() == [False] * 5, "one prefill longer than L: all rotated for 5"
    assert stale_keys(5, 4, 4).tolist() == [True] * 4 + [False]
    assert stale_keys(7, 2, 5).tolist() == [True] * 6 + [False]
    assert stale_keys(7, 6, 5).tolist() == [True] * 6 + [False]


@pytest.mark.parametrize("call", [
    lambda: rotation_lengths(0, 1), lambda: rotation_lengths(3, 4), lambda: rotation_lengths(3, 0),
    lambda: rotation_lengths(3.0, 2), lambda: rotation_lengths(3, 2.5), lambda: rotation_lengths(True, 1),
    lambda: cached_keys(np.ones(4), 1, lambda n: np.ones(2)),
    lambda: cached_keys(np.ones((1, 3)), 1, lambda n: np.ones(1)),
    lambda: cached_keys(np.ones((2, 4)), 3, lambda n: np.ones(2)),
    lambda: cached_keys(np.ones((2, 4)), 0, lambda n: np.ones(2)),
    lambda: cached_keys(np.ones((2, 4)), 1, lambda n: np.ones(1)),     # broadcasts, but is not (d/2,)
    lambda: cached_keys(np.ones((2, 4)), 1, lambda n: np.ones((1, 2))),
    lambda: stale_keys(3, 2, 0), lambda: stale_keys(3, 2, 2.5), lambda: stale_keys(3, 4, 2), lambda: stale_keys(3, 0, 2),
])
def test_stale_cache_errors(call):
    with pytest.raises(ValueError):
        call()


# ---- partial and proportional rotary

@given(st.sampled_from([(8, 0.5), (8, 0.25), (8, 1.0), (12, 1 / 3), (64, 0.25), (10, 0.4)]), st.integers(1, 4))
def test_partial_rotary_touches_the_first_dimensions(shape, length):
    dim, fraction = shape
    rng = np.random.default_rng(dim * 7 + length)
    x, positions = rng.normal(size=(length, dim)), rng.normal(size=length) * 9
    rotary = int(dim * fraction)
    half = rotary // 2
    theta = 10000.0 ** (-np.arange(half) * 2 / rotary)
    expected = rotate_pairs(x, positions, [(t, t + half) for t in range(half)], theta)
    np.testing.assert_allclose(apply_partial_rotary(x, positions, fraction), expected, atol=1e-12)


@given(st.sampled_from([(8, 0.5), (8, 0.25), (8, 1.0), (12, 1 / 3), (64, 0.25), (10, 0.5), (6, 0.2)]),
       st.integers(1, 4))
def test_proportional_rope_turns_the_fastest_pairs_of_the_whole_head(shape, length):
    dim, fraction = shape
    rng = np.random.default_rng(dim * 5 + length)
    x, positions = rng.normal(size=(length, dim)), rng.normal(size=length) * 9
    turning = int(fraction * dim // 2)
    theta = 10000.0 ** (-np.arange(turning) * 2 / dim)
    expected = rotate_pairs(x, positions, [(t, t + dim // 2) for t in range(turning)], theta)
    np.testing.assert_allclose(apply_proportional_rope(x, positions, fraction), expected, atol=1e-12)


def test_whole_rotation_is_plain_rope_and_inputs_stay():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 5, 8))
    before = x.copy()
    plain = apply_rope_half_split(x, np.arange(5) * 3.0)
    np.testing.assert_allclose(apply_partial_rotary(x, np.arange(5) * 3.0, 1.0), plain, atol=1e-12)
    np.testing.assert_allclose(apply_proportional_rope(x, np.arange(5) * 3.0, 1.0), plain, atol=1e-12)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("function", [apply_partial_rotary, apply_proportional_rope])
@pytest.mark.parametrize("x, positions, fraction", [
    (np.ones(8), [0.0], 0.5),
    (np.ones((2, 8)), [0.0], 0.5),               # broadcasts, but is not (L,)
    (np.ones((1, 8)), [[0.0]], 0.5),
    (np.ones((1, 8)), [0.0], 0.0),
    (np.ones((1, 8)), [0.0], 1.5),
    (np.ones((1, 8)), [0.0], True),
])
def test_rotary_errors(function, x, positions, fraction):
    with pytest.raises(ValueError):
        function(x, positions, fraction)


@pytest.mark.parametrize("dim, fraction", [(8, 0.125), (10, 0.5), (6, 0.2), (6, 0.5), (8, 0.1)])
def test_partial_rotary_needs_an_even_rotated_part(dim, fraction):
    """1, 5, 1, 3 and 0 rotated dimensions: no pairing (3 would broadcast its one pair); proportional RoPE takes
    these (it pairs the whole head)."""
    with pytest.raises(ValueError):
        apply_partial_rotary(np.ones((1, dim)), [1.0], fraction)
    if dim % 2 == 0:
        apply_proportional_rope(np.ones((1, dim)), [1.0], fraction)


def test_proportional_needs_an_even_head():
    with pytest.raises(ValueError):
        apply_proportional_rope(np.ones((1, 7)), [1.0], 1.0)


# ---- DeepSeek's YaRN

@given(st.floats(1e-3, 1e4), st.floats(0.0, 3.0))
def test_yarn_mscale(scale, mscale):
    expected = 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0
    assert yarn_mscale(scale, mscale) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("factor, mscale, mscale_all_dim, expected_cos_sin, expected_extra", [
    (40.0, 1.0, 1.0, 1.0, (0.1 * math.log(40) + 1) ** 2),           # DeepSeek-V3: all to the softmax
    (40.0, 0.707, 0.707, 1.0, (0.0707 * math.log(40) + 1) ** 2),
    (40.0, 1.0, 0.8, (0.1 * math.log(40) + 1) / (0.08 * math.log(40) + 1), (0.08 * math.log(40) + 1) ** 2),
    (40.0, None, None, 0.1 * math.log(40) + 1, 1.0),                 # plain YaRN
    (40.0, 0.707, 0.0, 0.1 * math.log(40) + 1, 1.0),                 # HF: mscale alone falls back to mu(s, 1)
    (40.0, 0.0, 1.0, 0.1 * math.log(40) + 1, (0.1 * math.log(40) + 1) ** 2),
    (0.5, 1.0, 1.0, 1.0, 1.0),
    (2.0, 1.0, 0.5, (0.1 * math.log(2) + 1) / (0.05 * math.log(2) + 1), (0.05 * math.log(2) + 1) ** 2),
])
def test_deepseek_scales(factor, mscale, mscale_all_dim, expected_cos_sin, expected_extra):
    cos_sin, softmax_scale = deepseek_yarn_scales(factor, mscale, mscale_all_dim, 192)
    assert cos_sin == pytest.approx(expected_cos_sin, rel=1e-14)
    assert softmax_scale == pytest.approx(expected_extra / math.sqrt(192), rel=1e-14)


@pytest.mark.parametrize("args", [(0.0, 1.0, 1.0, 192), (40.0, -1.0, 1.0, 192), (40.0, 1.0, -0.5, 192),
                                  (40.0, 1.0, 1.0, 0), (40.0, 1.0, 1.0, 191.5), (40.0, 1.0, 1.0, True)])
def test_deepseek_errors(args):
    with pytest.raises(ValueError):
        deepseek_yarn_scales(*args)
    with pytest.raises(ValueError):
        yarn_mscale(0.0)
