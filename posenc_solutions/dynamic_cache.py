"""Stale keys: a KV cache under a RoPE whose frequencies depend on the sequence length.

Dynamic NTK scaling (``rope_type="dynamic"``) and LongRoPE (``rope_type="longrope"``) choose their
frequencies from the current length. A KV cache stores keys already rotated, so each key keeps the
frequencies of the step that computed it: after a prefill of ``P`` tokens and decoding one token at
a time, the cache mixes keys rotated for ``P`` tokens, ``P + 1``, ... while the newest query is
rotated for the newest length. This is what Hugging Face transformers does
(``modeling_rope_utils.dynamic_rope_update``: the frequencies are recomputed in the forward pass
from ``max(position_ids) + 1``, and the cache is left as it is), checked against transformers 5.24.0
in ``tests/system/test_hf_agreement.py``.

The rotation is the half-split (``rotate_half``) layout of HF's Llama: pair ``t`` is dimensions
``(t, t + d/2)``.
"""

import numpy as np


def rotation_lengths(num_tokens, prompt_len):
    r"""The sequence length each cached key was rotated for: ``P`` for the prompt,
    ``t + 1`` after it.

    The prompt's ``P`` tokens are computed in one forward pass, whose length is ``P``; then the
    token at position ``t >= P`` is computed alone, in a pass whose length is ``t + 1`` (its
    position ids end at ``t``):

    .. math::
        \ell_t = \begin{cases} P & t < P \\ t + 1 & t \ge P \end{cases}

    Parameters
    ----------
    num_tokens : int
        ``N`` >= 1, the tokens in the cache (positions ``0 .. N-1``).
    prompt_len : int
        ``P``, with ``1 <= P <= N``.

    Returns
    -------
    ndarray of int64, shape (num_tokens,)

    Raises
    ------
    ValueError
        If `num_tokens` or `prompt_len` is not an integer, ``num_tokens < 1``, or `prompt_len` is
        not in ``[1, num_tokens]``.

    Examples
    --------
    >>> rotation_lengths(6, 3).tolist()
    [3, 3, 3, 4, 5, 6]
    """
    for name, value in (("num_tokens", num_tokens), ("prompt_len", prompt_len)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if not 1 <= prompt_len <= num_tokens:  # so num_tokens >= 1 too
        raise ValueError(f"need 1 <= prompt_len <= num_tokens, got prompt_len={prompt_len}, num_tokens={num_tokens}")
    positions = np.arange(int(num_tokens), dtype=np.int64)
    return np.maximum(positions + 1, int(prompt_len))


def cached_keys(keys, prompt_len, inv_freq_for_length):
    r"""The keys a KV cache holds after a prefill of `prompt_len` tokens
    and decoding the rest one by one.

    Key ``t`` (at position ``t``) is rotated with the frequencies of the length it was computed at,
    ``theta^{(l_t)} = inv_freq_for_length(l_t)`` with ``l_t`` from :func:`rotation_lengths`, in the
    half-split layout (``j = 0 .. d/2 - 1``):

    .. math::
        k'_{t,j} = k_{t,j} \cos t\theta^{(\ell_t)}_j - k_{t,j+d/2} \sin t\theta^{(\ell_t)}_j, \qquad
        k'_{t,j+d/2} = k_{t,j+d/2} \cos t\theta^{(\ell_t)}_j + k_{t,j} \sin t\theta^{(\ell_t)}_j

    Parameters
    ----------
    keys : array_like, shape (..., N, d)
        The keys before rotation, token ``t`` at position ``t``; ``d`` even.
    prompt_len : int
        ``P``, with ``1 <= P <= N``.
    inv_freq_for_length : callable
        ``inv_freq_for_length(length)`` returns the ``d/2`` inverse frequencies for a sequence of
        ``length`` tokens (for dynamic NTK, ``dynamic_ntk_inv_freq(d, b, s, L, length)``). It is
        called once for each distinct length.

    Returns
    -------
    ndarray, shape (..., N, d)
        Floating; `keys` is not modified.

    Raises
    ------
    ValueError
        If ``keys.ndim < 2``, ``d`` is odd, `prompt_len` is not an integer in ``[1, N]``, or
        `inv_freq_for_length` returns an array whose shape is not ``(d // 2,)``.

    Examples
    --------
    Frequencies that halve once the length passes 2: the key at position 2, decoded at length 3,
    turns by ``2 * 0.5`` radians instead of 2.

    >>> keys = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> print(np.round(cached_keys(keys, 2, lambda n: np.array([1.0 if n <= 2 else 0.5])), 4))
    [[1.     0.    ]
     [0.5403 0.8415]
     [0.5403 0.8415]]
    """
    keys = np.asarray(keys)
    if keys.ndim < 2:
        raise ValueError(f"keys must have shape (..., N, d), got shape {keys.shape}")
    num_tokens, dim = keys.shape[-2], keys.shape[-1]
    if dim % 2:
        raise ValueError(f"the head dimension d must be even, got {dim}")
    if isinstance(prompt_len, (bool, np.bool_)) or not isinstance(prompt_len, (int, np.integer)):
        raise ValueError(f"prompt_len must be an integer, got {prompt_len!r}")
    if not 1 <= prompt_len <= num_tokens:
        raise ValueError(f"prompt_len must be in [1, N] = [1, {num_tokens}], got {prompt_len}")
    lengths = np.maximum(np.arange(1, num_tokens + 1), int(prompt_len))  # as rotation_lengths
    half = dim // 2
    inv_freqs = {}
    for length in np.unique(lengths).tolist():
        inv_freq = np.asarray(inv_freq_for_length(length), dtype=np.float64)
        if inv_freq.shape != (half,):
            raise ValueError(f"inv_freq_for_length({length}) must return shape (d // 2,) = ({half},), "
                             f"got {inv_freq.shape}")
        inv_freqs[length] = inv_freq
    theta = np.stack([inv_freqs[length] for length in lengths.tolist()])          # (N, d/2)
    angles = np.arange(num_tokens, dtype=np.float64)[:, None] * theta
    dtype = np.result_type(keys, 1.0)
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    first, second = keys[..., :half], keys[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def stale_keys(num_tokens, prompt_len, original_max_position):
    r"""Which cached keys dynamic NTK scaling rotated with other frequencies
    than the newest query's.

    Dynamic NTK's frequencies depend on ``max(length, L)`` alone (``L`` the pretraining length) and
    change with it (for a factor ``> 1``). After the token at position ``N - 1``, the query is
    rotated for length ``N``; key ``t`` was rotated for ``l_t`` (:func:`rotation_lengths`), so it is
    stale when

    .. math::
        \max(\ell_t, L) \ne \max(N, L)

    None is stale while the sequence fits in ``L``; the last token's key is never stale. (The key at
    position 0 turns by 0 radians whatever the frequencies: it may be stale and still right.)

    Parameters
    ----------
    num_tokens : int
        ``N`` >= 1.
    prompt_len : int
        ``P``, with ``1 <= P <= N``.
    original_max_position : int
        ``L`` >= 1.

    Returns
    -------
    ndarray of bool, shape (num_tokens,)

    Raises
    ------
    ValueError
        If `num_tokens` or `prompt_len` is not an integer, or not ``1 <= prompt_len <= num_tokens``
        (as :func:`rotation_lengths`), or if `original_max_position` is not an integer >= 1.

    Examples
    --------
    >>> stale_keys(6, 3, 4).tolist()  # lengths 3 3 3 4 5 6: up to L = 4 they count as 4
    [True, True, True, True, True, False]
    >>> stale_keys(6, 3, 8).tolist()
    [False, False, False, False, False, False]
    """
    for name, value in (("num_tokens", num_tokens), ("prompt_len", prompt_len)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if not 1 <= prompt_len <= num_tokens:  # so num_tokens >= 1 too
        raise ValueError(f"need 1 <= prompt_len <= num_tokens, got prompt_len={prompt_len}, num_tokens={num_tokens}")
    if (isinstance(original_max_position, (bool, np.bool_))
            or not isinstance(original_max_position, (int, np.integer)) or original_max_position < 1):
        raise ValueError(f"original_max_position must be an integer >= 1, got {original_max_position!r}")
    lengths = np.maximum(np.arange(1, int(num_tokens) + 1), int(prompt_len))  # as rotation_lengths
    return np.maximum(lengths, int(original_max_position)) != max(int(num_tokens), int(original_max_position))
