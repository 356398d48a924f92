"""Exercise 9: position ids with padding and a KV cache."""

import numpy as np


def position_ids_from_attention_mask(attention_mask):
    """Position ids that count real tokens only.

    In each row the k-th real token (mask 1) gets id k, counting from 0;
    padding slots get 0. Left padding, right padding and gaps all work.

    Parameters
    ----------
    attention_mask : array_like of {0, 1} or bool, shape (B, L)

    Returns
    -------
    ndarray of int64, shape (B, L)

    Raises
    ------
    ValueError
        If `attention_mask` is not 2-D or holds values other than 0 and 1.

    Examples
    --------
    >>> print(position_ids_from_attention_mask([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0]]))
    [[0 0 0 1 2]
     [0 1 2 0 0]]
    """
    mask = np.asarray(attention_mask)
    if mask.ndim != 2:
        raise ValueError(f"attention_mask must be 2-D (B, L), got shape {mask.shape}")
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("attention_mask must only hold 0/1 (or False/True) values")
    real = mask.astype(np.int64)
    return np.where(real == 1, np.cumsum(real, axis=-1) - 1, 0)


def decode_position_ids(attention_mask, num_new_tokens):
    """Position ids for the next `num_new_tokens` generated tokens.

    Row ``b`` is ``n_b, n_b + 1, ..., n_b + T - 1``, where ``n_b`` is the
    number of real tokens in row ``b``: padding does not count.

    Parameters
    ----------
    attention_mask : array_like of {0, 1} or bool, shape (B, L)
    num_new_tokens : int
        ``T``, >= 0.

    Returns
    -------
    ndarray of int64, shape (B, T)

    Raises
    ------
    ValueError
        If `num_new_tokens` is not an integer >= 0 (a bool, ``inf`` or ``nan`` is not), or for a bad
        `attention_mask` as in `position_ids_from_attention_mask`.

    Examples
    --------
    >>> print(decode_position_ids([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]], 3))
    [[3 4 5]
     [5 6 7]]
    """
    position_ids_from_attention_mask(attention_mask)  # raises for a bad mask
    mask = np.asarray(attention_mask)
    if (isinstance(num_new_tokens, (bool, np.bool_))
            or not isinstance(num_new_tokens, (int, float, np.integer, np.floating))
            or num_new_tokens % 1 != 0 or num_new_tokens < 0):
        raise ValueError(f"num_new_tokens must be an integer >= 0, got {num_new_tokens!r}")
    num_real = mask.astype(np.int64).sum(axis=-1)
    return num_real[:, None] + np.arange(int(num_new_tokens), dtype=np.int64)


def first_bad_decode_step(prompt_len, observed_position_ids):
    """First decode step whose position id is wrong.

    Step ``t`` should carry id ``prompt_len + t``.

    Parameters
    ----------
    prompt_len : int
        Number of real tokens in the prompt.
    observed_position_ids : array_like of int, shape (T,)
        The ids the decoder actually used, one per step.

    Returns
    -------
    int or None
        The first wrong step, or None if every step is right (or T = 0).

    Examples
    --------
    >>> first_bad_decode_step(4, [4, 5, 5, 7])
    2
    >>> print(first_bad_decode_step(4, [4, 5, 6]))
    None
    """
    observed = np.asarray(observed_position_ids).ravel()
    wrong = np.flatnonzero(observed != prompt_len + np.arange(observed.size))
    return int(wrong[0]) if wrong.size else None
