"""Exercise 1: sinusoidal absolute encodings (Vaswani et al., 2017), interleaved layout."""

import numpy as np


def sinusoidal_row(position, d_model, base=10000.0):
    r"""Sinusoidal encoding of one position, in the interleaved layout.

    .. math::
        PE[2i] = \sin(p \cdot b^{-2i/d}), \qquad PE[2i+1] = \cos(p \cdot b^{-2i/d})

    Parameters
    ----------
    position : float or array_like
        Any real position, including one beyond any table. An array of
        positions of shape ``(...)`` gives one row per position.
    d_model : int
        Width of the encoding; an even integer >= 2.
    base : float, optional
        Base of the frequency ladder, > 0. Default 10000.

    Returns
    -------
    ndarray, shape (d_model,) or (..., d_model)
        Sines in the even slots, cosines in the odd slots.

    Raises
    ------
    ValueError
        If `d_model` is not an even integer >= 2, or `base` is not > 0.

    Examples
    --------
    >>> print(np.round(sinusoidal_row(1, 4), 4))
    [0.8415 0.5403 0.01   1.    ]
    """
    if (isinstance(d_model, (bool, np.bool_)) or not isinstance(d_model, (int, float, np.integer, np.floating))
            or d_model % 1 != 0 or d_model < 2 or d_model % 2):
        raise ValueError(f"d_model must be an even integer >= 2, got {d_model!r}")
    if not base > 0:
        raise ValueError(f"base must be > 0, got {base!r}")
    d_model = int(d_model)
    inv_freq = float(base) ** (-np.arange(0, d_model, 2) / d_model)
    angles = np.asarray(position, dtype=np.float64)[..., None] * inv_freq
    row = np.empty(angles.shape[:-1] + (d_model,))
    row[..., 0::2] = np.sin(angles)
    row[..., 1::2] = np.cos(angles)
    return row


def sinusoidal_table(num_positions, d_model, base=10000.0):
    """Table of sinusoidal encodings for positions ``0 .. num_positions - 1``.

    Parameters
    ----------
    num_positions : int
        Number of rows, >= 0.
    d_model : int
        Width of the encoding; an even integer >= 2.
    base : float, optional
        Base of the frequency ladder, > 0. Default 10000.

    Returns
    -------
    ndarray, shape (num_positions, d_model)
        Row ``p`` equals ``sinusoidal_row(p, d_model, base)``.

    Raises
    ------
    ValueError
        If `num_positions` is not an integer >= 0, or for the errors of `sinusoidal_row`.

    Examples
    --------
    >>> sinusoidal_table(3, 6).shape
    (3, 6)
    >>> print(sinusoidal_table(2, 2))
    [[0.         1.        ]
     [0.84147098 0.54030231]]
    """
    if (isinstance(num_positions, (bool, np.bool_))
            or not isinstance(num_positions, (int, float, np.integer, np.floating))
            or num_positions % 1 != 0 or num_positions < 0):
        raise ValueError(f"num_positions must be an integer >= 0, got {num_positions!r}")
    return sinusoidal_row(np.arange(int(num_positions)), d_model, base)
