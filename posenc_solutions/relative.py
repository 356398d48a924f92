"""Exercises 3 and 4: relative distances, Shaw-style clipped bias and T5 buckets.

Offsets are ``query_position - key_position`` (positive for a key in the past),
except in the T5 functions, which keep T5's own ``key - query`` convention.
"""

import numpy as np


def relative_position_matrix(query_positions, key_positions):
    """Offsets between every query and every key.

    .. math::
        R_{ij} = q_i - k_j

    Parameters
    ----------
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)

    Returns
    -------
    ndarray of int64, shape (Lq, Lk)
        Positive where the key lies in the past of the query.

    Raises
    ------
    ValueError
        If `query_positions` or `key_positions` is not 1-D.

    Examples
    --------
    >>> print(relative_position_matrix([0, 1, 2], [0, 1, 2]))
    [[ 0 -1 -2]
     [ 1  0 -1]
     [ 2  1  0]]
    """
    query_positions = np.asarray(query_positions)
    key_positions = np.asarray(key_positions)
    if query_positions.ndim != 1 or key_positions.ndim != 1:
        raise ValueError(
            "query_positions and key_positions must be 1-D, got shapes "
            f"{query_positions.shape} and {key_positions.shape}"
        )
    return np.subtract.outer(query_positions, key_positions).astype(np.int64)


def causal_mask(query_positions, key_positions):
    """Which keys each query may attend to under causal masking.

    Parameters
    ----------
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)

    Returns
    -------
    ndarray of bool, shape (Lq, Lk)
        True where ``key_positions[j] <= query_positions[i]`` (visible).

    Raises
    ------
    ValueError
        If `query_positions` or `key_positions` is not 1-D.

    Examples
    --------
    >>> print(causal_mask([5, 6], [4, 5, 6]))
    [[ True  True False]
     [ True  True  True]]
    """
    return relative_position_matrix(query_positions, key_positions) >= 0


def clipped_relative_bias(bias_table, query_positions, key_positions):
    r"""Shaw-style relative bias: one learned scalar per head and clipped offset.

    .. math::
        B_{h,i,j} = T_{h,\; K + \mathrm{clip}(q_i - k_j, -K, K)}

    Parameters
    ----------
    bias_table : array_like, shape (H, 2K+1)
        Column ``K + r`` holds the bias for offset ``r``, ``-K <= r <= K``.
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)

    Returns
    -------
    ndarray, shape (H, Lq, Lk)
        Offsets beyond ``±K`` use the edge columns.

    Raises
    ------
    ValueError
        If `bias_table` is not 2-D or its width is even.

    Examples
    --------
    >>> table = np.array([[-1.0, 0.0, 1.0]])   # K = 1
    >>> print(clipped_relative_bias(table, [0, 5], [0, 1, 2]))
    [[[ 0. -1. -1.]
      [ 1.  1.  1.]]]
    """
    bias_table = np.asarray(bias_table)
    if bias_table.ndim != 2 or bias_table.shape[1] % 2 == 0:
        raise ValueError(f"bias_table must have shape (H, 2K+1) with an odd width, got shape {bias_table.shape}")
    max_offset = bias_table.shape[1] // 2
    offsets = np.subtract.outer(np.asarray(query_positions), np.asarray(key_positions)).astype(np.int64)
    return bias_table[:, np.clip(offsets, -max_offset, max_offset) + max_offset]


def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32,
                                max_distance=128):
    """T5's bucket for each relative position (``key - query``).

    Small distances get a bucket each; larger ones share log-spaced buckets up
    to `max_distance`, beyond which everything falls in the last bucket.
    Bidirectional buckets put keys in the future (``relative_position > 0``)
    in the upper half; causal buckets send every future key to bucket 0.

    Parameters
    ----------
    relative_position : array_like of int
        ``key_position - query_position`` (T5's ``memory - query``).
    bidirectional : bool, optional
    num_buckets : int, optional
        At least 4 when bidirectional (each direction's half needs an exact bucket and a log-spaced
        one), at least 2 when not.
    max_distance : int, optional
        Larger than the last exact distance, ``num_buckets // 4`` when bidirectional and
        ``num_buckets // 2`` when not: the log-spaced buckets lie between the two.

    Returns
    -------
    ndarray of int64, same shape as `relative_position`

    Raises
    ------
    ValueError
        If `num_buckets` is not an integer of at least 4 (bidirectional) or 2, or if
        `max_distance` is not a finite number larger than the last exact distance.

    Examples
    --------
    >>> print(t5_relative_position_bucket([0, -7, -8, -16, 1, 91]))
    [ 0  7  8 10 17 31]
    >>> print(t5_relative_position_bucket([-16, -113, 5], bidirectional=False))
    [16 31  0]
    """
    smallest = 4 if bidirectional else 2
    if (isinstance(num_buckets, (bool, np.bool_))
            or not isinstance(num_buckets, (int, float, np.integer, np.floating)) or num_buckets % 1 != 0
            or num_buckets < smallest):
        raise ValueError(f"num_buckets must be an integer >= {smallest} "
                         f"({'bidirectional' if bidirectional else 'causal'}), got {num_buckets!r}")
    num_buckets = int(num_buckets)
    last_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    if (isinstance(max_distance, (bool, np.bool_))
            or not isinstance(max_distance, (int, float, np.integer, np.floating))
            or not np.isfinite(max_distance) or not max_distance > last_exact):
        raise ValueError(f"max_distance must be a finite number larger than {last_exact}, the last exact "
                         f"distance of {num_buckets} buckets, got {max_distance!r}")
    relative_position = np.asarray(relative_position).astype(np.int64)
    if bidirectional:
        num_buckets //= 2
        bucket = np.where(relative_position > 0, num_buckets, 0)
        distance = np.abs(relative_position)
    else:
        bucket = np.zeros_like(relative_position)
        distance = np.maximum(-relative_position, 0)
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    log_ratio = np.log(np.maximum(distance, max_exact) / max_exact) / np.log(max_distance / max_exact)
    large = max_exact + np.floor(log_ratio * (num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return bucket + np.where(is_small, distance, large)


def t5_relative_bias(bias_table, query_positions, key_positions, bidirectional=True,
                     max_distance=128):
    r"""T5 relative attention bias: a learned scalar per head and bucket.

    .. math::
        B_{h,i,j} = T_{h,\; \mathrm{bucket}(k_j - q_i)}

    Parameters
    ----------
    bias_table : array_like, shape (H, num_buckets)
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)
    bidirectional : bool, optional
    max_distance : int, optional

    Returns
    -------
    ndarray, shape (H, Lq, Lk)

    Raises
    ------
    ValueError
        If `bias_table` is not 2-D.

    Examples
    --------
    >>> table = np.arange(32.0)[None, :]
    >>> print(t5_relative_bias(table, [0, 1], [0, 1]))
    [[[ 0. 17.]
      [ 1.  0.]]]
    """
    bias_table = np.asarray(bias_table)
    if bias_table.ndim != 2:
        raise ValueError(f"bias_table must have shape (H, num_buckets), got shape {bias_table.shape}")
    key_minus_query = np.asarray(key_positions)[None, :] - np.asarray(query_positions)[:, None]
    buckets = t5_relative_position_bucket(
        key_minus_query, bidirectional=bidirectional,
        num_buckets=bias_table.shape[1], max_distance=max_distance,
    )
    return bias_table[:, buckets]
