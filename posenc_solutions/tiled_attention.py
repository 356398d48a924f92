"""Tiled attention with an online softmax (Milakov & Gimelshein 2018, "Online normalizer calculation
for softmax"; Dao et al. 2022, "FlashAttention"), with a position bias such as ALiBi (Press et al.
2022) computed tile by tile, so that the L x L matrix of logits is never materialised.

The result equals ``softmax(q k^T / sqrt(d) + B, masked) v`` of ``posenc_solutions.alibi``'s
``masked_softmax`` (masked entries at exactly 0, a row with nothing visible all 0), the ALiBi bias
follows ``alibi_bias`` (``-m * distance``), and the positions follow Hugging Face transformers'
convention for a KV cache (``masking_utils.sdpa_mask`` with ``q_offset = Lk - Lq``): the ``Lq``
queries are the last ``Lq`` positions of the ``Lk`` keys. Checked against torch's
``scaled_dot_product_attention`` with an additive float mask (torch 2.13, in a scratch venv).
"""

import math

import numpy as np


def online_softmax_update(running_max, running_sum, accumulator, scores, values):
    r"""One step of the online softmax: fold a tile of keys into the running state of each query.

    The state of query row ``i`` after the keys seen so far is its largest score ``m_i``, the sum
    ``l_i = sum_j exp(s_ij - m_i)`` and the unnormalised output ``a_i = sum_j exp(s_ij - m_i) v_j``;
    the attention output is ``a_i / l_i``. A new tile of scores ``S`` (masked entries ``-inf``) and
    values ``V`` gives

    .. math::
        m'_i = \max\big(m_i, \max_j S_{ij}\big), \qquad
        l'_i = e^{m_i - m'_i}\, l_i + \sum_j e^{S_{ij} - m'_i}, \qquad
        a'_i = e^{m_i - m'_i}\, a_i + \sum_j e^{S_{ij} - m'_i}\, V_j

    The start state is ``m = -inf``, ``l = 0``, ``a = 0``. A row whose scores have all been
    ``-inf`` so far keeps exactly that state (the exponentials are taken against 0 instead of
    ``-inf``, so no ``-inf - (-inf)`` is ever formed).

    Parameters
    ----------
    running_max : array_like, shape (Tq,)
        ``m``, the largest score of each query so far (``-inf`` if none).
    running_sum : array_like, shape (Tq,)
        ``l``, relative to `running_max`.
    accumulator : array_like, shape (Tq, dv)
        ``a``, relative to `running_max`.
    scores : array_like, shape (Tq, Tk)
        Logits of the new key tile; ``-inf`` marks a masked entry.
    values : array_like, shape (Tk, dv)
        Values of the new key tile.

    Returns
    -------
    running_max : ndarray, shape (Tq,)
    running_sum : ndarray, shape (Tq,)
    accumulator : ndarray, shape (Tq, dv)
        New float64 arrays; the inputs are not modified.

    Raises
    ------
    ValueError
        If an input has the wrong number of dimensions, the shapes do not agree (`running_max`,
        `running_sum`, `accumulator` and `scores` one row per query, `values` one per key), or
        `scores` or `running_max` holds NaN or ``+inf``.

    Examples
    --------
    >>> m, l, a = online_softmax_update(np.full(2, -np.inf), np.zeros(2), np.zeros((2, 1)),
    ...                                 [[0.0, 0.0], [-np.inf, -np.inf]], [[1.0], [3.0]])
    >>> print(m, l, a.ravel())  # row 0 sees both keys, row 1 none yet
    [  0. -inf] [2. 0.] [4. 0.]
    >>> m, l, a = online_softmax_update(m, l, a, [[np.log(2.0)], [5.0]], [[6.0]])
    >>> print(np.round(a / l[:, None], 6).ravel())  # (1 + 3 + 2 * 6) / (1 + 1 + 2), then 6
    [4. 6.]
    """
    running_max = np.asarray(running_max, dtype=np.float64)
    running_sum = np.asarray(running_sum, dtype=np.float64)
    accumulator = np.asarray(accumulator, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    for name, array, ndim in (("running_max", running_max, 1), ("running_sum", running_sum, 1),
                              ("accumulator", accumulator, 2), ("scores", scores, 2),
                              ("values", values, 2)):
        if array.ndim != ndim:
            raise ValueError(f"{name} must be {ndim}-D, got shape {array.shape}")
    rows = running_max.shape[0]
    if running_sum.shape[0] != rows or accumulator.shape[0] != rows or scores.shape[0] != rows:
        raise ValueError(f"running_max {running_max.shape}, running_sum {running_sum.shape}, "
                         f"accumulator {accumulator.shape} and scores {scores.shape} must have the "
                         f"same number of rows")
    if values.shape != (scores.shape[1], accumulator.shape[1]):
        expected = (scores.shape[1], accumulator.shape[1])
        raise ValueError(f"values must have shape (Tk, dv) = {expected} for scores {scores.shape} "
                         f"and accumulator {accumulator.shape}, got {values.shape}")
    if np.any(np.isnan(scores) | (scores == np.inf)):
        raise ValueError(f"scores must not hold NaN or +inf (-inf masks an entry), got {scores!r}")
    if np.any(np.isnan(running_max) | (running_max == np.inf)):
        raise ValueError(f"running_max must not hold NaN or +inf, got {running_max!r}")
    new_max = np.maximum(running_max, np.max(scores, axis=1, initial=-np.inf))
    # rows with nothing visible yet: subtract 0, so exp(-inf - 0) = 0 and never -inf - (-inf)
    reference = np.where(np.isfinite(new_max), new_max, 0.0)
    rescale = np.exp(running_max - reference)
    weights = np.exp(scores - reference[:, None])
    new_sum = rescale * running_sum + weights.sum(axis=1)
    new_accumulator = rescale[:, None] * accumulator + weights @ values
    return new_max, new_sum, new_accumulator


def tiled_biased_attention(q, k, v, bias_fn, tile_size, causal=True):
    r"""Attention with a position bias, one tile of queries and keys at a time.

    Query ``i`` sits at position ``p_i = Lk - Lq + i`` (the last ``Lq`` positions, as when decoding
    with a KV cache) and key ``j`` at position ``j``. The result is

    .. math::
        O = \mathrm{softmax}_{\text{mask}}\!\Big(\frac{q k^\top}{\sqrt{d}} + B\Big)\, v, \qquad
        \text{mask}_{ij} = [\, j \le p_i \,] \text{ if causal},

    computed by cutting the queries and the keys into tiles of `tile_size` (the last ones
    smaller) and folding the key tiles of each query tile into an :func:`online_softmax_update`
    state. The bias of a tile is ``bias_fn(query_positions, key_positions)``: only ``Tq x Tk``
    values are ever held, never the ``Lq x Lk`` matrix. With ``causal=True`` a key tile that lies
    wholly after the last query of a query tile is skipped, and `bias_fn` is not called for it.

    Parameters
    ----------
    q : array_like, shape (Lq, d)
        Queries, at positions ``Lk - Lq ... Lk - 1``.
    k : array_like, shape (Lk, d)
        Keys, at positions ``0 ... Lk - 1``; ``Lq <= Lk``.
    v : array_like, shape (Lk, dv)
        Values, one per key.
    bias_fn : callable
        ``bias_fn(query_positions, key_positions)``, given two int64 arrays of at most
        `tile_size` positions each, returns the ``(Tq, Tk)`` bias of that tile (``-inf`` hides an
        entry). It is never asked for a key tile wholly after the query tile when `causal`.
    tile_size : int
        Side of a tile, >= 1.
    causal : bool, optional
        Hide the keys after each query (``j > p_i``). Default True.

    Returns
    -------
    ndarray, shape (Lq, dv)
        float64. A query that sees no key (its whole row masked) gets 0.

    Raises
    ------
    ValueError
        If `q`, `k` or `v` is not 2-D, ``d`` is 0 or differs between `q` and `k`, `k` and `v` have
        different lengths, ``Lq > Lk``, `tile_size` is not an integer >= 1, or `bias_fn` returns a
        tile of the wrong shape or holding NaN or ``+inf``.

    Examples
    --------
    >>> q, k, v = np.zeros((2, 1)), np.zeros((2, 1)), np.array([[1.0], [3.0]])
    >>> no_bias = lambda query_positions, key_positions: np.zeros((len(query_positions),
    ...                                                            len(key_positions)))
    >>> print(tiled_biased_attention(q, k, v, no_bias, tile_size=1))  # query 1 averages
    [[1.]
     [2.]]
    >>> slope_ln3 = lambda qp, kp: alibi_tile_bias(np.log(3.0), qp, kp)  # weights 1/3 : 1
    >>> print(np.round(tiled_biased_attention(q, k, v, slope_ln3, tile_size=1), 6))
    [[1. ]
     [2.5]]
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    for name, array in (("q", q), ("k", k), ("v", v)):
        if array.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {array.shape}")
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"q and k must have the same d, got q {q.shape} and k {k.shape}")
    if q.shape[1] == 0:
        raise ValueError(f"d must be >= 1, got q {q.shape}")
    if k.shape[0] != v.shape[0]:
        raise ValueError(f"k and v must have the same length Lk, got k {k.shape} and v {v.shape}")
    if q.shape[0] > k.shape[0]:
        raise ValueError(f"Lq must be <= Lk, got q {q.shape} and k {k.shape}")
    if isinstance(tile_size, (bool, np.bool_)) or not isinstance(tile_size, (int, np.integer)):
        raise ValueError(f"tile_size must be an integer, got {tile_size!r}")
    if tile_size < 1:
        raise ValueError(f"tile_size must be >= 1, got {tile_size}")
    tile = int(tile_size)
    q_length, k_length, dv = q.shape[0], k.shape[0], v.shape[1]
    offset = k_length - q_length
    scale = 1.0 / math.sqrt(q.shape[1])
    out = np.zeros((q_length, dv))
    for q_start in range(0, q_length, tile):
        q_stop = min(q_start + tile, q_length)
        q_positions = np.arange(q_start, q_stop, dtype=np.int64) + offset
        running_max = np.full(q_stop - q_start, -np.inf)
        running_sum = np.zeros(q_stop - q_start)
        accumulator = np.zeros((q_stop - q_start, dv))
        for k_start in range(0, k_length, tile):
            if causal and k_start > q_positions[-1]:
                break  # this key tile and every later one lie wholly in the future
            k_stop = min(k_start + tile, k_length)
            k_positions = np.arange(k_start, k_stop, dtype=np.int64)
            bias = np.asarray(bias_fn(q_positions.copy(), k_positions.copy()), dtype=np.float64)
            if bias.shape != (q_stop - q_start, k_stop - k_start):
                raise ValueError(f"bias_fn must return a tile of shape "
                                 f"{(q_stop - q_start, k_stop - k_start)} for query positions "
                                 f"{q_positions} and key positions {k_positions}, got {bias.shape}")
            if np.any(np.isnan(bias) | (bias == np.inf)):
                raise ValueError(f"bias_fn returned NaN or +inf for query positions {q_positions} "
                                 f"and key positions {k_positions}: {bias!r}")
            scores = q[q_start:q_stop] @ k[k_start:k_stop].T * scale + bias
            if causal:
                scores = np.where(k_positions[None, :] <= q_positions[:, None], scores, -np.inf)
            # the online softmax update (online_softmax_update), rows with nothing visible yet
            # taken against 0, so that exp(-inf - 0) = 0 and -inf - (-inf) is never formed
            new_max = np.maximum(running_max, np.max(scores, axis=1, initial=-np.inf))
            reference = np.where(np.isfinite(new_max), new_max, 0.0)
            rescale = np.exp(running_max - reference)
            weights = np.exp(scores - reference[:, None])
            running_sum = rescale * running_sum + weights.sum(axis=1)
            accumulator = rescale[:, None] * accumulator + weights @ v[k_start:k_stop]
            running_max = new_max
        out[q_start:q_stop] = accumulator / np.where(running_sum > 0, running_sum, 1.0)[:, None]
    return out


def alibi_tile_bias(slope, query_positions, key_positions):
    r"""ALiBi's bias for one tile of queries and keys, for one head.

    .. math::
        B_{ij} = -m\,(p_i - k_j)

    For keys up to the query this is ``alibi_bias``'s ``-m |p_i - k_j|``; for keys after the query
    it is positive (their masking is the caller's job, as in :func:`tiled_biased_attention`).

    Parameters
    ----------
    slope : float
        The head's slope ``m`` (``alibi_slopes``).
    query_positions : array_like of int, shape (Tq,)
    key_positions : array_like of int, shape (Tk,)

    Returns
    -------
    ndarray, shape (Tq, Tk)
        float64.

    Raises
    ------
    ValueError
        If `query_positions` or `key_positions` is not 1-D, or `slope` is not a finite number.

    Examples
    --------
    >>> print(alibi_tile_bias(0.5, [2, 3], [0, 1, 2, 3]))
    [[-1.  -0.5  0.   0.5]
     [-1.5 -1.  -0.5  0. ]]
    """
    slope_array = np.asarray(slope)
    if slope_array.ndim != 0 or slope_array.dtype.kind not in "iuf" or not np.isfinite(slope_array):
        raise ValueError(f"slope must be a finite number, got {slope!r}")
    query_positions = np.asarray(query_positions)
    key_positions = np.asarray(key_positions)
    if query_positions.ndim != 1:
        raise ValueError(f"query_positions must be 1-D, got shape {query_positions.shape}")
    if key_positions.ndim != 1:
        raise ValueError(f"key_positions must be 1-D, got shape {key_positions.shape}")
    distance = np.subtract.outer(query_positions.astype(np.float64),
                                 key_positions.astype(np.float64))
    return -float(slope) * distance + 0.0  # + 0.0 turns -0.0 (distance 0) into 0.0
