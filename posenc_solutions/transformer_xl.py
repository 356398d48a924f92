"""Transformer-XL's relative attention (Dai et al. 2019): the four-term score with the global
content and position biases u and v, over a segment and its memory.
"""

import math

import numpy as np


def transformer_xl_relative_encodings(key_length, d_model):
    r"""Transformer-XL's sinusoidal encodings of the distances, in descending order.

    Row ``m`` encodes the distance ``delta = key_length - 1 - m`` (row 0 is the largest
    distance, the last row distance 0), as Transformer-XL's
    ``pos_seq = arange(klen - 1, -1, -1)`` does. The layout is Transformer-XL's, NOT the
    interleaved one of the first assignment: the first half of the row holds all the sines,
    the second half all the cosines,

    .. math::
        R_{m} = [\sin(\delta w_0), \dots, \sin(\delta w_{d/2-1}),
                 \cos(\delta w_0), \dots, \cos(\delta w_{d/2-1})],
        \qquad w_t = 10000^{-2t/d}.

    Parameters
    ----------
    key_length : int
        Number of keys ``Lk`` (memory plus segment), >= 1.
    d_model : int
        Width of an encoding, even and >= 2.

    Returns
    -------
    ndarray of float, shape (key_length, d_model)

    Raises
    ------
    ValueError
        If `key_length` is not an integer >= 1, or `d_model` is not an even integer >= 2.

    Examples
    --------
    >>> print(np.round(transformer_xl_relative_encodings(2, 2), 4))
    [[0.8415 0.5403]
     [0.     1.    ]]
    >>> print(np.round(transformer_xl_relative_encodings(3, 4), 4))
    [[ 0.9093  0.02   -0.4161  0.9998]
     [ 0.8415  0.01    0.5403  1.    ]
     [ 0.      0.      1.      1.    ]]
    """
    for name, value in (("key_length", key_length), ("d_model", d_model)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if key_length < 1:
        raise ValueError(f"key_length must be >= 1, got {key_length}")
    if d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be even and >= 2, got {d_model}")
    key_length, d_model = int(key_length), int(d_model)
    distances = np.arange(key_length - 1, -1, -1, dtype=np.float64)
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    angles = np.outer(distances, inv_freq)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)


def rel_shift(x):
    r"""Transformer-XL's ``_rel_shift``: turn "query i, row m of R" into "query i, key j".

    The steps, on the last two axes ``(Lq, Lk)`` (``Lk >= Lq``): pad one column of zeros on
    the LEFT of the last axis (shape ``(Lq, Lk + 1)``), reshape those two axes to
    ``(Lk + 1, Lq)``, drop the first row, and reshape the rest back to ``(Lq, Lk)``.

    What comes out, with ``M = Lk - Lq`` (the memory length):

    - for ``j <= M + i``: ``out[..., i, j] = x[..., i, j + Lq - 1 - i]``. So if column ``m``
      of `x` holds distance ``Lk - 1 - m`` (the row order of
      :func:`transformer_xl_relative_encodings`), ``out[..., i, j]`` holds distance
      ``M + i - j``: query ``i`` sits at position ``M + i``, key ``j`` at position ``j``.
    - for ``j > M + i`` (future keys): filler (a zero, then values of row ``i + 1``). Those
      entries mean nothing; the causal mask removes them, and their values are not part of
      this contract (any values are accepted there).

    Parameters
    ----------
    x : array_like, shape (..., Lq, Lk)
        With ``Lk >= Lq``; any leading (batch, head) dimensions.

    Returns
    -------
    ndarray, shape (..., Lq, Lk)
        A new array; `x` is not modified.

    Raises
    ------
    ValueError
        If `x` has fewer than 2 dimensions, or ``Lk < Lq``.

    Examples
    --------
    >>> x = np.array([[0, 1, 2], [10, 11, 12]])
    >>> print(rel_shift(x))  # out[0, 2] is filler
    [[ 1  2  0]
     [10 11 12]]
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., Lq, Lk), got shape {x.shape}")
    lq, lk = x.shape[-2:]
    if lk < lq:
        raise ValueError(f"rel_shift needs Lk >= Lq, got Lq={lq}, Lk={lk}")
    lead = x.shape[:-2]
    zero_column = np.zeros(lead + (lq, 1), dtype=x.dtype)
    padded = np.concatenate([zero_column, x], axis=-1)
    padded = padded.reshape(lead + (lk + 1, lq))
    return padded[..., 1:, :].reshape(lead + (lq, lk))


def transformer_xl_scores(q, k, r, u, v):
    r"""Transformer-XL's attention scores: the four terms (a) to (d), scaled, future masked.

    The keys are the memory's ``M = Lk - Lq`` cached tokens followed by the segment's ``Lq``
    tokens: key ``j`` is at position ``j``, query ``i`` at position ``M + i``, and their
    distance is ``delta = M + i - j``. Row ``m`` of `r` holds the (already projected)
    encoding of distance ``Lk - 1 - m``, so distance ``delta`` is row ``Lk - 1 - delta``:

    .. math::
        s_{ij} = \frac{(q_i + u)\cdot k_j + (q_i + v)\cdot r_{L_k - 1 - \delta}}{\sqrt{d}}
        \quad (\delta \ge 0), \qquad s_{ij} = -\infty \quad (\delta < 0).

    ``(q_i + u) . k_j`` holds terms (a) and (c) of the paper, ``(q_i + v) . r`` terms (b) and
    (d) (the code's ``AC`` and ``BD``); ``d`` is the width of `q`.

    Parameters
    ----------
    q : array_like, shape (..., Lq, d)
        Queries of the segment.
    k : array_like, shape (..., Lk, d)
        Keys of the memory then the segment, ``Lk >= Lq``; leading dimensions as in `q`
        (or broadcastable with them).
    r : array_like, shape (Lk, d)
        Projected relative encodings, row ``m`` for distance ``Lk - 1 - m``.
    u : array_like, shape (d,)
        Global content bias (added to the query in the content term).
    v : array_like, shape (d,)
        Global position bias (added to the query in the position term).

    Returns
    -------
    ndarray of float, shape (..., Lq, Lk)
        The scores, with ``-np.inf`` exactly where ``j > M + i`` (a future key).

    Raises
    ------
    ValueError
        If `q` or `k` has fewer than 2 dimensions, their widths differ, ``Lk < Lq``, `r` is
        not of shape ``(Lk, d)``, or `u` or `v` is not of shape ``(d,)``.

    Examples
    --------
    >>> q = np.array([[2.0, 0, 0, 0], [0, 2.0, 0, 0]])
    >>> k = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [1.0, 1.0, 0, 0]])
    >>> r = np.array([[0, 0, 3.0, 0], [0, 0, 0, 2.0], [0, 0, 0, 0]])  # distances 2, 1, 0
    >>> print(transformer_xl_scores(q, k, r, np.zeros(4), np.array([0, 0, 1.0, 1.0])))
    [[ 2.   0.  -inf]
     [ 1.5  2.   1. ]]
    """
    q = np.asarray(q, dtype=np.result_type(np.asarray(q), 1.0))
    k = np.asarray(k, dtype=np.result_type(np.asarray(k), 1.0))
    r, u, v = (np.asarray(a, dtype=np.result_type(np.asarray(a), 1.0)) for a in (r, u, v))
    if q.ndim < 2 or k.ndim < 2:
        raise ValueError(f"q and k must be (..., L, d), got shapes {q.shape} and {k.shape}")
    lq, d = q.shape[-2:]
    lk = k.shape[-2]
    if k.shape[-1] != d:
        raise ValueError(f"q and k must have the same width, got {d} and {k.shape[-1]}")
    if lk < lq:
        raise ValueError(f"Lk must be >= Lq (memory first), got Lq={lq}, Lk={lk}")
    if r.shape != (lk, d):
        raise ValueError(f"r must have shape (Lk, d) = {(lk, d)}, got {r.shape}")
    if u.shape != (d,) or v.shape != (d,):
        raise ValueError(f"u and v must have shape (d,) = {(d,)}, got {u.shape} and {v.shape}")
    memory = lk - lq
    content = (q + u) @ np.swapaxes(k, -1, -2)          # terms (a) + (c), (..., Lq, Lk)
    by_row = (q + v) @ r.T                              # (b) + (d) for every row m of r
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    distance = memory + i - j
    visible = distance >= 0
    row = np.where(visible, lk - 1 - distance, 0)       # row of r for distance M + i - j
    position = np.take_along_axis(by_row, np.broadcast_to(row, by_row.shape), axis=-1)
    scores = (content + position) / math.sqrt(d)
    return np.where(visible, scores, -np.inf)
