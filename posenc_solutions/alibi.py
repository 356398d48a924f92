"""Exercise 7: ALiBi (Press et al., 2022), with the bias before the softmax and the mask kept separate."""

import math

import numpy as np


def alibi_slopes(num_heads):
    """ALiBi's per-head slopes, as in Press et al.'s reference code.

    For ``n`` a power of two the slopes are ``r, r**2, ..., r**n`` with
    ``r = 2**(-8/n)``. Otherwise, with ``c = 2**floor(log2 n)``, they are
    ``slopes(c)`` followed by ``slopes(2c)[0::2][:n-c]``.

    Parameters
    ----------
    num_heads : int
        Number of heads, >= 1.

    Returns
    -------
    ndarray, shape (num_heads,)

    Raises
    ------
    ValueError
        If ``num_heads < 1``.

    Examples
    --------
    >>> print(alibi_slopes(4))
    [0.25       0.0625     0.015625   0.00390625]
    >>> print(np.round(alibi_slopes(6), 4))
    [0.25   0.0625 0.0156 0.0039 0.5    0.125 ]
    """
    if (isinstance(num_heads, (bool, np.bool_))
            or not isinstance(num_heads, (int, float, np.integer, np.floating)) or num_heads % 1 != 0
            or num_heads < 1):
        raise ValueError(f"num_heads must be an integer >= 1, got {num_heads!r}")
    num_heads = int(num_heads)
    closest = 2 ** int(math.floor(math.log2(num_heads)))
    base_slopes = 2.0 ** (-8.0 / closest * np.arange(1, closest + 1))
    extra_slopes = 2.0 ** (-8.0 / (2 * closest) * np.arange(1, 2 * closest + 1))[0::2][:num_heads - closest]
    return np.concatenate([base_slopes, extra_slopes])


def alibi_bias(slopes, query_positions, key_positions):
    r"""ALiBi's linear distance penalty for each head.

    .. math::
        B_{h,i,j} = -m_h \, |q_i - k_j|

    Parameters
    ----------
    slopes : array_like, shape (H,)
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)

    Returns
    -------
    ndarray, shape (H, Lq, Lk)

    Examples
    --------
    >>> print(alibi_bias([0.5], [2], [0, 1, 2, 3]))
    [[[-1.  -0.5 -0.  -0.5]]]
    """
    slopes = np.asarray(slopes, dtype=np.float64)
    distance = np.abs(np.subtract.outer(np.asarray(query_positions), np.asarray(key_positions)))
    return -slopes[:, None, None] * distance


def masked_softmax(logits, mask):
    r"""Numerically stable softmax over the last axis, with masked entries at exactly 0.

    .. math::
        w_j = \frac{\mathbb{1}[\text{mask}_j]\, e^{z_j - \max_{\text{visible}} z}}
                   {\sum_{k} \mathbb{1}[\text{mask}_k]\, e^{z_k - \max_{\text{visible}} z}}

    Parameters
    ----------
    logits : array_like, shape (..., L)
    mask : array_like of bool
        Broadcasts against `logits`; True marks a visible entry.

    Returns
    -------
    ndarray, the broadcast shape of `logits` and `mask`
        Rows sum to 1, or to 0 where nothing is visible.

    Examples
    --------
    >>> print(masked_softmax([[1e4, 1e4, 0.0], [5.0, 1.0, 2.0]],
    ...                      [[True, True, False], [False, False, False]]))
    [[0.5 0.5 0. ]
     [0.  0.  0. ]]
    """
    logits = np.asarray(logits, dtype=np.result_type(np.asarray(logits), 1.0))
    mask = np.asarray(mask, dtype=bool)
    hidden = np.where(mask, logits, -np.inf)
    row_max = np.max(hidden, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    weights = np.exp(hidden - row_max)
    total = np.sum(weights, axis=-1, keepdims=True)
    weights /= np.where(total > 0, total, 1.0)
    return weights


def alibi_attention(scores, slopes, query_positions, key_positions, causal=True):
    r"""Attention weights with ALiBi: bias added to the scores before the softmax.

    .. math::
        W = \mathrm{softmax}_{\text{mask}}(S + B)

    The mask is applied inside the softmax, never by multiplying the weights
    afterwards.

    Parameters
    ----------
    scores : array_like, shape (H, Lq, Lk) or (Lq, Lk)
        Content scores ``q . k / sqrt(d)``.
    slopes : array_like, shape (H,)
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)
    causal : bool, optional
        Hide keys after the query. Default True.

    Returns
    -------
    ndarray, shape (H, Lq, Lk)

    Examples
    --------
    >>> w = alibi_attention(np.zeros((3, 3)), [1.0], [0, 1, 2], [0, 1, 2])
    >>> print(np.round(w, 3))
    [[[1.    0.    0.   ]
      [0.269 0.731 0.   ]
      [0.09  0.245 0.665]]]
    """
    logits = alibi_bias(slopes, query_positions, key_positions)
    logits += np.asarray(scores)  # the bias enters before the softmax, in place to save memory
    if causal:
        mask = np.asarray(key_positions)[None, :] <= np.asarray(query_positions)[:, None]
    else:
        mask = np.ones(logits.shape[1:], dtype=bool)
    return masked_softmax(logits, mask)
