"""posenc-advanced exercise 7: interleaved and half-split RoPE, and the checkpoint permutation.

Sources:
- Hugging Face transformers, src/transformers/models/llama/modeling_llama.py: ``rotate_half`` is
  ``cat(-x[d/2:], x[:d/2])`` and ``apply_rotary_pos_emb`` is ``x * cos + rotate_half(x) * sin`` with
  ``cos = cat(freqs, freqs)``: the half-split layout, pair t = (t, t + d/2).
- Hugging Face transformers, src/transformers/models/llama/convert_llama_weights_to_hf.py (read at
  commit 01cc9cd9d804d368d553c093c4eb0646320545bb): ``permute(w, n_heads, dim1, dim2)`` is
  ``w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)``, applied to
  ``wq`` (n_heads) and ``wk`` (num_key_value_heads), not to ``wv`` or ``wo``.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_solutions import apply_rope_half_split, interleaved_to_half_split, permute_for_half_split

from ..helpers.advanced_answers import rope_layouts as rope_layouts_answers

# Loaded by path, not through the package: tests/helpers/advanced_answers/__init__.py merges every module.
ALTERNATIVES = rope_layouts_answers.ALTERNATIVES


def _alternative(name):
    namespace = {"np": np, "math": math}
    exec(ALTERNATIVES[name], namespace)
    return namespace[name]


# ---- naive implementations, written from the formulas (one d x d rotation matrix per position)

def _rotation_matrix(dim, position, base, pairs):
    """The d x d RoPE rotation at one position, for the given list of pairs (i, j), pair t."""
    matrix = np.zeros((dim, dim))
    for t, (i, j) in enumerate(pairs):
        angle = position * base ** (-2.0 * t / dim)
        matrix[i, i], matrix[i, j] = math.cos(angle), -math.sin(angle)
        matrix[j, i], matrix[j, j] = math.sin(angle), math.cos(angle)
    return matrix


def _naive_rope(x, positions, base, layout):
    dim = x.shape[-1]
    if layout == "half":
        pairs = [(t, t + dim // 2) for t in range(dim // 2)]
    else:
        pairs = [(2 * t, 2 * t + 1) for t in range(dim // 2)]
    out = np.empty_like(x, dtype=float)
    for ell, position in enumerate(positions):
        out[..., ell, :] = x[..., ell, :] @ _rotation_matrix(dim, position, base, pairs).T
    return out


def _hf_permute(weight, n_heads):
    """Hugging Face's permute, in numpy: view(n_heads, d/2, 2, dim2).transpose(1, 2)."""
    dim1, dim2 = weight.shape
    return weight.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).swapaxes(1, 2).reshape(dim1, dim2)


def _logits(x, w_q, w_k, num_heads, num_kv_heads, positions, base, layout, rope=None):
    d = w_q.shape[0] // num_heads
    q = (x @ w_q.T).reshape(len(x), num_heads, d).transpose(1, 0, 2)
    k = (x @ w_k.T).reshape(len(x), num_kv_heads, d).transpose(1, 0, 2)
    if rope is None:
        q, k = _naive_rope(q, positions, base, layout), _naive_rope(k, positions, base, layout)
    else:
        q, k = rope(q, positions, base), rope(k, positions, base)
    group = num_heads // num_kv_heads
    return np.stack([q[h] @ k[h // group].T for h in range(num_heads)])


# ---- apply_rope_half_split

@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 3), st.sampled_from([10.0, 500.0,
                                                                                 10000.0]),
       st.integers(0, 2**31 - 1))
def test_half_split_matches_the_rotation_matrices(half, length, batch, base, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, length, 2 * half) if batch else (length, 2 * half))
    positions = rng.integers(0, 5000, size=length)
    np.testing.assert_allclose(apply_rope_half_split(x, positions, base),
                               _naive_rope(x, positions, base, "half"), rtol=1e-9, atol=1e-9)


def test_half_split_worked_example_by_hand():
    # d = 4, theta = [1, 0.01], p = pi/2: (1, 2) -> (-2, 1); (3, 4) turned by 0.015708 rad
    # -> (2.93680, 4.04663), computed by hand with cos = 0.999877, sin = 0.015707.
    out = apply_rope_half_split(np.array([[1.0, 3.0, 2.0, 4.0]]), [math.pi / 2])
    np.testing.assert_allclose(out, [[-2.0, 2.93680, 1.0, 4.04663]], atol=1e-5)


def test_half_split_turns_counter_clockwise():
    # rotate_half: x * cos + [-x2, x1] * sin; at angle pi/2, (x1, x2) = (1, 0) becomes (0, 1)
    np.testing.assert_allclose(apply_rope_half_split(np.array([[1.0, 0.0]]), [math.pi / 2]),
                               [[0.0, 1.0]], atol=1e-15)


def test_half_split_at_position_0_is_the_identity():
    x = np.array([[0.3, -1.2, 2.5, 0.7, -0.4, 1.1]])
    np.testing.assert_array_equal(apply_rope_half_split(x, [0]), x)


def test_half_split_keeps_the_norm_of_each_pair():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 7, 10))
    out = apply_rope_half_split(x, rng.integers(0, 900, size=7))
    np.testing.assert_allclose(np.hypot(out[..., :5], out[..., 5:]), np.hypot(x[..., :5],
                                                                             x[..., 5:]))


# ---- the permutation and the identity

@pytest.mark.parametrize("head_dim, expected", [
    (2, [0, 1]),
    (4, [0, 2, 1, 3]),
    (6, [0, 2, 4, 1, 3, 5]),
    (8, [0, 2, 4, 6, 1, 3, 5, 7]),
])
def test_permutation_literals(head_dim, expected):
    got = interleaved_to_half_split(head_dim)
    assert got.dtype == np.int64
    assert got.tolist() == expected


@pytest.mark.parametrize("head_dim", [2, 4, 64, 128])
def test_permutation_is_hugging_faces_permute_of_one_head(head_dim):
    rows = np.arange(head_dim, dtype=float)[:, None]
    assert interleaved_to_half_split(head_dim).tolist() == _hf_permute(rows, 1)[:, 0].tolist()


@pytest.mark.parametrize("num_heads, head_dim, d_model", [(1, 4, 3), (2, 4, 8), (3, 6, 5),
                                                          (32, 128, 7), (8, 2, 1)])
def test_permute_for_half_split_is_hugging_faces_permute(num_heads, head_dim, d_model):
    rng = np.random.default_rng(num_heads * 1000 + head_dim)
    weight = rng.normal(size=(num_heads * head_dim, d_model))
    np.testing.assert_array_equal(permute_for_half_split(weight, num_heads),
                                  _hf_permute(weight, num_heads))


@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 3), st.integers(1, 6),
       st.integers(0, 2**31 - 1))
def test_the_identity_holds_with_grouped_query_attention(half, num_kv_heads, group, length, seed):
    rng = np.random.default_rng(seed)
    head_dim, num_heads, d_model = 2 * half, num_kv_heads * group, 5
    x = rng.normal(size=(length, d_model))
    w_q = rng.normal(size=(num_heads * head_dim, d_model))
    w_k = rng.normal(size=(num_kv_heads * head_dim, d_model))
    positions = rng.integers(0, 3000, size=length)
    expected = _logits(x, w_q, w_k, num_heads, num_kv_heads, positions, 10000.0, "interleaved")
    got = _logits(x, permute_for_half_split(w_q, num_heads),
                  permute_for_half_split(w_k, num_kv_heads), num_heads, num_kv_heads, positions,
                  10000.0, "half", rope=apply_rope_half_split)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_without_the_permutation_the_logits_differ():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 9))
    w_q, w_k = rng.normal(size=(16, 9)), rng.normal(size=(16, 9))
    positions = np.array([0, 3, 7, 12, 30, 31])
    expected = _logits(x, w_q, w_k, 2, 2, positions, 10000.0, "interleaved")
    unpermuted = _logits(x, w_q, w_k, 2, 2, positions, 10000.0, "half", rope=apply_rope_half_split)
    assert np.abs(unpermuted - expected).max() > 0.1


def test_the_inverse_permutation_breaks_the_identity_from_d_6():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 4))
    w_q, w_k = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    positions = np.array([0, 2, 5, 9, 14])
    inverse = np.argsort(interleaved_to_half_split(6))
    expected = _logits(x, w_q, w_k, 1, 1, positions, 10000.0, "interleaved")
    wrong = _logits(x, w_q[inverse], w_k[inverse], 1, 1, positions, 10000.0, "half",
                    rope=apply_rope_half_split)
    assert np.abs(wrong - expected).max() > 0.1


# ---- alternatives, errors, inputs

@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_alternatives_agree_with_the_reference(half, length, num_heads, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, length, 2 * half))
    positions = rng.integers(0, 4000, size=length)
    np.testing.assert_allclose(_alternative("apply_rope_half_split")(x, positions, 777.0),
                               apply_rope_half_split(x, positions, 777.0), rtol=1e-9, atol=1e-12)
    assert (_alternative("interleaved_to_half_split")(2 * half).tolist()
            == interleaved_to_half_split(2 * half).tolist())
    weight = rng.normal(size=(num_heads * 2 * half, 3))
    np.testing.assert_array_equal(_alternative("permute_for_half_split")(weight, num_heads),
                                  permute_for_half_split(weight, num_heads))


ERRORS = [
    (apply_rope_half_split, (np.ones((3, 5)), np.arange(3)), "odd d"),
    (apply_rope_half_split, (np.ones((3, 4)), np.arange(2)), "len(positions) != L"),
    (apply_rope_half_split, (np.ones(4), np.arange(1)), "1-D x"),
    (apply_rope_half_split, (np.ones((3, 4)), np.ones((3, 1))), "2-D positions"),
    (interleaved_to_half_split, (7,), "odd head_dim"),
    (interleaved_to_half_split, (0,), "head_dim 0"),
    (interleaved_to_half_split, (-2,), "negative head_dim"),
    (interleaved_to_half_split, (4.5,), "non-integer head_dim"),
    (permute_for_half_split, (np.ones(8), 2), "1-D weight"),
    (permute_for_half_split, (np.ones((2, 4, 3)), 2), "3-D weight"),
    (permute_for_half_split, (np.ones((12, 3)), 5), "rows not divisible"),
    (permute_for_half_split, (np.ones((12, 3)), 0), "num_heads 0"),
    (permute_for_half_split, (np.ones((12, 3)), -3), "negative num_heads"),
    (permute_for_half_split, (np.ones((12, 3)), 4), "odd head_dim 3"),
]


@pytest.mark.parametrize("function, args, why", ERRORS, ids=[e[2] for e in ERRORS])
def test_value_errors(function, args, why):
    with pytest.raises(ValueError):
        function(*args)


def test_inputs_unchanged():
    rng = np.random.default_rng(3)
    x, positions, weight = rng.normal(size=(2, 4, 6)), np.array([1, 5, 2, 9]), rng.normal(size=(12,
                                                                                               3))
    copies = [a.copy() for a in (x, positions, weight)]
    apply_rope_half_split(x, positions)
    permute_for_half_split(weight, 2)
    for before, after in zip(copies, (x, positions, weight)):
        np.testing.assert_array_equal(before, after)
    out = permute_for_half_split(weight, 1)
    out[0, 0] = 1e9
    assert weight[0, 0] != 1e9, "permute_for_half_split returned a view of its input"
