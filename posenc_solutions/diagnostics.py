"""Exercise 10: long-context diagnostics for attention patterns and positional schemes."""

import numpy as np


def mean_attention_distance(weights, query_positions, key_positions):
    r"""How far each head looks, on average.

    .. math::
        D_h = \frac{1}{L_q} \sum_i \sum_j w_{h,i,j}\, |q_i - k_j|

    Parameters
    ----------
    weights : array_like, shape (H, Lq, Lk)
        Attention weights; rows sum to 1.
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)

    Returns
    -------
    ndarray, shape (H,)

    Examples
    --------
    >>> w = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])
    >>> print(mean_attention_distance(w, [0, 1], [0, 1]))
    [0.5 0. ]
    """
    weights = np.asarray(weights, dtype=np.float64)
    distance = np.abs(np.subtract.outer(np.asarray(query_positions), np.asarray(key_positions)))
    return np.einsum("hij,ij->hi", weights, distance).mean(axis=-1)


def attention_entropy(weights):
    r"""Mean entropy of each head's attention rows, in nats, with ``0 log 0 = 0``.

    .. math::
        H_h = -\frac{1}{L_q} \sum_i \sum_j w_{h,i,j} \log w_{h,i,j}

    Parameters
    ----------
    weights : array_like, shape (H, Lq, Lk)

    Returns
    -------
    ndarray, shape (H,)

    Examples
    --------
    >>> w = np.array([[[1.0, 0.0, 0.0, 0.0]], [[0.25, 0.25, 0.25, 0.25]]])
    >>> print(np.round(attention_entropy(w), 4))
    [0.     1.3863]
    """
    weights = np.asarray(weights, dtype=np.float64)
    safe = np.where(weights > 0, weights, 1.0)
    return 0.0 - (weights * np.log(safe)).sum(axis=-1).mean(axis=-1)


def shift_invariance_gap(logit_fn, q, k, shift):
    """How much a scheme's logits change when every position moves by `shift`.

    0 for a relative scheme (RoPE, ALiBi, T5); usually not for an absolute one.

    Parameters
    ----------
    logit_fn : callable
        ``logit_fn(q, k, positions)`` returns ``(L, L)`` logits.
    q, k : array_like, shape (L, d)
    shift : int

    Returns
    -------
    float
        ``max |logit_fn(q, k, p) - logit_fn(q, k, p + shift)|`` with ``p = arange(L)``.

    Examples
    --------
    >>> q = k = np.ones((3, 2))
    >>> shift_invariance_gap(lambda q, k, p: q @ k.T - np.subtract.outer(p, p) ** 2, q, k, 100)
    0.0
    >>> shift_invariance_gap(lambda q, k, p: q @ k.T + p[:, None], q, k, 100)
    100.0
    """
    positions = np.arange(np.asarray(q).shape[0])
    before = np.asarray(logit_fn(q, k, positions), dtype=np.float64)
    after = np.asarray(logit_fn(q, k, positions + shift), dtype=np.float64)
    return float(np.max(np.abs(before - after)))


def needle_attention_by_depth(bias_fn, context_len, depths, needle_logit=5.0):
    """Attention that the last query pays to one needle, at several depths.

    The query sits at ``context_len - 1``; keys at ``0 .. context_len - 1``
    all have content logit 0, except the needle at
    ``round(depth * (context_len - 1))``, which has `needle_logit`.

    Parameters
    ----------
    bias_fn : callable
        ``bias_fn(query_positions, key_positions)`` returns the ``(H, Lq, Lk)``
        positional bias.
    context_len : int
        >= 1.
    depths : array_like, shape (D,)
        Each in ``[0, 1]``: 0 is the start of the context, 1 its end.
    needle_logit : float, optional

    Returns
    -------
    ndarray, shape (H, D)
        The softmax weight on the needle, per head and depth.

    Raises
    ------
    ValueError
        If `context_len` is not an integer >= 1 (a bool, ``inf`` or ``nan`` is not), or one of
        `depths` is outside ``[0, 1]``.

    Examples
    --------
    >>> no_bias = lambda qp, kp: np.zeros((1, len(qp), len(kp)))
    >>> weights = needle_attention_by_depth(no_bias, 4, [0.0, 1.0], needle_logit=np.log(3))
    >>> print(np.round(weights, 3))
    [[0.5 0.5]]
    """
    depths = np.asarray(depths, dtype=np.float64)
    if (isinstance(context_len, (bool, np.bool_))
            or not isinstance(context_len, (int, float, np.integer, np.floating))
            or context_len % 1 != 0 or context_len < 1):
        raise ValueError(f"context_len must be an integer >= 1, got {context_len!r}")
    if depths.size and not ((depths >= 0) & (depths <= 1)).all():
        raise ValueError(f"depths must lie in [0, 1], got {depths}")
    key_positions = np.arange(int(context_len))
    query_positions = key_positions[-1:]
    bias = np.asarray(bias_fn(query_positions, key_positions), dtype=np.float64)[:, 0, :]
    needles = np.round(depths * (context_len - 1)).astype(np.int64)
    logits = np.broadcast_to(bias[:, None, :], (bias.shape[0], depths.size, context_len)).copy()
    logits[:, np.arange(depths.size), needles] += needle_logit
    logits -= logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights[:, np.arange(depths.size), needles]
