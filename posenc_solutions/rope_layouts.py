"""Checkpoint layouts of RoPE: interleaved pairs (2t, 2t+1) and half-split pairs (t, t + d/2) are
the same model up to a fixed permutation of the rows of W_q and W_k, which is what conversion
scripts apply.
"""

import math

import numpy as np


def apply_rope_half_split(x, positions, base=10000.0):
    r"""Rotate `x` with RoPE in the half-split (``rotate_half``) layout of Hugging Face's Llama.

    Pair ``t`` is the dimensions ``(t, t + d/2)``, for ``t = 0 .. d/2 - 1``, and turns
    counter-clockwise by the angle :math:`p\,\theta_t`, :math:`\theta_t = b^{-2t/d}`:

    .. math::
        x'_t = x_t \cos p\theta_t - x_{t + d/2} \sin p\theta_t, \qquad
        x'_{t + d/2} = x_{t + d/2} \cos p\theta_t + x_t \sin p\theta_t

    Parameters
    ----------
    x : array_like, shape (..., L, d)
        Queries or keys of one or more heads; ``d`` is the head dimension.
    positions : array_like, shape (L,)
        Position ``p`` of each of the L tokens.
    base : float, optional
        The base ``b``, default 10000.

    Returns
    -------
    ndarray, shape (..., L, d)
        Floating; a new array, `x` is not modified.

    Raises
    ------
    ValueError
        If ``x.ndim < 2``, if ``d`` is odd, or if `positions` does not have shape ``(L,)``.

    Examples
    --------
    >>> x = np.array([[1.0, 1.0, 0.0, 0.0]])
    >>> print(np.round(apply_rope_half_split(x, [np.pi / 2]), 4))
    [[0.     0.9999 1.     0.0157]]
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., L, d), got shape {x.shape}")
    length, dim = x.shape[-2], x.shape[-1]
    if dim % 2:
        raise ValueError(f"the head dimension d must be even, got {dim}")
    positions = np.asarray(positions, dtype=np.float64)
    if positions.shape != (length,):
        raise ValueError(f"positions must have shape (L,) = ({length},), got {positions.shape}")
    half = dim // 2
    theta = float(base) ** (-2.0 * np.arange(half) / dim)
    angles = positions[:, None] * theta
    dtype = np.result_type(x, 1.0)
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def interleaved_to_half_split(head_dim):
    """The permutation of one head's dimensions that turns the interleaved layout into half-split.

    ``perm[r]`` is the interleaved dimension that becomes half-split dimension ``r``:
    ``[0, 2, 4, ..., d - 2, 1, 3, ..., d - 1]``. Interleaved pair ``t`` is ``(2t, 2t + 1)``; it
    lands on the half-split pair ``(t, t + d/2)``. So ``W_half = W_interleaved[perm]`` for the rows
    of one head, which is what Hugging Face's ``permute`` in ``convert_llama_weights_to_hf.py``
    does (``view(n_heads, d/2, 2, dim).transpose(1, 2)``).

    Parameters
    ----------
    head_dim : int
        The head dimension ``d``, an even integer >= 2.

    Returns
    -------
    ndarray of int64, shape (head_dim,)

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 2.

    Examples
    --------
    >>> print(interleaved_to_half_split(6))
    [0 2 4 1 3 5]
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 2 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    head_dim = int(head_dim)
    return np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)]).astype(np.int64)


def permute_for_half_split(weight, num_heads):
    """Convert a projection weight (W_q or W_k) from the interleaved to the half-split layout.

    The rows of `weight` are the output features, head by head: rows ``h * d .. h * d + d - 1``
    belong to head ``h``, with ``d = weight.shape[0] // num_heads``. Each head's rows are permuted
    by ``[0, 2, ..., d - 2, 1, 3, ..., d - 1]`` (see `interleaved_to_half_split`); the columns
    (the model dimension) are left alone. Then, for every input, half-split RoPE on the outputs of
    the new weights gives the same attention logits as interleaved RoPE on the old ones.

    Parameters
    ----------
    weight : array_like, shape (num_heads * d, d_model)
        A checkpoint's W_q or W_k (``q = x @ weight.T``).
    num_heads : int
        The number of heads the rows hold (for W_k of a GQA model: the number of key-value heads).

    Returns
    -------
    ndarray, shape (num_heads * d, d_model)
        A new array; `weight` is not modified.

    Raises
    ------
    ValueError
        If `weight` is not 2-D, if `num_heads` < 1, if its number of rows is not divisible by
        `num_heads`, or if the head dimension ``d`` is odd.

    Examples
    --------
    >>> w = np.arange(8.0).reshape(8, 1)
    >>> print(permute_for_half_split(w, 2).ravel())
    [0. 2. 1. 3. 4. 6. 5. 7.]
    """
    weight = np.asarray(weight)
    if weight.ndim != 2:
        raise ValueError(f"weight must be 2-D (num_heads * d, d_model), got shape {weight.shape}")
    if (isinstance(num_heads, (bool, np.bool_))
            or not isinstance(num_heads, (int, float, np.integer, np.floating)) or num_heads % 1 != 0
            or num_heads < 1):
        raise ValueError(f"num_heads must be an integer >= 1, got {num_heads!r}")
    num_heads = int(num_heads)
    rows, d_model = weight.shape
    if rows % num_heads:
        raise ValueError(f"{rows} rows cannot be split into {num_heads} heads")
    head_dim = rows // num_heads
    if head_dim % 2:
        raise ValueError(f"the head dimension {head_dim} is odd")
    perm = np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)])
    return weight.reshape(num_heads, head_dim, d_model)[:, perm, :].reshape(rows, d_model)
