"""posenc-advanced exercise 6: RoPE scaling for long context (linear, dynamic NTK, YaRN, llama3).

Sources:
- Hugging Face transformers==5.23.0 (run with torch==2.13.0+cpu, in a scratch venv outside the
  repository), src/transformers/modeling_rope_utils.py: ``ROPE_INIT_FUNCTIONS["linear"]``
  (``_compute_linear_scaling_rope_parameters``), ``["dynamic"]``
  (``_compute_dynamic_ntk_parameters``), ``["yarn"]`` (``_compute_yarn_parameters``), ``["llama3"]``
  (``_compute_llama3_parameters``), called with the model configs named in ``KNOWN``; the literals
  are HF's float32 outputs, printed to 10 significant digits. HF computes the frequencies in
  float32 (``torch.arange(...).float()``), so those literals are compared at rtol=1e-6 (the largest
  relative difference to an exact float64 computation was 3.2e-7, on Llama 3.1); every other
  expected value here is computed in float64 and compared at the notebook's tolerance or tighter.
- Chen et al. (2023), "Extending Context Window of Large Language Models via Positional
  Interpolation": position m is fed as m / s.
- bloc97 (2023), "NTK-Aware Scaled RoPE", reddit r/LocalLLaMA: b' = b s^(d/(d-2)), which divides the
  slowest pair by exactly s; emozilla (2023), dynamic NTK.
- Peng et al. (2023), "YaRN: Efficient Context Window Extension of Large Language Models":
  beta = 32, alpha = 1 turns, sqrt(1/t) = 0.1 ln s + 1.
- Llama 3.1 8B's config.json, rope_scaling: factor 8, low_freq_factor 1, high_freq_factor 4,
  original_max_position_embeddings 8192 (HF's ``_compute_llama3_parameters`` notes the same numbers
  as those of the original implementation).
"""

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_solutions import rope_scaling

from ..helpers.advanced_answers import rope_scaling as rope_scaling_answers

# No deadlines: the machine is shared and noisy. CI runs a fixed, derandomised set of examples.
settings.register_profile("dev", deadline=None, max_examples=60)
settings.register_profile("ci", deadline=None, max_examples=100, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Loaded by path, not through the package: tests/helpers/advanced_answers/__init__.py merges every module.
ALTERNATIVES = rope_scaling_answers.ALTERNATIVES
NAMES = ("linear_scaled_inv_freq", "dynamic_ntk_inv_freq", "yarn_inv_freq", "llama3_inv_freq")


def _alternative(name):
    namespace = {"np": np, "math": math}
    exec(ALTERNATIVES[name], namespace)
    return namespace[name]


def _inv_freq(name, args, function=None):
    """The inverse frequencies of `name` (YaRN's first element), as a float64 array."""
    result = (function or getattr(rope_scaling, name))(*args)
    return np.asarray(result[0] if name == "yarn_inv_freq" else result, dtype=float)


# ---- naive implementations, written from the formulas, one pair at a time

def _plain(d, b, t):
    return b ** (-2.0 * t / d)


def _naive_linear(d, b, s):
    return [_plain(d, b, t) / s for t in range(d // 2)]


def _naive_dynamic(d, b, s, L, n):
    n = L if n < L else n
    new_base = b * (s * n / L - (s - 1)) ** (d / (d - 2))
    return [_plain(d, new_base, t) for t in range(d // 2)]


def _naive_yarn(d, b, s, L, fast=32.0, slow=1.0):
    def pair_of(turns):  # the pair index t at which L / wavelength_t = turns
        return d * math.log(L / (turns * 2 * math.pi)) / (2 * math.log(b))
    low, high = max(math.floor(pair_of(fast)), 0), min(math.ceil(pair_of(slow)), d - 1)
    if low == high:
        high += 0.001
    out = []
    for t in range(d // 2):
        ramp = min(1.0, max(0.0, (t - low) / (high - low)))
        out.append(ramp * _plain(d, b, t) / s + (1 - ramp) * _plain(d, b, t))
    return out, (1.0 if s <= 1 else 0.1 * math.log(s) + 1)


def _naive_llama3(d, b, s, alpha, beta, L):
    out = []
    for t in range(d // 2):
        theta = _plain(d, b, t)
        wavelength = 2 * math.pi / theta
        if wavelength > L / alpha:
            out.append(theta / s)
        elif wavelength < L / beta:
            out.append(theta)
        else:
            g = (L / wavelength - alpha) / (beta - alpha)
            out.append((1 - g) * theta / s + g * theta)
    return out


# ---- known values: transformers==5.23.0, modeling_rope_utils, each row's config; rtol=1e-6

KNOWN = [  # (function, args, indices, HF inv_freq at those indices, HF attention_factor)
    # _compute_llama3_parameters, Llama-3.1-8B config.json: hidden 4096 / 32 heads, rope_theta
    # 500000, rope_scaling {factor 8, low_freq_factor 1, high_freq_factor 4,
    # original_max_position_embeddings 8192}
    ("llama3_inv_freq", (128, 500000.0, 8.0, 1.0, 4.0, 8192),
     [0, 20, 28, 29, 30, 32, 34, 35, 40, 63],
     [1, 0.01656044088, 0.003211446106, 0.00216657063, 0.001371893683, 0.000524846022,
      0.0001785077911, 9.556212171e-05, 3.428102355e-05, 3.068925878e-07], 1.0),
    # _compute_llama3_parameters, Llama-3.2-1B config.json: head_dim 64, rope_theta 500000,
    # rope_scaling {factor 32, low_freq_factor 1, high_freq_factor 4, original 8192}
    ("llama3_inv_freq", (64, 500000.0, 32.0, 1.0, 4.0, 8192), [0, 13, 14, 15, 16, 17, 18, 31],
     [1, 0.00483942125, 0.003211446106, 0.001290548011, 0.0004295567051, 9.708286234e-05,
      1.946163866e-05, 9.41830649e-08], 1.0),
    # _compute_llama3_parameters, a LlamaConfig with head_dim 32, rope_theta 10000, rope_parameters
    # {factor 4, low_freq_factor 2, high_freq_factor 8, original_max_position_embeddings 2048}
    ("llama3_inv_freq", (32, 10000.0, 4.0, 2.0, 8.0, 2048), list(range(16)),
     [1, 0.5623413324, 0.3162277639, 0.1778279394, 0.1000000015, 0.05623412877, 0.03162277862,
      0.01288427878, 0.004074366298, 0.001405853312, 0.0007905694656, 0.0004445698578,
      0.0002500000119, 0.0001405853254, 7.905694656e-05, 4.445698505e-05], 1.0),
    # _compute_yarn_parameters, Qwen2.5-7B-Instruct config.json (hidden 3584 / 28 heads, rope_theta
    # 1e6) with its model card's rope_scaling {"type": "yarn", "factor": 4.0,
    # "original_max_position_embeddings": 32768}
    ("yarn_inv_freq", (128, 1000000.0, 4.0, 32768), [0, 12, 23, 24, 30, 31, 39, 40, 41, 63],
     [1, 0.07498941571, 0.006978305988, 0.005375321489, 0.001064360957, 0.0008029597811,
      6.490394298e-05, 4.445698505e-05, 3.582531644e-05, 3.102344408e-07], 1.138629436111989),
    # _compute_yarn_parameters, LlamaConfigs with rope_parameters {rope_type "yarn", factor,
    # original_max_position_embeddings, beta_fast, beta_slow}: high within [d/2, d - 1] ...
    ("yarn_inv_freq", (16, 100.0, 8.0, 4096, 32.0, 1.0), list(range(8)),
     [1, 0.5623413324, 0.3162277639, 0.1778279394, 0.1000000015, 0.05623412877, 0.02766993083,
      0.0133370962], 1.2079441541679836),
    # ... low == high == d - 1 (every pair kept) ...
    ("yarn_inv_freq", (16, 20.0, 8.0, 65536, 32.0, 1.0), list(range(8)),
     [1, 0.687656045, 0.4728707969, 0.3251724541, 0.2236067951, 0.1537645608, 0.1057371199,
      0.07271077484], 1.2079441541679836),
    # ... low == high == 0 (the +0.001 guard: pair 0 kept, the others divided) ...
    ("yarn_inv_freq", (8, 10000.0, 2.0, 6, 32.0, 1.0), list(range(4)),
     [1, 0.05000000075, 0.004999999888, 0.0005000000237], 1.0693147180559945),
    # ... and other betas
    ("yarn_inv_freq", (32, 10000.0, 16.0, 2048, 8.0, 2.0), list(range(16)),
     [1, 0.5623413324, 0.3162277639, 0.1778279394, 0.1000000015, 0.05623412877, 0.03162277862,
      0.01222566981, 0.003749999683, 0.0003514633281, 0.0001976423664, 0.0001111424644,
      6.250000297e-05, 3.514633136e-05, 1.976423664e-05, 1.111424626e-05], 1.2772588722239782),
    # _compute_linear_scaling_rope_parameters, Llama-2-7B (hidden 4096 / 32 heads, rope_theta
    # 10000) with rope_scaling {"type": "linear", "factor": 2.0} and 4.0, and a LlamaConfig with
    # head_dim 10, rope_theta 500, factor 2.5
    ("linear_scaled_inv_freq", (128, 10000.0, 2.0), [0, 1, 16, 32, 63],
     [0.5, 0.4329821765, 0.05000000075, 0.004999999888, 5.773909652e-05], None),
    ("linear_scaled_inv_freq", (128, 10000.0, 4.0), [0, 1, 16, 32, 63],
     [0.25, 0.2164910883, 0.02500000037, 0.002499999944, 2.886954826e-05], None),
    ("linear_scaled_inv_freq", (10, 500.0, 2.5), list(range(5)),
     [0.400000006, 0.1154159904, 0.03330212831, 0.009608994238, 0.002772579202], None),
    # _compute_dynamic_ntk_parameters(config, seq_len=...), Llama-2-7B (max_position_embeddings
    # 4096) with rope_scaling {"type": "dynamic", "factor": 2.0 or 4.0}; seq_len 2048 is clamped
    ("dynamic_ntk_inv_freq", (128, 10000.0, 2.0, 4096, 8192), [0, 1, 16, 32, 63],
     [1, 0.8509942889, 0.07565303147, 0.005723381881, 3.849273344e-05], None),
    ("dynamic_ntk_inv_freq", (128, 10000.0, 2.0, 4096, 2048), [0, 1, 16, 32, 63],
     [1, 0.8659643531, 0.1000000015, 0.009999999776, 0.000115478193], None),
    ("dynamic_ntk_inv_freq", (128, 10000.0, 4.0, 4096, 16384), [0, 1, 16, 32, 63],
     [1, 0.8314159513, 0.05213072151, 0.002717612311, 8.882938346e-06], None),
    ("dynamic_ntk_inv_freq", (128, 10000.0, 4.0, 4096, 5000), [0, 1, 16, 32, 63],
     [1, 0.8573101759, 0.08515452594, 0.007251293398, 6.133282295e-05], None),
    # _compute_dynamic_ntk_parameters, LlamaConfigs: head_dim 6, theta 100, factor 3,
    # max_position_embeddings 100, seq_len 250; head_dim 16, theta 1e4, factor 8, 512, seq_len 1000
    ("dynamic_ntk_inv_freq", (6, 100.0, 3.0, 100, 250), [0, 1, 2],
     [1, 0.09186539799, 0.008439251222], None),
    ("dynamic_ntk_inv_freq", (16, 10000.0, 8.0, 512, 1000), list(range(8)),
     [1, 0.232444942, 0.05403065681, 0.01255915407, 0.002919312101, 0.0006785793812,
      0.0001577323565, 3.666408884e-05], None),
]


@pytest.mark.parametrize("use_alternative", [False, True], ids=["reference", "alternative"])
@pytest.mark.parametrize("name, args, indices, expected, attention_factor", KNOWN)
def test_matches_transformers(name, args, indices, expected, attention_factor, use_alternative):
    function = _alternative(name) if use_alternative else getattr(rope_scaling, name)
    result = function(*args)
    freqs = np.asarray(result[0] if name == "yarn_inv_freq" else result)
    assert freqs.shape == (args[0] // 2,)
    np.testing.assert_allclose(freqs[indices], expected, rtol=1e-6, atol=0)
    if name == "yarn_inv_freq":
        assert result[1] == pytest.approx(attention_factor, rel=1e-15)


def test_llama31_pair_counts():
    """Exercise 6 (a): Llama 3.1 keeps 29 pairs, blends 6 and divides 29 by 8 (thresholds 2048 and
    8192 tokens; 64 ln(2048 / 2 pi) / ln 500000 = 28.2, 64 ln(8192 / 2 pi) / ln 500000 = 34.98)."""
    plain = np.array([_plain(128, 500000.0, t) for t in range(64)])
    got = rope_scaling.llama3_inv_freq(128, 500000.0, 8.0, 1.0, 4.0, 8192)
    ratio = plain / got
    assert np.sum(np.isclose(ratio, 1.0, rtol=1e-12)) == 29
    assert np.sum(np.isclose(ratio, 8.0, rtol=1e-12)) == 29
    assert np.all(np.isclose(ratio[:29], 1.0, rtol=1e-12)) and np.all(ratio[29:35] > 1.0)
    assert np.all(ratio[29:35] < 8.0)


# ---- the worked examples of the notebook, by hand

def test_worked_examples():
    np.testing.assert_allclose(rope_scaling.linear_scaled_inv_freq(4, 10000.0, 2.0), [0.5, 0.005],
                               rtol=1e-14)
    np.testing.assert_allclose(rope_scaling.dynamic_ntk_inv_freq(4, 10000.0, 2.0, 8, 16),
                               [1.0, 1 / 300], rtol=1e-14)
    np.testing.assert_allclose(rope_scaling.dynamic_ntk_inv_freq(4, 10000.0, 2.0, 8, 5),
                               [1.0, 0.01], rtol=1e-14)
    freqs, attention_factor = rope_scaling.yarn_inv_freq(8, 10000.0, 4.0, 600)
    np.testing.assert_allclose(freqs, [1.0, 0.0625, 0.0025, 0.00025], rtol=1e-14)
    assert attention_factor == pytest.approx(1.1386294361119891, rel=1e-15)
    g = (1000 / (200 * math.pi) - 1) / 3  # 1000 / wavelength 628.3, minus 1, over 4 - 1
    np.testing.assert_allclose(rope_scaling.llama3_inv_freq(4, 10000.0, 8.0, 1.0, 4.0, 1000),
                               [1.0, 0.01 * ((1 - g) / 8 + g)], rtol=1e-14)
    # position interpolation with L = 4096, s = 8: position 32767 is seen as 4095.875
    angle = 32767 * rope_scaling.linear_scaled_inv_freq(128, 10000.0, 8.0)
    np.testing.assert_allclose(angle, 4095.875 * np.array([_plain(128, 10000.0, t)
                                                           for t in range(64)]), rtol=1e-13)


# ---- against the naive formulas, and the alternatives against the reference, on random inputs

even = st.integers(1, 128).map(lambda n: 2 * n)
bases = st.sampled_from([1.5, 10.0, 100.0, 500.0, 10000.0, 500000.0, 1e6, 1e7])
factors = st.floats(1.0, 64.0)
lengths = st.integers(1, 200000)


@given(even, bases, factors)
def test_linear_naive(d, b, s):
    np.testing.assert_allclose(rope_scaling.linear_scaled_inv_freq(d, b, s), _naive_linear(d, b, s),
                               rtol=1e-12, atol=0)


@given(even.filter(lambda d: d >= 4), bases, factors, lengths, lengths)
def test_dynamic_naive(d, b, s, L, n):
    np.testing.assert_allclose(rope_scaling.dynamic_ntk_inv_freq(d, b, s, L, n),
                               _naive_dynamic(d, b, s, L, n), rtol=1e-12, atol=0)


@given(even, bases, factors, lengths,
       st.sampled_from([(32.0, 1.0), (16.0, 2.0), (8.0, 0.5), (64.0, 4.0)]))
def test_yarn_naive(d, b, s, L, betas):
    freqs, attention_factor = rope_scaling.yarn_inv_freq(d, b, s, L, *betas)
    expected, expected_factor = _naive_yarn(d, b, s, L, *betas)
    np.testing.assert_allclose(freqs, expected, rtol=1e-12, atol=0)
    assert attention_factor == pytest.approx(expected_factor, rel=1e-15)
    assert isinstance(attention_factor, float)


@given(even, bases, factors, lengths,
       st.sampled_from([(1.0, 4.0), (2.0, 8.0), (0.5, 1.0), (1.0, 32.0)]))
def test_llama3_naive(d, b, s, L, alpha_beta):
    np.testing.assert_allclose(rope_scaling.llama3_inv_freq(d, b, s, *alpha_beta, L),
                               _naive_llama3(d, b, s, *alpha_beta, L), rtol=1e-12, atol=0)


ARGUMENTS = {  # name: strategy of argument tuples
    "linear_scaled_inv_freq": st.tuples(even, bases, factors),
    "dynamic_ntk_inv_freq": st.tuples(even.filter(lambda d: d >= 4), bases, factors, lengths,
                                      lengths),
    "yarn_inv_freq": st.tuples(even, bases, factors, lengths, st.sampled_from([32.0, 16.0]),
                               st.sampled_from([1.0, 2.0])),
    "llama3_inv_freq": st.tuples(even, bases, factors, st.sampled_from([1.0, 2.0]),
                                 st.sampled_from([4.0, 8.0]), lengths),
}


@pytest.mark.parametrize("name", NAMES)
def test_alternatives_agree(name):
    alternative = _alternative(name)

    @given(ARGUMENTS[name])
    def check(args):
        np.testing.assert_allclose(_inv_freq(name, args, alternative), _inv_freq(name, args),
                                   rtol=1e-10, atol=0)
        if name == "yarn_inv_freq":
            assert alternative(*args)[1] == pytest.approx(rope_scaling.yarn_inv_freq(*args)[1])

    check()


# ---- properties that explain the rules

@given(even.filter(lambda d: d >= 4), bases, factors, lengths, st.floats(1.0, 50.0))
def test_dynamic_is_ntk_with_the_effective_factor(d, b, s, L, ratio):
    """Dynamic NTK at length n > L is the static NTK rule b s'^(d/(d-2)) with s' = s n/L - (s-1):
    the fastest pair is kept and the slowest one divided by exactly s'; below L it is plain RoPE."""
    n = math.ceil(L * ratio)
    effective = s * max(n, L) / L - (s - 1)
    freqs = rope_scaling.dynamic_ntk_inv_freq(d, b, s, L, n)
    assert freqs[0] == 1.0
    assert freqs[-1] == pytest.approx(_plain(d, b, d // 2 - 1) / effective, rel=1e-11)
    np.testing.assert_allclose(rope_scaling.dynamic_ntk_inv_freq(d, b, s, L, max(1, L // 2)),
                               [_plain(d, b, t) for t in range(d // 2)], rtol=1e-12)


@pytest.mark.parametrize("name", ["yarn_inv_freq", "llama3_inv_freq"])
@given(d=even, b=bases.filter(lambda b: b > 1), s=st.floats(1.5, 64.0), L=lengths)
def test_ramps_lie_between_keep_and_interpolate(name, d, b, s, L):
    """Every pair is between interpolated (theta / s) and kept (theta), and the ratio kept / new
    never decreases with t: faster pairs are never interpolated more than slower ones."""
    args = (d, b, s, L) if name == "yarn_inv_freq" else (d, b, s, 1.0, 4.0, L)
    freqs = _inv_freq(name, args)
    plain = np.array([_plain(d, b, t) for t in range(d // 2)])
    ratio = plain / freqs
    assert np.all(ratio >= 1 - 1e-12) and np.all(ratio <= s * (1 + 1e-12))
    assert np.all(np.diff(ratio) >= -1e-9 * s)


@pytest.mark.parametrize("name, args", [
    ("linear_scaled_inv_freq", (16, 10000.0, 1.0)),
    ("yarn_inv_freq", (16, 10000.0, 1.0, 2048)),
    ("llama3_inv_freq", (16, 10000.0, 1.0, 1.0, 4.0, 2048)),
])
def test_factor_one_is_plain_rope(name, args):
    """(Not dynamic NTK: with factor 1 its bracket is seq_len / L, which still raises the base.)"""
    np.testing.assert_allclose(_inv_freq(name, args), [_plain(16, 10000.0, t) for t in range(8)],
                               rtol=1e-12)
    if name == "yarn_inv_freq":
        assert rope_scaling.yarn_inv_freq(*args)[1] == 1.0


@pytest.mark.parametrize("name, args", [
    ("linear_scaled_inv_freq", (6, 0.5, 2.0)),
    ("linear_scaled_inv_freq", (6, 1.0, 2.0)),
    ("dynamic_ntk_inv_freq", (8, 0.5, 2.0, 8, 16)),
    ("dynamic_ntk_inv_freq", (8, 1.0, 2.0, 8, 16)),
    ("yarn_inv_freq", (8, 0.5, 2.0, 100)),                 # low = 4, high = -15: ramp 4/19 .. 1/19
    ("yarn_inv_freq", (8, 10000.0, 4.0, 1)),               # L = 1: low = high = 0, high becomes 0.001
    ("llama3_inv_freq", (8, 0.5, 4.0, 1.0, 4.0, 20)),
    ("llama3_inv_freq", (8, 1.0, 4.0, 1.0, 4.0, 20)),      # every wavelength 2 pi: all blended
    ("llama3_inv_freq", (8, 10000.0, 4.0, 1.0, 4.0, 1)),
])
def test_the_smallest_allowed_base_and_trained_length(name, args):
    """The contract's boundaries: any base > 0 (YaRN: other than 1), base 1 included where allowed,
    and original_max_position = 1; each rule is its formula there too."""
    naive = {"linear_scaled_inv_freq": _naive_linear, "dynamic_ntk_inv_freq": _naive_dynamic,
             "yarn_inv_freq": lambda *a: _naive_yarn(*a)[0], "llama3_inv_freq": _naive_llama3}[name]
    np.testing.assert_allclose(_inv_freq(name, args), naive(*args), rtol=1e-12, atol=0)


# ---- errors, types, no shared state

BAD = [  # (function, args): each must raise ValueError
    ("linear_scaled_inv_freq", (7, 10000.0, 2.0)),
    ("linear_scaled_inv_freq", (0, 10000.0, 2.0)),
    ("linear_scaled_inv_freq", (-2, 10000.0, 2.0)),
    ("linear_scaled_inv_freq", (7.5, 10000.0, 2.0)),
    ("linear_scaled_inv_freq", (8, 0.0, 2.0)),
    ("linear_scaled_inv_freq", (8, -10.0, 2.0)),
    ("linear_scaled_inv_freq", (8, 10000.0, 0.5)),
    ("dynamic_ntk_inv_freq", (2, 10000.0, 2.0, 4096, 8192)),
    ("dynamic_ntk_inv_freq", (5, 10000.0, 2.0, 4096, 8192)),
    ("dynamic_ntk_inv_freq", (8, 0.0, 2.0, 4096, 8192)),
    ("dynamic_ntk_inv_freq", (8, 10000.0, 0.99, 4096, 8192)),
    ("dynamic_ntk_inv_freq", (8, 10000.0, 2.0, 0, 8192)),
    ("dynamic_ntk_inv_freq", (8, 10000.0, 2.0, 4096, 0)),
    ("yarn_inv_freq", (9, 10000.0, 4.0, 4096)),
    ("yarn_inv_freq", (0, 10000.0, 4.0, 4096)),
    ("yarn_inv_freq", (8, 0.0, 4.0, 4096)),
    ("yarn_inv_freq", (8, 1.0, 4.0, 4096)),
    ("yarn_inv_freq", (8, 10000.0, 0.5, 4096)),
    ("yarn_inv_freq", (8, 10000.0, 4.0, 0)),
    ("yarn_inv_freq", (8, 10000.0, 4.0, 4096, 1.0, 1.0)),
    ("yarn_inv_freq", (8, 10000.0, 4.0, 4096, 1.0, 32.0)),
    ("yarn_inv_freq", (8, 10000.0, 4.0, 4096, 32.0, 0.0)),
    ("llama3_inv_freq", (3, 500000.0, 8.0, 1.0, 4.0, 8192)),
    ("llama3_inv_freq", (8, -1.0, 8.0, 1.0, 4.0, 8192)),
    ("llama3_inv_freq", (8, 500000.0, 0.5, 1.0, 4.0, 8192)),
    ("llama3_inv_freq", (8, 500000.0, 8.0, 0.0, 4.0, 8192)),
    ("llama3_inv_freq", (8, 500000.0, 8.0, 4.0, 4.0, 8192)),
    ("llama3_inv_freq", (8, 500000.0, 8.0, 4.0, 1.0, 8192)),
    ("llama3_inv_freq", (8, 500000.0, 8.0, 1.0, 4.0, 0)),
]


@pytest.mark.parametrize("use_alternative", [False, True], ids=["reference", "alternative"])
@pytest.mark.parametrize("name, args", BAD)
def test_value_errors(name, args, use_alternative):
    function = _alternative(name) if use_alternative else getattr(rope_scaling, name)
    with pytest.raises(ValueError):
        function(*args)


@pytest.mark.parametrize("name, args", [
    ("linear_scaled_inv_freq", (np.int64(16), np.float64(10000.0), np.int64(2))),
    ("dynamic_ntk_inv_freq", (np.int64(16), np.float32(10000.0), 2, np.int64(64), np.int64(100))),
    ("yarn_inv_freq", (np.int64(16), 10000, 2, np.int64(64))),
    ("llama3_inv_freq", (np.int64(16), 10000, 2, 1, 4, np.int64(64))),
])
def test_numpy_scalars_and_fresh_arrays(name, args):
    """numpy and integer scalars are accepted; each call returns a new float64 array."""
    first, second = _inv_freq(name, args), _inv_freq(name, args)
    result = getattr(rope_scaling, name)(*args)
    freqs = result[0] if name == "yarn_inv_freq" else result
    assert isinstance(freqs, np.ndarray) and freqs.dtype == np.float64 and freqs.shape == (8,)
    first[:] = -1.0
    assert np.all(second > 0)
