"""Swin Transformer's 2-D relative position bias (Liu et al. 2021): a (2H-1)(2W-1) table per
head and the index that reads it for every pair of positions in a window.
"""

import math

import numpy as np


def swin_relative_position_index(window_height, window_width):
    r"""Swin's ``relative_position_index``: the table row for every pair of tokens in a window.

    The ``N = Wh * Ww`` tokens of a window are numbered row by row: token ``n`` sits at row
    ``h = n // Ww`` and column ``w = n % Ww``. For a query token ``a`` and a key token ``b``
    the 2-D offset ``(h_a - h_b, w_a - w_b)`` lies in ``[-(Wh-1), Wh-1] x [-(Ww-1), Ww-1]``;
    shifted to start at 0 and flattened row by row it gives

    .. math::
        \mathrm{index}[a, b] = (h_a - h_b + W_h - 1)(2W_w - 1) + (w_a - w_b + W_w - 1),

    an integer in ``[0, (2Wh-1)(2Ww-1) - 1]``.

    Parameters
    ----------
    window_height : int
        ``Wh``, the number of rows of the window, >= 1.
    window_width : int
        ``Ww``, the number of columns of the window, >= 1.

    Returns
    -------
    ndarray of int64, shape (N, N) with N = Wh * Ww

    Raises
    ------
    ValueError
        If `window_height` or `window_width` is not an integer >= 1.

    Examples
    --------
    >>> print(swin_relative_position_index(2, 2))
    [[4 3 1 0]
     [5 4 2 1]
     [7 6 4 3]
     [8 7 5 4]]
    """
    for name, value in (("window_height", window_height), ("window_width", window_width)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    height, width = int(window_height), int(window_width)
    tokens = np.arange(height * width, dtype=np.int64)
    rows, cols = tokens // width, tokens % width
    row_offset = rows[:, None] - rows[None, :] + (height - 1)
    col_offset = cols[:, None] - cols[None, :] + (width - 1)
    return row_offset * (2 * width - 1) + col_offset


def swin_relative_bias(table, window_height, window_width):
    r"""Swin's relative position bias: read the table at every pair of tokens, heads first.

    .. math::
        B[h, a, b] = T[\mathrm{index}[a, b], h]

    with the index of :func:`swin_relative_position_index` (Swin's
    ``relative_position_bias_table[index.view(-1)].view(N, N, -1).permute(2, 0, 1)``).

    Parameters
    ----------
    table : array_like, shape ((2Wh-1)(2Ww-1), H)
        One learned scalar per 2-D offset (rows) and head (columns).
    window_height : int
        ``Wh``, >= 1.
    window_width : int
        ``Ww``, >= 1.

    Returns
    -------
    ndarray of float, shape (H, N, N) with N = Wh * Ww
        A new array; `table` is not modified.

    Raises
    ------
    ValueError
        If `table` is not 2-D, its number of rows is not ``(2Wh-1)(2Ww-1)``, or a window
        side is not an integer >= 1.

    Examples
    --------
    >>> table = np.arange(9.0)[:, None]  # one head, bias = the table row
    >>> print(swin_relative_bias(table, 2, 2))
    [[[4. 3. 1. 0.]
      [5. 4. 2. 1.]
      [7. 6. 4. 3.]
      [8. 7. 5. 4.]]]
    """
    for name, value in (("window_height", window_height), ("window_width", window_width)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    height, width = int(window_height), int(window_width)
    table = np.asarray(table, dtype=np.result_type(np.asarray(table), 1.0))
    if table.ndim != 2:
        raise ValueError(f"table must be 2-D ((2Wh-1)(2Ww-1), H), got shape {table.shape}")
    rows_needed = (2 * height - 1) * (2 * width - 1)
    if table.shape[0] != rows_needed:
        raise ValueError(f"a {height}x{width} window needs a table of {rows_needed} rows, got "
                         f"{table.shape[0]}")
    tokens = np.arange(height * width)
    rows, cols = tokens // width, tokens % width
    index = ((rows[:, None] - rows[None, :] + height - 1) * (2 * width - 1)
             + cols[:, None] - cols[None, :] + width - 1)
    return np.transpose(table[index], (2, 0, 1))
