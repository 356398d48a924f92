"""Tests of posenc_solutions.shaw (posenc-advanced exercises 1-3): Shaw et al.'s vector form
against loops written here, the scalar-bias limit, and the skew trick's values and memory."""

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, strategies as st

from posenc_solutions import shaw
from tests.helpers.advanced_answers.shaw import ALTERNATIVES


# Independent O(L^2) loops -------------------------------------------------------------------------

def clip(x, k):
    return max(-k, min(k, x))


def loop_vectors(table, qpos, kpos):
    big_k = len(table) // 2
    return np.array([[table[big_k + clip(int(qi) - int(kj), big_k)] for kj in kpos] for qi in qpos])


def loop_logits(q, k, rel_keys):
    big_k, length, d = len(rel_keys) // 2, q.shape[-2], q.shape[-1]
    out = np.zeros(q.shape[:-1] + (length,))
    for i in range(length):
        for j in range(length):
            a = rel_keys[big_k + clip(i - j, big_k)]
            out[..., i, j] = (q[..., i, :] * (k[..., j, :] + a)).sum(-1) / math.sqrt(d)
    return out


def loop_attention(q, k, v, rel_keys, rel_values, causal):
    logits = loop_logits(q, k, rel_keys)
    big_kv, length = len(rel_values) // 2, q.shape[-2]
    out = np.zeros(v.shape)
    for i in range(length):
        keys = list(range(i + 1 if causal else length))
        e = logits[..., i, keys]
        w = np.exp(e - e.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        for n, j in enumerate(keys):
            a_v = rel_values[big_kv + clip(i - j, big_kv)]
            out[..., i, :] += w[..., n, None] * (v[..., j, :] + a_v)
    return out


def loop_relative(q, rel_keys):
    big_k, length = len(rel_keys) // 2, q.shape[-2]
    out = np.zeros(q.shape[:-1] + (length,))
    for i in range(length):
        for j in range(length):
            out[..., i, j] = (q[..., i, :] * rel_keys[big_k + clip(i - j, big_k)]).sum(-1)
    return out


def loop_skew(p):
    length = p.shape[-2]
    out = np.zeros(p.shape[:-1] + (length,), dtype=p.dtype)
    for i in range(length):
        for j in range(length):
            out[..., i, j] = p[..., i, i - j + length - 1]
    return out


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(np.asarray(x, dtype=float) / 2.0))


# Exercise 1 --------------------------------------------------------------------------------------

def test_vectors_follow_the_papers_formula_with_the_sign_mapped():
    # Shaw et al. 2018: a_ij = w_{clip(j - i, k)}, w stored as w_{-k} .. w_k. Our row K + (i - j)
    # holds the same vector, so our table is the paper's upside down.
    rng = np.random.default_rng(0)
    paper = rng.normal(size=(7, 3))  # w_{-3} .. w_{3}
    qpos, kpos = np.array([0, 4, 9, -2]), np.array([1, 3, 4, 20, 0])
    got = shaw.shaw_relative_vectors(paper[::-1], qpos, kpos)
    for a, i in enumerate(qpos):
        for b, j in enumerate(kpos):
            np.testing.assert_array_equal(got[a, b], paper[3 + clip(j - i, 3)])


@pytest.mark.parametrize("rows, d, qpos, kpos", [
    (1, 2, [0, 5], [3, 0, -1]),             # K = 0: one row for every offset
    (3, 4, [2], [0, 2, 9]),                 # K = 1, offsets clipped on both sides
    (5, 3, [0, 3, 10, -4], [0, 1, 2, 7, 12]),
    (15, 2, [1, 2, 3], [0, 3]),             # K = 7 beyond every offset
])
def test_shaw_relative_vectors_matches_the_loop(rows, d, qpos, kpos):
    table = np.random.default_rng(rows).normal(size=(rows, d))
    np.testing.assert_array_equal(shaw.shaw_relative_vectors(table, qpos, kpos),
                                  loop_vectors(table, qpos, kpos))


# batch, L, d, d_v, K, K'
SHAPES = [
    ((), 1, 1, 1, 0, 0),
    ((), 2, 4, 1, 1, 1),
    ((), 6, 9, 2, 1, 3),
    ((3,), 5, 4, 3, 2, 1),
    ((2, 3), 5, 4, 3, 2, 4),
    ((2,), 4, 8, 5, 7, 0),                # K >= L: nothing clipped
]


@pytest.mark.parametrize("batch, length, d, d_v, big_k, big_kv", SHAPES)
def test_shaw_logits_and_attention_match_the_loops(batch, length, d, d_v, big_k, big_kv):
    rng = np.random.default_rng(length * 10 + d)
    q, k = rng.normal(size=(*batch, length, d)), rng.normal(size=(*batch, length, d))
    v = rng.normal(size=(*batch, length, d_v))
    rel_keys = rng.normal(size=(2 * big_k + 1, d))
    rel_values = rng.normal(size=(2 * big_kv + 1, d_v))
    np.testing.assert_allclose(shaw.shaw_logits(q, k, rel_keys), loop_logits(q, k, rel_keys),
                               rtol=1e-12, atol=1e-12)
    for causal in (False, True):
        np.testing.assert_allclose(shaw.shaw_attention(q, k, v, rel_keys, rel_values, causal),
                                   loop_attention(q, k, v, rel_keys, rel_values, causal),
                                   rtol=1e-12, atol=1e-12)


def test_worked_example_of_exercise_1():
    # Hand computation (the exercise's worked example): e = [[1, 1], [1, 0]], z_0 = 2,
    # z_1 = (11 e + 3) / (e + 1) = 8.848468629040038; causal: z_0 = 1.
    q = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]])
    k = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    rel_keys = np.zeros((3, 4))
    rel_keys[2, 1] = 1.0
    v, rel_values = np.array([[1.0], [3.0]]), np.array([[0.0], [0.0], [10.0]])
    np.testing.assert_array_equal(shaw.shaw_logits(q, k, rel_keys), [[1.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(shaw.shaw_attention(q, k, v, rel_keys, rel_values),
                               [[2.0], [8.848468629040038]], rtol=1e-14)
    np.testing.assert_allclose(shaw.shaw_attention(q, k, v, rel_keys, rel_values, causal=True),
                               [[1.0], [8.848468629040038]], rtol=1e-14)


def test_concept_question_of_exercise_1():
    # Hand computation: offset 6 - 1 = 5 clips to 2, row 4 = (5, 5, 5, 5); (2 + 20) / 2 = 11.
    q, k = np.zeros((7, 4)), np.zeros((7, 4))
    q[6], k[1] = [1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 0.0]
    rel_keys = np.arange(1.0, 6.0)[:, None] * np.ones(4)
    assert shaw.shaw_logits(q, k, rel_keys)[6, 1] == 11.0


def test_causal_attention_ignores_a_huge_future_logit_and_stays_finite():
    q, k = np.zeros((3, 2)), np.zeros((3, 2))
    q[0], k[2] = [40.0, 0.0], [100.0, 0.0]
    v = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        z = shaw.shaw_attention(q, k, v, np.zeros((1, 2)), np.zeros((1, 2)), causal=True)
    np.testing.assert_array_equal(z[0], [1.0, 0.0])
    big = shaw.shaw_attention(1000.0 * q + 1.0, k, v, np.ones((3, 2)), np.ones((1, 2)))
    assert np.all(np.isfinite(big))


# Exercise 2 --------------------------------------------------------------------------------------

def test_worked_example_of_exercise_2():
    # Hand computation: sigmoid(2) = 0.8807970779778823, sigmoid(1) = 0.7310585786300049.
    queries = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    rel_keys = np.array([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 0.0, 0.0]])
    np.testing.assert_allclose(shaw.left_weights(queries, np.ones(4), rel_keys=rel_keys),
                               [0.8807970779778823, 1 - 0.8807970779778823], rtol=1e-14)
    np.testing.assert_allclose(shaw.left_weights(queries, np.ones(4), rel_bias=[0.0, 5.0, 1.0]),
                               [0.7310585786300049, 0.7310585786300049], rtol=1e-14)


@given(st.integers(1, 12), st.integers(1, 6), st.integers(0, 2 ** 32 - 1))
def test_left_weights_vector_form_matches_softmax_over_two_keys(d, n, seed):
    rng = np.random.default_rng(seed)
    queries, key, rel_keys = rng.normal(size=(n, d)), rng.normal(size=d), rng.normal(size=(3, d))
    left = queries @ (key + rel_keys[2]) / math.sqrt(d)   # offset +1: row 2
    right = queries @ (key + rel_keys[0]) / math.sqrt(d)  # offset -1: row 0
    np.testing.assert_allclose(shaw.left_weights(queries, key, rel_keys=rel_keys),
                               np.exp(left) / (np.exp(left) + np.exp(right)), rtol=1e-12)


def test_left_weights_of_logits_800_apart_are_exact_and_finite():
    # Hand computation: each logit is +-400 (exp(400) is finite), their difference 800 (exp(800) is
    # not); the softmax over the two keys is 1 / (1 + e^-800) = 1.0 and e^-800 / (1 + e^-800) = 0.0.
    queries, key = np.array([[1.0], [-1.0]]), np.zeros(1)
    with np.errstate(over="raise", invalid="raise"):
        np.testing.assert_array_equal(
            shaw.left_weights(queries, key, rel_keys=np.array([[-400.0], [0.0], [400.0]])), [1.0, 0.0])
        np.testing.assert_array_equal(
            shaw.left_weights(queries, key, rel_bias=np.array([-400.0, 0.0, 400.0])), [1.0, 1.0])


@given(st.integers(1, 12), st.integers(2, 8), st.integers(0, 2 ** 32 - 1))
def test_no_scalar_table_separates_two_queries(d, n, seed):
    # The claim of exercise 2: with identical keys the scalar form gives every query the same left
    # weight sigmoid(b_{+1} - b_{-1}), whatever its q . key.
    rng = np.random.default_rng(seed)
    queries, key, rel_bias = rng.normal(size=(n, d)) * 3, rng.normal(size=d), rng.normal(size=3) * 4
    got = shaw.left_weights(queries, key, rel_bias=rel_bias)
    np.testing.assert_allclose(got, np.full(n, sigmoid(rel_bias[2] - rel_bias[0])), rtol=1e-9,
                               atol=1e-15)
    assert np.ptp(got) < 1e-12


@pytest.mark.parametrize("head_dim", [1, 2, 3, 7, 64, 1000, 4096])
def test_direction_task_solution_has_the_property(head_dim):
    queries, key, rel_keys = shaw.direction_task_solution(head_dim)
    assert queries.shape == (2, head_dim) and key.shape == (head_dim,)
    assert rel_keys.shape == (3, head_dim)
    entries = np.concatenate([queries.ravel(), key, rel_keys.ravel()])
    assert np.all(np.isfinite(entries)) and np.abs(entries).max() <= 10
    left = queries @ (key + rel_keys[2]) / math.sqrt(head_dim)
    right = queries @ (key + rel_keys[0]) / math.sqrt(head_dim)
    w_left = sigmoid(left - right)
    assert w_left[0] >= 0.99 and w_left[1] <= 0.01


# Exercise 3 --------------------------------------------------------------------------------------

def test_skew_of_the_3_by_5_drawing():
    # Hand computation (the exercise's drawing): P[i, c] = 10 i + c skews to
    # S[i, j] = P[i, i - j + 2].
    p = 10.0 * np.arange(3)[:, None] + np.arange(5)
    np.testing.assert_array_equal(shaw.skew(p), [[2.0, 1.0, 0.0], [13.0, 12.0, 11.0],
                                                 [24.0, 23.0, 22.0]])


def test_relative_logits_worked_example():
    # Hand computation: q = (1, 10, 100), rel_keys = (-1, 0, 1), offsets +-2 clipped to +-1.
    q, rel_keys = np.array([[1.0], [10.0], [100.0]]), np.array([[-1.0], [0.0], [1.0]])
    expected = [[0.0, -1.0, -1.0], [10.0, 0.0, -10.0], [100.0, 100.0, 0.0]]
    np.testing.assert_array_equal(shaw.relative_logits_naive(q, rel_keys), expected)
    np.testing.assert_array_equal(shaw.relative_logits_skewed(q, rel_keys), expected)


batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


@given(batch_shapes, st.integers(1, 9), st.integers(1, 5), st.integers(0, 12),
       st.integers(0, 2 ** 32 - 1))
def test_skewed_equals_naive_exactly_on_integer_inputs(batch, length, d, big_k, seed):
    rng = np.random.default_rng(seed)
    q = rng.integers(-20, 21, size=(*batch, length, d)).astype(float)
    rel_keys = rng.integers(-20, 21, size=(2 * big_k + 1, d)).astype(float)
    naive = shaw.relative_logits_naive(q, rel_keys)
    assert np.array_equal(shaw.relative_logits_skewed(q, rel_keys), naive)
    assert np.array_equal(naive, loop_relative(q, rel_keys))


@given(batch_shapes, st.integers(1, 9), st.integers(1, 6), st.integers(0, 12),
       st.integers(0, 2 ** 32 - 1))
def test_skewed_equals_naive_on_random_floats(batch, length, d, big_k, seed):
    rng = np.random.default_rng(seed)
    q, rel_keys = rng.normal(size=(*batch, length, d)), rng.normal(size=(2 * big_k + 1, d))
    np.testing.assert_allclose(shaw.relative_logits_skewed(q, rel_keys),
                               shaw.relative_logits_naive(q, rel_keys), rtol=1e-12, atol=1e-12)


@given(batch_shapes, st.integers(1, 9), st.integers(0, 2 ** 32 - 1))
def test_skew_matches_the_loop(batch, length, seed):
    p = np.random.default_rng(seed).normal(size=(*batch, length, 2 * length - 1))
    np.testing.assert_array_equal(shaw.skew(p), loop_skew(p))


def peak_bytes(function, *args):
    """Peak of the memory traced (numpy registers its buffers with tracemalloc) while it runs."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_skew_saves_the_L_L_d_tensor():
    length, d = 256, 64
    rng = np.random.default_rng(9)
    q, rel_keys = rng.normal(size=(length, d)), rng.normal(size=(2 * length - 1, d))
    naive = peak_bytes(shaw.relative_logits_naive, q, rel_keys)
    skewed = peak_bytes(shaw.relative_logits_skewed, q, rel_keys)
    tensor = length * length * d * 8                          # the (L, L, d) float64 gather
    budget = (length * length + (2 * length - 1) * d) * 8     # the L x L scores and R
    print(f"\nL={length}, d={d}: naive peak {naive / 2 ** 20:.2f} MiB (L*L*d*8 = "
          f"{tensor / 2 ** 20:.2f} MiB), skewed peak {skewed / 2 ** 20:.2f} MiB "
          f"({skewed / budget:.2f} x (L*L + (2L-1)*d)*8 = {budget / 2 ** 20:.2f} MiB)")
    assert naive >= tensor
    assert skewed <= 4 * budget


# All functions -----------------------------------------------------------------------------------

def _alternative(name):
    namespace = {"np": np, "math": math}
    exec(ALTERNATIVES[name], namespace)
    return namespace[name]


def _random_arguments(name, rng):
    q, k = rng.normal(size=(2, 3, 5, 4)), rng.normal(size=(2, 3, 5, 4))
    return {
        "shaw_relative_vectors": (rng.normal(size=(5, 3)), np.array([0, 4, 9]),
                                  np.array([1, 2, 7, 0])),
        "shaw_logits": (q, k, rng.normal(size=(3, 4))),
        "shaw_attention": (q, k, rng.normal(size=(2, 3, 5, 2)), rng.normal(size=(5, 4)),
                           rng.normal(size=(3, 2)), True),
        "left_weights": (rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=(3, 6))),
        "direction_task_solution": (5,),
        "relative_logits_naive": (q, rng.normal(size=(3, 4))),
        "skew": (rng.normal(size=(2, 5, 9)),),
        "relative_logits_skewed": (q, rng.normal(size=(7, 4))),
    }[name]


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_alternatives_agree_with_the_reference(name):
    args = _random_arguments(name, np.random.default_rng(len(name)))
    expected, got = getattr(shaw, name)(*args), _alternative(name)(*args)
    if name == "direction_task_solution":  # any construction is right: compare the property
        for queries, key, rel_keys in (expected, got):
            w = shaw.left_weights(queries, key, rel_keys=rel_keys)
            assert w[0] >= 0.99 and w[1] <= 0.01
        return
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_inputs_are_unchanged(name):
    args = _random_arguments(name, np.random.default_rng(3))
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    getattr(shaw, name)(*args)
    for before, after in zip(copies, args):
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(after, before)


_Q = np.ones((2, 5, 4))
ERRORS = [
    ("shaw_relative_vectors", (np.ones((4, 2)), [0], [0])),       # even rows
    ("shaw_relative_vectors", (np.ones(5), [0], [0])),             # 1-D table
    ("shaw_relative_vectors", (np.ones((5, 2)), [[0]], [0])),      # 2-D positions
    ("shaw_relative_vectors", (np.ones((5, 2)), [0], [[0]])),
    ("shaw_logits", (_Q, _Q[:, :4], np.ones((3, 4)))),             # q, k of different L
    ("shaw_logits", (_Q, _Q, np.ones((3, 3)))),                    # width != d
    ("shaw_logits", (_Q, _Q, np.ones((2, 4)))),                    # even rows
    ("shaw_logits", (np.ones(4), np.ones(4), np.ones((3, 4)))),    # 1-D q, k
    ("shaw_attention", (_Q, _Q, np.ones((2, 4, 3)), np.ones((3, 4)), np.ones((1, 3)))),
    ("shaw_attention", (_Q, _Q, np.ones((5, 3)), np.ones((3, 4)), np.ones((1, 3)))),
    ("shaw_attention", (_Q, _Q, np.ones((2, 5, 3)), np.ones((3, 4)), np.ones((1, 2)))),
    ("shaw_attention", (_Q, _Q, np.ones((2, 5, 3)), np.ones((3, 4)), np.ones((2, 3)))),
    ("shaw_attention", (_Q, _Q, np.ones((2, 5, 3)), np.ones((3, 5)), np.ones((1, 3)))),
    ("shaw_attention", (np.ones(4), np.ones(4), np.ones(3), np.ones((3, 4)), np.ones((1, 3)))),  # 1-D
    ("left_weights", (np.ones((2, 3)), np.ones(3))),                                # neither
    ("left_weights", (np.ones((2, 3)), np.ones(3), np.ones((3, 3)), np.ones(3))),   # both
    ("left_weights", (np.ones((2, 3)), np.ones(3), np.ones((3, 2)))),
    ("left_weights", (np.ones((2, 3)), np.ones(3), None, np.ones(2))),
    ("left_weights", (np.ones((2, 3)), np.ones(2), np.ones((3, 3)))),
    ("left_weights", (np.ones((2, 3)), np.ones(1), np.ones((3, 3)))),   # key (1,) would broadcast
    ("left_weights", (np.ones(3), np.ones(3), np.ones((3, 3)))),
    ("direction_task_solution", (0,)),
    ("direction_task_solution", (-2,)),
    ("relative_logits_naive", (_Q, np.ones((2, 4)))),
    ("relative_logits_naive", (_Q, np.ones((3, 3)))),
    ("relative_logits_naive", (np.ones(4), np.ones((3, 4)))),
    ("relative_logits_skewed", (_Q, np.ones((2, 4)))),
    ("relative_logits_skewed", (_Q, np.ones(4))),
    ("relative_logits_skewed", (np.ones(4), np.ones((3, 4)))),
    ("skew", (np.ones(5),)),
    ("skew", (np.ones((3, 6)),)),
    ("skew", (np.ones((2, 3, 4)),)),
]


@pytest.mark.parametrize("name, args", ERRORS)
def test_value_errors(name, args):
    with pytest.raises(ValueError):
        getattr(shaw, name)(*args)
