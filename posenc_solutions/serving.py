"""Position ids in serving: packed sequences (positions reset at each document), and the positions
kept by sliding-window and attention-sink (StreamingLLM) caches.
"""

import math

import numpy as np


def packed_position_ids(document_lengths):
    """Position ids of documents packed end to end into one row, without padding.

    Each document's positions restart at 0, as Hugging Face's ``DataCollatorWithFlattening``
    produces them: lengths ``[3, 2]`` give ``[0, 1, 2, 0, 1]``.

    Parameters
    ----------
    document_lengths : array_like of int, shape (n,)
        The number of tokens of each document, in packing order (a list, tuple or array).

    Returns
    -------
    ndarray of int64, shape (sum(document_lengths),)

    Raises
    ------
    ValueError
        If `document_lengths` is not 1-D, is empty, or holds a length < 1 (or a non-integer).

    Examples
    --------
    >>> print(packed_position_ids([3, 2]))
    [0 1 2 0 1]
    """
    lengths = np.asarray(document_lengths)
    if lengths.ndim != 1 or lengths.size == 0:
        raise ValueError(f"document_lengths must be a non-empty 1-D list, got {document_lengths!r}")
    if lengths.dtype.kind not in "iuf" or np.any(lengths != np.round(lengths)):
        raise ValueError(f"document_lengths must hold integers, got {document_lengths!r}")
    if np.any(lengths < 1):
        raise ValueError(f"every document needs at least one token, got {document_lengths!r}")
    lengths = lengths.astype(np.int64)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) - starts


def packed_causal_mask(document_lengths):
    """Attention mask of a packed row: causal inside each document, nothing across documents.

    Entry ``[i, j]`` is True when key ``j`` belongs to the same document as query ``i`` and
    ``j <= i`` (a block-diagonal causal mask).

    Parameters
    ----------
    document_lengths : array_like of int, shape (n,)
        The number of tokens of each document, in packing order.

    Returns
    -------
    ndarray of bool, shape (L, L)
        ``L = sum(document_lengths)``.

    Raises
    ------
    ValueError
        If `document_lengths` is not 1-D, is empty, or holds a length < 1 (or a non-integer).

    Examples
    --------
    >>> print(packed_causal_mask([2, 1]).astype(int))
    [[1 0 0]
     [1 1 0]
     [0 0 1]]
    """
    lengths = np.asarray(document_lengths)
    if lengths.ndim != 1 or lengths.size == 0:
        raise ValueError(f"document_lengths must be a non-empty 1-D list, got {document_lengths!r}")
    if lengths.dtype.kind not in "iuf" or np.any(lengths != np.round(lengths)):
        raise ValueError(f"document_lengths must hold integers, got {document_lengths!r}")
    if np.any(lengths < 1):
        raise ValueError(f"every document needs at least one token, got {document_lengths!r}")
    lengths = lengths.astype(np.int64)
    document = np.repeat(np.arange(len(lengths)), lengths)
    index = np.arange(len(document))
    return (document[:, None] == document[None, :]) & (index[None, :] <= index[:, None])


def sliding_window_positions(num_tokens, window):
    """Original positions of the keys a sliding-window KV cache holds (Mistral's rolling buffer).

    After `num_tokens` tokens (positions ``0 .. num_tokens - 1``), a cache of `window` keys holds
    the last ``min(window, num_tokens)`` of them.

    Parameters
    ----------
    num_tokens : int
        Tokens seen so far, >= 0.
    window : int
        Size of the cache, >= 1.

    Returns
    -------
    ndarray of int64, shape (min(window, num_tokens),)
        The positions, ascending.

    Raises
    ------
    ValueError
        If `window` < 1 or `num_tokens` < 0 (or either is not an integer).

    Examples
    --------
    >>> print(sliding_window_positions(10, 4))
    [6 7 8 9]
    """
    if (isinstance(num_tokens, (bool, np.bool_))
            or not isinstance(num_tokens, (int, float, np.integer, np.floating)) or num_tokens % 1 != 0
            or num_tokens < 0):
        raise ValueError(f"num_tokens must be an integer >= 0, got {num_tokens!r}")
    num_tokens = int(num_tokens)
    if (isinstance(window, (bool, np.bool_)) or not isinstance(window, (int, float, np.integer, np.floating))
            or window % 1 != 0 or window < 1):
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    window = int(window)
    return np.arange(max(num_tokens - window, 0), num_tokens, dtype=np.int64)


def attention_sink_positions(num_tokens, cache_size, num_sinks):
    """Original positions of the keys a StreamingLLM cache holds (Xiao et al., 2023).

    After `num_tokens` tokens (positions ``0 .. num_tokens - 1``): all of them while
    ``num_tokens <= cache_size``; otherwise the first `num_sinks` (the attention sinks) followed by
    the most recent ``cache_size - num_sinks``. StreamingLLM then gives RoPE the positions *within
    the cache*, ``0 .. len - 1``, not these original positions.

    Parameters
    ----------
    num_tokens : int
        Tokens seen so far, >= 0.
    cache_size : int
        Keys the cache holds in all, sinks included, >= 1.
    num_sinks : int
        Initial tokens kept for ever, ``0 <= num_sinks < cache_size``.

    Returns
    -------
    ndarray of int64, shape (min(cache_size, num_tokens),)
        The positions, ascending.

    Raises
    ------
    ValueError
        If `cache_size` < 1, `num_sinks` < 0, ``num_sinks >= cache_size`` or `num_tokens` < 0
        (or one of them is not an integer).

    Examples
    --------
    >>> print(attention_sink_positions(10, 6, 2))
    [0 1 6 7 8 9]
    >>> print(attention_sink_positions(5, 6, 2))
    [0 1 2 3 4]
    """
    if (isinstance(num_tokens, (bool, np.bool_))
            or not isinstance(num_tokens, (int, float, np.integer, np.floating)) or num_tokens % 1 != 0
            or num_tokens < 0):
        raise ValueError(f"num_tokens must be an integer >= 0, got {num_tokens!r}")
    num_tokens = int(num_tokens)
    if (isinstance(cache_size, (bool, np.bool_))
            or not isinstance(cache_size, (int, float, np.integer, np.floating)) or cache_size % 1 != 0
            or cache_size < 1):
        raise ValueError(f"cache_size must be an integer >= 1, got {cache_size!r}")
    cache_size = int(cache_size)
    if (isinstance(num_sinks, (bool, np.bool_))
            or not isinstance(num_sinks, (int, float, np.integer, np.floating)) or num_sinks % 1 != 0
            or num_sinks < 0):
        raise ValueError(f"num_sinks must be an integer >= 0, got {num_sinks!r}")
    num_sinks = int(num_sinks)
    if num_sinks >= cache_size:
        raise ValueError(f"num_sinks ({num_sinks}) must be smaller than cache_size ({cache_size})")
    if num_tokens <= cache_size:
        return np.arange(num_tokens, dtype=np.int64)
    recent = cache_size - num_sinks
    return np.concatenate([np.arange(num_sinks), np.arange(num_tokens - recent, num_tokens)]
                          ).astype(np.int64)
