"""Shaw et al. (2018) relative attention in its vector form, what a scalar bias cannot do, and
the skew trick (Huang et al. 2018, Music Transformer) that computes its position term in O(L·d)
extra memory.
"""

import math

import numpy as np


def shaw_relative_vectors(table, query_positions, key_positions):
    r"""The relative vector of every (query, key) pair, read from a clipped table.

    .. math::
        a_{ij} = T_{K + \mathrm{clip}(q_i - k_j,\, -K,\, K)}

    Row ``K + r`` of the table holds the vector for offset ``r = q_i - k_j``
    (positive when the key is in the past); offsets beyond ``±K`` use the
    edge rows. Shaw et al. write ``w_{clip(j - i, k)}``: their ``w_m`` is
    row ``K - m`` here.

    Parameters
    ----------
    table : array_like, shape (2K+1, d)
        One learned vector per clipped offset, ``K >= 0``.
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)

    Returns
    -------
    ndarray of float, shape (Lq, Lk, d)
        ``out[i, j] = table[K + clip(q_i - k_j, -K, K)]``.

    Raises
    ------
    ValueError
        If the table is not 2-D or has an even number of rows, or if the
        positions are not 1-D.

    Examples
    --------
    >>> table = np.array([[-1.0, 0.0], [0.0, 0.0], [1.0, 5.0]])   # K = 1, d = 2
    >>> print(shaw_relative_vectors(table, [2], [0, 2, 9]))
    [[[ 1.  5.]
      [ 0.  0.]
      [-1.  0.]]]
    """
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] % 2 == 0:
        raise ValueError(f"table must have shape (2K+1, d) with an odd number of rows, got "
                         f"shape {table.shape}")
    query_positions, key_positions = np.asarray(query_positions), np.asarray(key_positions)
    if query_positions.ndim != 1 or key_positions.ndim != 1:
        raise ValueError(f"positions must be 1-D, got shapes {query_positions.shape} and "
                         f"{key_positions.shape}")
    max_offset = table.shape[0] // 2
    offsets = np.subtract.outer(query_positions, key_positions).astype(np.int64)
    return table[np.clip(offsets, -max_offset, max_offset) + max_offset]


def shaw_logits(q, k, rel_keys):
    r"""Self-attention logits with Shaw's relative key vectors (Shaw et al. 2018, eq. 4).

    .. math::
        e_{ij} = \frac{q_i \cdot (k_j + a^K_{ij})}{\sqrt{d}}, \qquad
        a^K_{ij} = \text{rel\_keys}[K + \mathrm{clip}(i - j, -K, K)]

    Token ``i`` sits at position ``i`` (positions ``0 .. L-1``), so the offset
    of key ``j`` seen from query ``i`` is ``i - j``.

    Parameters
    ----------
    q, k : array_like, shape (..., L, d)
        Queries and keys, the same shape; any leading (batch, head) axes.
    rel_keys : array_like, shape (2K+1, d)
        Row ``K + r`` is the key vector for offset ``r``, ``K >= 0``.

    Returns
    -------
    ndarray of float, shape (..., L, L)

    Raises
    ------
    ValueError
        If `q` and `k` differ in shape or are less than 2-D, or if `rel_keys`
        is not 2-D, has an even number of rows or a width other than ``d``.

    Examples
    --------
    >>> q = np.array([[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])   # L = 2, d = 4
    >>> k = np.zeros((2, 4))
    >>> rel_keys = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [4.0, 3.0, 0.0, 0.0]])
    >>> print(shaw_logits(q, k, rel_keys))   # e_01 = q_0 . row 0 / 2, e_10 = q_1 . row 2 / 2
    [[0. 1.]
     [2. 0.]]
    """
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    rel_keys = np.asarray(rel_keys, dtype=float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape (..., L, d), got {q.shape} and "
                         f"{k.shape}")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError(f"rel_keys must have shape (2K+1, d) = (odd, {q.shape[-1]}), got "
                         f"{rel_keys.shape}")
    length, max_offset = q.shape[-2], rel_keys.shape[0] // 2
    positions = np.arange(length)
    rows = np.clip(positions[:, None] - positions[None, :], -max_offset, max_offset) + max_offset
    by_offset = q @ rel_keys.T                          # (..., L, 2K+1): q_i . rel_keys[c]
    position_term = by_offset[..., positions[:, None], rows]
    return (q @ np.swapaxes(k, -1, -2) + position_term) / math.sqrt(q.shape[-1])


def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    r"""Shaw et al.'s relative self-attention: relative vectors on the keys and on the values.

    .. math::
        \alpha_{ij} = \mathrm{softmax}_j\, e_{ij}, \qquad
        z_i = \sum_j \alpha_{ij}\,(v_j + a^V_{ij}), \qquad
        a^V_{ij} = \text{rel\_values}[K' + \mathrm{clip}(i - j, -K', K')]

    with ``e_ij`` the logits of `shaw_logits` (token ``i`` at position ``i``).
    The softmax over ``j`` is numerically stable (the row maximum is
    subtracted). With ``causal=True`` keys ``j > i`` are excluded before the
    softmax: their weight is exactly 0 whatever their logit.

    Parameters
    ----------
    q, k : array_like, shape (..., L, d)
    v : array_like, shape (..., L, d_v)
        Values; the leading axes and ``L`` match those of `k`.
    rel_keys : array_like, shape (2K+1, d)
        Row ``K + r`` is the key vector for offset ``r = i - j``.
    rel_values : array_like, shape (2K'+1, d_v)
        Row ``K' + r`` is the value vector for offset ``r``; ``K'`` is its own.
    causal : bool, optional
        Hide the keys after the query. Default False.

    Returns
    -------
    ndarray of float, shape (..., L, d_v)

    Raises
    ------
    ValueError
        If `q` and `k` differ in shape or are less than 2-D, if `v` is not
        ``k.shape[:-1] + (d_v,)``, or if `rel_keys` / `rel_values` are not 2-D
        with an odd number of rows and width ``d`` / ``d_v``.

    Examples
    --------
    >>> q = k = np.zeros((2, 1))
    >>> v = np.array([[1.0], [3.0]])
    >>> rel_values = np.array([[0.0], [0.0], [10.0]])   # K' = 1: offset +1 adds 10
    >>> print(shaw_attention(q, k, v, np.zeros((1, 1)), rel_values))
    [[2.]
     [7.]]
    >>> print(shaw_attention(q, k, v, np.zeros((1, 1)), rel_values, causal=True))
    [[1.]
     [7.]]
    """
    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    rel_keys, rel_values = np.asarray(rel_keys, dtype=float), np.asarray(rel_values, dtype=float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape (..., L, d), got {q.shape} and "
                         f"{k.shape}")
    if v.ndim != k.ndim or v.shape[:-1] != k.shape[:-1]:
        raise ValueError(f"v must have shape {k.shape[:-1]} + (d_v,), got {v.shape}")
    for name, table, width in (("rel_keys", rel_keys, q.shape[-1]),
                               ("rel_values", rel_values, v.shape[-1])):
        if table.ndim != 2 or table.shape[0] % 2 == 0 or table.shape[1] != width:
            raise ValueError(f"{name} must have shape (odd, {width}), got {table.shape}")
    positions = np.arange(q.shape[-2])
    offsets = positions[:, None] - positions[None, :]
    key_max, value_max = rel_keys.shape[0] // 2, rel_values.shape[0] // 2
    key_rows = np.clip(offsets, -key_max, key_max) + key_max
    position_term = (q @ rel_keys.T)[..., positions[:, None], key_rows]
    logits = (q @ np.swapaxes(k, -1, -2) + position_term) / math.sqrt(q.shape[-1])
    if causal:
        logits = np.where(offsets >= 0, logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    value_vectors = rel_values[np.clip(offsets, -value_max, value_max) + value_max]  # (L, L, d_v)
    return weights @ v + np.einsum("...ij,ijd->...id", weights, value_vectors)


def left_weights(queries, key, rel_keys=None, rel_bias=None):
    r"""Weight a query at position 1 puts on the LEFT of two identical keys (positions 0 and 2).

    The query sees two keys with the same content `key`: the left one at
    offset ``+1`` (position 0, in the past) and the right one at offset ``-1``
    (position 2). It does not attend to itself. The logit of the key at
    offset ``o`` is, in Shaw's vector form (``K = 1``, row ``1 + o``),

    .. math::
        e_o = \frac{q \cdot (\text{key} + \text{rel\_keys}[1 + o])}{\sqrt{d}},

    and with a scalar bias per offset (as T5- or ALiBi-style schemes do)

    .. math::
        e_o = \frac{q \cdot \text{key}}{\sqrt{d}} + \text{rel\_bias}[1 + o].

    The result is the softmax weight on the left key, over the two keys only:
    ``exp(e_{+1}) / (exp(e_{+1}) + exp(e_{-1}))``.

    Parameters
    ----------
    queries : array_like, shape (n, d)
        One query content per row.
    key : array_like, shape (d,)
        The content shared by both keys.
    rel_keys : array_like, shape (3, d), optional
        Shaw's vectors for the offsets -1, 0, +1 (rows 0, 1, 2).
    rel_bias : array_like, shape (3,), optional
        Scalar biases for the offsets -1, 0, +1. Give exactly one of the two.

    Returns
    -------
    ndarray of float, shape (n,)

    Raises
    ------
    ValueError
        Unless exactly one of `rel_keys` and `rel_bias` is given; if `queries`
        is not 2-D, `key` is not of shape ``(d,)``, `rel_keys` not ``(3, d)``
        or `rel_bias` not ``(3,)``.

    Examples
    --------
    >>> queries = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    >>> key = np.ones(4)
    >>> rel_keys = np.array([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 0.0, 0.0]])
    >>> print(np.round(left_weights(queries, key, rel_keys=rel_keys), 4))
    [0.8808 0.1192]
    >>> print(np.round(left_weights(queries, key, rel_bias=np.array([0.0, 5.0, 1.0])), 4))
    [0.7311 0.7311]
    """
    if (rel_keys is None) == (rel_bias is None):
        raise ValueError("give exactly one of rel_keys (vector form) and rel_bias (scalar form)")
    queries, key = np.asarray(queries, dtype=float), np.asarray(key, dtype=float)
    if queries.ndim != 2 or key.shape != queries.shape[1:]:
        raise ValueError(f"queries must have shape (n, d) and key (d,), got {queries.shape} and "
                         f"{key.shape}")
    scale = math.sqrt(queries.shape[1])
    if rel_keys is not None:
        rel_keys = np.asarray(rel_keys, dtype=float)
        if rel_keys.shape != (3, queries.shape[1]):
            raise ValueError(f"rel_keys must have shape (3, {queries.shape[1]}), got "
                             f"{rel_keys.shape}")
        left = queries @ (key + rel_keys[2]) / scale
        right = queries @ (key + rel_keys[0]) / scale
    else:
        rel_bias = np.asarray(rel_bias, dtype=float)
        if rel_bias.shape != (3,):
            raise ValueError(f"rel_bias must have shape (3,), got {rel_bias.shape}")
        content = queries @ key / scale
        left, right = content + rel_bias[2], content + rel_bias[0]
    top = np.maximum(left, right)
    return np.exp(left - top) / (np.exp(left - top) + np.exp(right - top))


def direction_task_solution(head_dim):
    r"""Queries, a key and Shaw key vectors under which two queries look in opposite directions.

    With the vector form of `left_weights`, query 0 must put weight >= 0.99
    on the LEFT key (offset ``+1``) and query 1 weight >= 0.99 on the RIGHT
    key (offset ``-1``). Every entry is finite with absolute value <= 10.
    Any such construction is accepted, for every ``head_dim >= 1``.

    Parameters
    ----------
    head_dim : int
        ``d >= 1``.

    Returns
    -------
    queries : ndarray of float, shape (2, head_dim)
    key : ndarray of float, shape (head_dim,)
    rel_keys : ndarray of float, shape (3, head_dim)
        Rows for the offsets -1, 0, +1.

    Raises
    ------
    ValueError
        If ``head_dim < 1``.

    Examples
    --------
    >>> queries, key, rel_keys = direction_task_solution(2)
    >>> print([a.shape for a in (queries, key, rel_keys)])
    [(2, 2), (2,), (3, 2)]
    >>> w = left_weights(queries, key, rel_keys=rel_keys)
    >>> print(bool(w[0] >= 0.99), bool(w[1] <= 0.01))
    True True
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 1):
        raise ValueError(f"head_dim must be an integer >= 1, got {head_dim!r}")
    ones = np.ones(int(head_dim))
    # left minus right logit: q . (a_{+1} - a_{-1}) / sqrt(d) = +-2 * 4 d / sqrt(d) = +-8 sqrt(d)
    queries = np.stack([2.0 * ones, -2.0 * ones])
    rel_keys = np.stack([-2.0 * ones, 0.0 * ones, 2.0 * ones])
    return queries, ones.copy(), rel_keys


def relative_logits_naive(q, rel_keys):
    r"""The position term of Shaw's logits, built from the full (L, L, d) tensor of vectors.

    .. math::
        S_{ij} = q_i \cdot \text{rel\_keys}[K + \mathrm{clip}(i - j, -K, K)]

    Token ``i`` is at position ``i``. No ``1/sqrt(d)`` scaling. This version
    materialises ``a_{ij}`` for every pair: ``O(L^2 d)`` extra memory.

    Parameters
    ----------
    q : array_like, shape (..., L, d)
    rel_keys : array_like, shape (2K+1, d)
        Row ``K + r`` is the vector for offset ``r = i - j``, ``K >= 0``.

    Returns
    -------
    ndarray of float, shape (..., L, L)

    Raises
    ------
    ValueError
        If `q` is less than 2-D, or `rel_keys` is not 2-D, has an even number
        of rows or a width other than ``d``.

    Examples
    --------
    >>> q = np.array([[1.0], [10.0], [100.0]])
    >>> print(relative_logits_naive(q, np.array([[-1.0], [0.0], [1.0]])))
    [[  0.  -1.  -1.]
     [ 10.   0. -10.]
     [100. 100.   0.]]
    """
    q, rel_keys = np.asarray(q, dtype=float), np.asarray(rel_keys, dtype=float)
    if q.ndim < 2:
        raise ValueError(f"q must have shape (..., L, d), got {q.shape}")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError(f"rel_keys must have shape (2K+1, d) = (odd, {q.shape[-1]}), got "
                         f"{rel_keys.shape}")
    positions, max_offset = np.arange(q.shape[-2]), rel_keys.shape[0] // 2
    offsets = positions[:, None] - positions[None, :]
    vectors = rel_keys[np.clip(offsets, -max_offset, max_offset) + max_offset]   # (L, L, d)
    return np.einsum("...id,ijd->...ij", q, vectors)


def skew(rel_logits):
    r"""Turn logits indexed by (query, offset) into logits indexed by (query, key).

    Column ``c`` of `rel_logits` holds offset ``r = c - (L - 1)``, offsets
    ascending from ``-(L-1)`` to ``L-1``; the result is

    .. math::
        \text{out}[\dots, i, j] = \text{rel\_logits}[\dots, i, (i - j) + L - 1].

    Row ``i`` of the result is the window ``rel_logits[..., i, i : i + L]``
    read backwards. This version uses the pad-and-reshape trick of Music
    Transformer (and Transformer-XL's ``_rel_shift``): append ``L`` zeros to
    each flattened ``(L, 2L-1)`` matrix, read it as ``(L, 2L)`` rows (each row
    then starts one column further right), keep ``L`` columns, reverse them.

    Parameters
    ----------
    rel_logits : array_like, shape (..., L, 2L-1)

    Returns
    -------
    ndarray, shape (..., L, L)

    Raises
    ------
    ValueError
        If `rel_logits` is less than 2-D or its last axis is not ``2L - 1``
        with ``L = rel_logits.shape[-2]``.

    Examples
    --------
    >>> rel_logits = 10.0 * np.arange(3)[:, None] + np.arange(5)   # row i, column c: 10 i + c
    >>> print(skew(rel_logits))
    [[ 2.  1.  0.]
     [13. 12. 11.]
     [24. 23. 22.]]
    """
    rel_logits = np.asarray(rel_logits)
    if rel_logits.ndim < 2 or rel_logits.shape[-1] != 2 * rel_logits.shape[-2] - 1:
        raise ValueError(f"rel_logits must have shape (..., L, 2L-1), got {rel_logits.shape}")
    *batch, length, width = rel_logits.shape
    flat = rel_logits.reshape(*batch, length * width)
    padded = np.concatenate([flat, np.zeros((*batch, length), dtype=flat.dtype)], axis=-1)
    shifted = padded.reshape(*batch, length, width + 1)        # row i starts at column i
    return shifted[..., :length][..., ::-1]


def relative_logits_skewed(q, rel_keys):
    r"""The position term of Shaw's logits in O(L d) extra memory: one matmul, then a skew.

    .. math::
        R_c = \text{rel\_keys}[K + \mathrm{clip}(c - (L - 1), -K, K)], \quad
        P = q R^\top, \quad S = \mathrm{skew}(P)

    ``R`` holds the ``2L - 1`` (clipped) vectors of the offsets ``-(L-1)`` to
    ``L-1`` in ascending order, so ``P[..., i, c] = q_i . R_c`` has shape
    ``(..., L, 2L-1)``; `skew` moves each entry to its key. The result equals
    `relative_logits_naive` (exactly, on integer-valued inputs). No
    ``1/sqrt(d)`` scaling.

    Parameters
    ----------
    q : array_like, shape (..., L, d)
    rel_keys : array_like, shape (2K+1, d)
        Row ``K + r`` is the vector for offset ``r = i - j``, ``K >= 0``.

    Returns
    -------
    ndarray of float, shape (..., L, L)

    Raises
    ------
    ValueError
        If `q` is less than 2-D, or `rel_keys` is not 2-D, has an even number
        of rows or a width other than ``d``.

    Examples
    --------
    >>> q = np.array([[1.0], [10.0], [100.0]])
    >>> print(relative_logits_skewed(q, np.array([[-1.0], [0.0], [1.0]])))
    [[  0.  -1.  -1.]
     [ 10.   0. -10.]
     [100. 100.   0.]]
    """
    q, rel_keys = np.asarray(q, dtype=float), np.asarray(rel_keys, dtype=float)
    if q.ndim < 2:
        raise ValueError(f"q must have shape (..., L, d), got {q.shape}")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError(f"rel_keys must have shape (2K+1, d) = (odd, {q.shape[-1]}), got "
                         f"{rel_keys.shape}")
    *batch, length, _ = q.shape
    max_offset = rel_keys.shape[0] // 2
    offsets = np.arange(-(length - 1), length)                      # ascending, 2L - 1 of them
    by_offset = q @ rel_keys[np.clip(offsets, -max_offset, max_offset) + max_offset].T
    # the skew: pad each flattened (L, 2L-1) matrix with L zeros, read it as (L, 2L), reverse
    width = 2 * length - 1
    flat = by_offset.reshape(*batch, length * width)
    padded = np.concatenate([flat, np.zeros((*batch, length))], axis=-1)
    return padded.reshape(*batch, length, width + 1)[..., :length][..., ::-1]
