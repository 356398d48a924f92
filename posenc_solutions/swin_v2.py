"""Swin Transformer V2's log-spaced continuous position bias (Liu et al. 2022, "Swin Transformer
V2: Scaling Up Capacity and Resolution"): a small MLP maps each log-spaced 2-D offset of a window
to one bias per head, bounded by ``16 * sigmoid``.

As Hugging Face transformers' ``models/swinv2/modeling_swinv2.py``, ``Swinv2SelfAttention``:
``create_coords_table_and_index`` (the ``relative_coords_table``) and ``forward`` (the
``continuous_position_bias_mlp`` read with ``relative_position_index``), checked against
transformers 5.24.0.
"""

import math

import numpy as np


def swin_v2_relative_coords_table(window_height, window_width, pretrained_window_height=0,
                                  pretrained_window_width=0):
    r"""Swin V2's ``relative_coords_table``: every 2-D offset of a window, scaled and log-spaced.

    Entry ``[i, j]`` is the offset ``(dh, dw) = (i - (Wh-1), j - (Ww-1))``, rows ``dh`` from
    ``-(Wh-1)`` to ``Wh-1`` and columns ``dw`` from ``-(Ww-1)`` to ``Ww-1`` (the row order of
    Swin's relative position index). Each component :math:`\delta` (``dh`` or ``dw``) is divided
    by ``S - 1`` with ``S`` the pretrained window side if one is given, else the window side,
    scaled to ``[-8, 8]`` and log-spaced:

    .. math::
        u = \frac{8\,\delta}{S - 1}, \qquad
        \hat u = \operatorname{sign}(u)\, \frac{\log_2(|u| + 1)}{\log_2 8},

    so offsets of the window itself land in ``[-log2(9)/3, log2(9)/3] = [-1.057, 1.057]``. The
    last axis is ``(dh, dw)``.

    A window side of 1 has the single offset 0, which is 0 whatever the divisor; this function
    returns 0 there. Hugging Face divides only when ``Wh > 1`` (``elif self.window_size[0] > 1``),
    which gives the same table for the 1 x 1 windows its models use (a stage whose resolution is
    1), but NaN for a ``Wh x 1`` window (0 / 0) and an undivided ``dw`` for a ``1 x Ww`` window;
    Microsoft's code divides by 0 for any side of 1.

    Parameters
    ----------
    window_height : int
        ``Wh`` >= 1.
    window_width : int
        ``Ww`` >= 1.
    pretrained_window_height : int, optional
        The window side the model was pretrained with (a fine-tuned Swin V2 keeps its pretrained
        normalisation, so larger windows reach beyond 1.057): 0 (default) for none, else >= 2.
    pretrained_window_width : int, optional
        As `pretrained_window_height`; both are 0 or both are >= 2.

    Returns
    -------
    ndarray of float64, shape (2Wh-1, 2Ww-1, 2)

    Raises
    ------
    ValueError
        If a window side is not an integer >= 1, a pretrained side is not an integer 0 or >= 2,
        or one pretrained side is 0 and the other is not.

    Examples
    --------
    >>> table = swin_v2_relative_coords_table(2, 3)
    >>> table.shape
    (3, 5, 2)
    >>> print(np.round(table[0, :, 0], 4))  # dh = -1, over 1: -8 -> -log2(9) / 3
    [-1.0566 -1.0566 -1.0566 -1.0566 -1.0566]
    >>> print(np.round(table[0, :, 1], 4))  # dw = -2 .. 2, over 2: -8, -4, 0, 4, 8
    [-1.0566 -0.774   0.      0.774   1.0566]
    >>> print(np.round(3 * swin_v2_relative_coords_table(2, 2, 9, 9)[:, 1, 0], 4))  # log2(2) = 1
    [-1.  0.  1.]
    """
    for name, value in (("window_height", window_height), ("window_width", window_width),
                        ("pretrained_window_height", pretrained_window_height),
                        ("pretrained_window_width", pretrained_window_width)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        if name.startswith("window") and value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
        if name.startswith("pretrained") and (value < 0 or value == 1):
            raise ValueError(f"{name} must be 0 (none) or >= 2, got {value}")
    height, width = int(window_height), int(window_width)
    pretrained = [int(pretrained_window_height), int(pretrained_window_width)]
    if (pretrained[0] == 0) != (pretrained[1] == 0):
        raise ValueError(f"give both pretrained window sides or neither, got "
                         f"({pretrained[0]}, {pretrained[1]})")
    sides = pretrained if pretrained[0] else [height, width]
    # A side of 1 has only the offset 0: any divisor leaves it 0.
    divisors = np.array([max(side - 1, 1) for side in sides], dtype=np.float64)
    dh = np.arange(-(height - 1), height, dtype=np.float64)
    dw = np.arange(-(width - 1), width, dtype=np.float64)
    table = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) / divisors * 8.0
    return np.sign(table) * np.log2(np.abs(table) + 1.0) / math.log2(8)


def swin_v2_position_bias(coords_table, w1, b1, w2, window_height, window_width):
    r"""Swin V2's continuous position bias: an MLP on the coordinates table, read for every pair.

    The MLP (Hugging Face's ``continuous_position_bias_mlp``: ``Linear(2, hidden)``, ReLU,
    ``Linear(hidden, heads, bias=False)``; here ``w1 = weight.T``) gives one value per offset and
    head, which Swin's relative position index reads for every pair of the ``N = Wh * Ww``
    tokens of a window (numbered row by row), bounded by ``16 * sigmoid``:

    .. math::
        T = \operatorname{relu}(C W_1 + b_1)\, W_2, \qquad
        B[h, a, b] = \frac{16}{1 + e^{-T[\mathrm{index}[a, b], h]}},

    with ``C`` the table's rows flattened row by row and
    :math:`\mathrm{index}[a, b] = (h_a - h_b + W_h - 1)(2W_w - 1) + (w_a - w_b + W_w - 1)`.

    Parameters
    ----------
    coords_table : array_like, shape (2Wh-1, 2Ww-1, 2)
        The coordinates of every offset (:func:`swin_v2_relative_coords_table`).
    w1 : array_like, shape (2, hidden)
        First layer's weight (512 hidden units in Swin V2).
    b1 : array_like, shape (hidden,)
        First layer's bias.
    w2 : array_like, shape (hidden, heads)
        Second layer's weight (no bias).
    window_height : int
        ``Wh`` >= 1.
    window_width : int
        ``Ww`` >= 1.

    Returns
    -------
    ndarray of float64, shape (heads, N, N) with N = Wh * Ww
        Every value between 0 and 16; the inputs are not modified.

    Raises
    ------
    ValueError
        If a window side is not an integer >= 1, `coords_table` does not have shape
        ``(2Wh-1, 2Ww-1, 2)``, `w1` is not ``(2, hidden)``, `b1` is not ``(hidden,)`` or `w2` is
        not ``(hidden, heads)``.

    Examples
    --------
    >>> table = swin_v2_relative_coords_table(2, 2)
    >>> w1, b1, w2 = [[100.0], [0.0]], [0.0], [[1.0]]  # one head: relu(100 * dh)
    >>> print(swin_v2_position_bias(table, w1, b1, w2, 2, 2))  # 16 if the query is below
    [[[ 8.  8.  8.  8.]
      [ 8.  8.  8.  8.]
      [16. 16.  8.  8.]
      [16. 16.  8.  8.]]]
    """
    for name, value in (("window_height", window_height), ("window_width", window_width)):
        if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer))
                or value < 1):
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    height, width = int(window_height), int(window_width)
    coords_table = np.asarray(coords_table, dtype=np.float64)
    w1 = np.asarray(w1, dtype=np.float64)
    b1 = np.asarray(b1, dtype=np.float64)
    w2 = np.asarray(w2, dtype=np.float64)
    if coords_table.shape != (2 * height - 1, 2 * width - 1, 2):
        raise ValueError(f"a {height}x{width} window needs coords_table of shape "
                         f"({2 * height - 1}, {2 * width - 1}, 2), got {coords_table.shape}")
    if w1.ndim != 2 or w1.shape[0] != 2:
        raise ValueError(f"w1 must have shape (2, hidden), got {w1.shape}")
    hidden = w1.shape[1]
    if b1.shape != (hidden,):
        raise ValueError(f"b1 must have shape (hidden,) = ({hidden},), got {b1.shape}")
    if w2.ndim != 2 or w2.shape[0] != hidden:
        raise ValueError(f"w2 must have shape (hidden, heads) = ({hidden}, heads), got {w2.shape}")
    # Swin's relative position index: token n at row n // Ww, column n % Ww
    rows, cols = np.divmod(np.arange(height * width), width)
    index = ((rows[:, None] - rows[None, :] + height - 1) * (2 * width - 1)
             + cols[:, None] - cols[None, :] + width - 1)
    values = np.maximum(coords_table.reshape(-1, 2) @ w1 + b1, 0.0) @ w2  # (rows, heads)
    bias = np.transpose(values[index], (2, 0, 1))
    # 16 * sigmoid, without overflow: sigmoid(z) = exp(-log(1 + exp(-z)))
    return 16.0 * np.exp(-np.logaddexp(0.0, -bias))
