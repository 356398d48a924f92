"""Partial rotary embeddings: RoPE on a fraction of each head, two ways that touch
different dimensions.

- **The first dimensions** (GPT-NeoX's ``rotary_pct``, Phi's and many others'
  ``partial_rotary_factor``): the first ``r = int(d * p)`` dimensions of a head rotate as a RoPE of
  dimension ``r`` (its own frequencies ``b^(-2t/r)``, pairs ``(t, t + r/2)``); the other ``d - r``
  pass through. Hugging Face transformers: ``models/gpt_neox/modeling_gpt_neox.py``,
  ``apply_rotary_pos_emb`` (``q[..., :rotary_dim]``) with ``compute_default_rope_parameters``
  (``dim = int(head_dim * partial_rotary_factor)``).
- **Proportional** (Gemma 4's global layers, ``rope_type="proportional"``): the RoPE of the whole
  head, dimension ``d`` and pairs ``(t, t + d/2)``, but only its ``int(p d // 2)`` fastest pairs
  turn; the slow ones get frequency 0. Hugging Face transformers:
  ``modeling_rope_utils._compute_proportional_rope_parameters``.

Both are checked against transformers 5.24.0 in ``tests/system/test_hf_agreement.py``.
"""

import numpy as np


def apply_partial_rotary(x, positions, partial_rotary_factor, base=10000.0):
    r"""RoPE on the first ``r = int(d * p)`` dimensions of each head, as GPT-NeoX and Phi do.

    The first ``r`` dimensions are a RoPE of dimension ``r`` in the half-split layout; the rest are
    returned unchanged. For ``t = 0 .. r/2 - 1``, with ``theta_t = b^(-2t/r)`` and the token's
    position ``m``:

    .. math::
        x'_t = x_t \cos m\theta_t - x_{t + r/2} \sin m\theta_t, \qquad
        x'_{t + r/2} = x_{t + r/2} \cos m\theta_t + x_t \sin m\theta_t, \qquad
        x'_j = x_j \;\; (j \ge r)

    Parameters
    ----------
    x : array_like, shape (..., L, d)
        Queries or keys.
    positions : array_like, shape (L,)
        The position of each token.
    partial_rotary_factor : float
        ``p`` in ``(0, 1]``; ``r = int(d * p)`` must be even and >= 2.
    base : float, optional
        ``b``, default 10000.

    Returns
    -------
    ndarray, shape (..., L, d)
        Floating; `x` is not modified.

    Raises
    ------
    ValueError
        If ``x.ndim < 2``, `positions` does not have shape ``(L,)``, `partial_rotary_factor` is not
        in ``(0, 1]``, or ``int(d * p)`` is odd or < 2.

    Examples
    --------
    Half of a 4-dimensional head rotates: dimensions 0 and 1 are one pair, at position pi/2 turning
    by pi/2 * theta_0 = pi/2.

    >>> print(np.round(apply_partial_rotary([[1.0, 0.0, 5.0, 7.0]], [np.pi / 2], 0.5), 4))
    [[0. 1. 5. 7.]]
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., L, d), got shape {x.shape}")
    length, dim = x.shape[-2], x.shape[-1]
    positions = np.asarray(positions, dtype=np.float64)
    if positions.shape != (length,):
        raise ValueError(f"positions must have shape (L,) = ({length},), got {positions.shape}")
    if isinstance(partial_rotary_factor, (bool, np.bool_)) or not 0 < partial_rotary_factor <= 1:
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {partial_rotary_factor!r}")
    rotary_dim = int(dim * partial_rotary_factor)
    if rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(f"int(d * partial_rotary_factor) = int({dim} * {partial_rotary_factor!r}) = {rotary_dim}: "
                         "the rotated dimensions must be an even number >= 2")
    half = rotary_dim // 2
    angles = positions[:, None] * float(base) ** (-np.arange(0, rotary_dim, 2) / rotary_dim)
    dtype = np.result_type(x, 1.0)
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    first, second = x[..., :half], x[..., half:rotary_dim]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin,
                           x[..., rotary_dim:].astype(dtype)], axis=-1)


def apply_proportional_rope(x, positions, partial_rotary_factor, base=10000.0):
    r"""Proportional RoPE (Gemma 4): the whole head's RoPE, with only its
    ``n`` fastest pairs turning.

    The pairs are those of a RoPE of dimension ``d``, ``(t, t + d/2)``, and the frequencies keep the
    whole head's spacing, ``theta_t = b^(-2t/d)``; pairs ``t >= n = int(p d // 2)`` get frequency 0
    and are returned unchanged:

    .. math::
        \theta_t = \begin{cases} b^{-2t/d} & t < n \\ 0 & t \ge n \end{cases}

    Parameters
    ----------
    x : array_like, shape (..., L, d)
        Queries or keys; ``d`` even.
    positions : array_like, shape (L,)
        The position of each token.
    partial_rotary_factor : float
        ``p`` in ``(0, 1]``.
    base : float, optional
        ``b``, default 10000.

    Returns
    -------
    ndarray, shape (..., L, d)
        Floating; `x` is not modified.

    Raises
    ------
    ValueError
        If ``x.ndim < 2``, ``d`` is odd, `positions` does not have shape ``(L,)``, or
        `partial_rotary_factor` is not in ``(0, 1]``.

    Examples
    --------
    Half of a 4-dimensional head: pair 0, dimensions (0, 2), turns; pair 1, dimensions (1, 3), does
    not.

    >>> print(np.round(apply_proportional_rope([[1.0, 5.0, 0.0, 7.0]], [np.pi / 2], 0.5), 4))
    [[0. 5. 1. 7.]]
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., L, d), got shape {x.shape}")
    length, dim = x.shape[-2], x.shape[-1]
    positions = np.asarray(positions, dtype=np.float64)
    if positions.shape != (length,):
        raise ValueError(f"positions must have shape (L,) = ({length},), got {positions.shape}")
    if isinstance(partial_rotary_factor, (bool, np.bool_)) or not 0 < partial_rotary_factor <= 1:
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {partial_rotary_factor!r}")
    if dim % 2:
        raise ValueError(f"the head dimension d must be even, got {dim}")
    turning = int(partial_rotary_factor * dim // 2)
    half = dim // 2
    theta = np.zeros(half)
    theta[:turning] = float(base) ** (-np.arange(0, 2 * turning, 2) / dim)
    angles = positions[:, None] * theta
    dtype = np.result_type(x, 1.0)
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)
