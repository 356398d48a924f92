"""Exercises 5 and 6: rotary position embedding (RoPE), interleaved pairs.

Pairs ``(2t, 2t+1)`` are rotated as in RoFormer, GPT-J and Meta's Llama, not
in HF's ``rotate_half`` layout.
"""

import numpy as np


def rope_frequencies(head_dim, base=10000.0):
    r"""Rotation frequency of each pair of dimensions.

    .. math::
        \theta_t = b^{-2t/d}, \qquad t = 0 \ldots d/2 - 1

    Parameters
    ----------
    head_dim : int
        An even integer >= 2.
    base : float, optional
        Default 10000.

    Returns
    -------
    ndarray, shape (head_dim // 2,)

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 2.

    Examples
    --------
    >>> print(rope_frequencies(4))
    [1.   0.01]
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 2 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    return float(base) ** (-np.arange(0, int(head_dim), 2) / head_dim)


def apply_rope(x, positions, base=10000.0):
    r"""Rotate each interleaved pair of `x` by its position times its frequency.

    .. math::
        \begin{pmatrix} x'_{2t} \\ x'_{2t+1} \end{pmatrix} =
        \begin{pmatrix} \cos m\theta_t & -\sin m\theta_t \\
                         \sin m\theta_t & \cos m\theta_t \end{pmatrix}
        \begin{pmatrix} x_{2t} \\ x_{2t+1} \end{pmatrix}

    Parameters
    ----------
    x : array_like, shape (..., L, head_dim)
        Queries or keys.
    positions : array_like, shape (L,)
        Position ``m`` of each of the L tokens.
    base : float, optional
        Default 10000.

    Returns
    -------
    ndarray, shape (..., L, head_dim)
        A new array; `x` is not modified.

    Raises
    ------
    ValueError
        If `x` has fewer than 2 dimensions or an odd `head_dim`, or ``len(positions) != L``.

    Examples
    --------
    >>> x = np.array([[1.0, 0.0, 1.0, 0.0]])
    >>> print(np.round(apply_rope(x, [np.pi / 2]), 6))
    [[0.       1.       0.999877 0.015707]]
    """
    x = np.asarray(x)
    positions = np.asarray(positions, dtype=np.float64)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(f"x must have shape (..., L, head_dim) with an even head_dim, got shape {x.shape}")
    if positions.shape != (x.shape[-2],):
        raise ValueError(f"positions must have shape (L,) = ({x.shape[-2]},), got shape {positions.shape}")
    dtype = np.result_type(x, 1.0)
    angles = (positions[:, None] * rope_frequencies(x.shape[-1], base)).astype(dtype)
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty(x.shape, dtype=dtype)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def pair_norms(x):
    """Euclidean norm of each interleaved pair ``(2t, 2t+1)``.

    RoPE rotates pairs, so it leaves these norms unchanged.

    Parameters
    ----------
    x : array_like, shape (..., head_dim)

    Returns
    -------
    ndarray, shape (..., head_dim // 2)

    Raises
    ------
    ValueError
        If the last axis is odd.

    Examples
    --------
    >>> print(pair_norms([3.0, 4.0, 0.0, 2.0]))
    [5. 2.]
    """
    x = np.asarray(x)
    if x.ndim < 1 or x.shape[-1] % 2:
        raise ValueError(f"the last axis must have even length, got shape {x.shape}")
    return np.hypot(x[..., 0::2], x[..., 1::2])


def rotation_2d(angle):
    """Counter-clockwise rotation matrix by `angle` radians.

    Parameters
    ----------
    angle : float

    Returns
    -------
    ndarray, shape (2, 2)
        ``[[cos a, -sin a], [sin a, cos a]]``.

    Examples
    --------
    >>> print(np.round(rotation_2d(np.pi / 2), 6))
    [[ 0. -1.]
     [ 1.  0.]]
    """
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]], dtype=np.float64)


def rope_score_2d(q, k, m, n, theta):
    r"""RoPE score of a 2-D query at position m and key at position n.

    .. math::
        s = (R(m\theta)\, q) \cdot (R(n\theta)\, k)

    Parameters
    ----------
    q, k : array_like, shape (2,)
    m, n : float
        Positions of the query and the key.
    theta : float
        Frequency of the pair.

    Returns
    -------
    float

    Examples
    --------
    >>> round(rope_score_2d([1.0, 0.0], [1.0, 0.0], 3, 3, 0.5), 6)
    1.0
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    return float((rotation_2d(m * theta) @ q) @ (rotation_2d(n * theta) @ k))


def rope_score_from_offset(q, k, offset, theta):
    r"""The same score, from the offset ``n - m`` alone.

    .. math::
        s = q \cdot (R((n - m)\theta)\, k)

    Parameters
    ----------
    q, k : array_like, shape (2,)
    offset : float
        ``n - m``, the key's position minus the query's.
    theta : float

    Returns
    -------
    float

    Examples
    --------
    >>> q, k = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    >>> bool(np.isclose(rope_score_from_offset(q, k, 7 - 3, 0.3), rope_score_2d(q, k, 3, 7, 0.3)))
    True
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    return float(q @ (rotation_2d(offset * theta) @ k))
