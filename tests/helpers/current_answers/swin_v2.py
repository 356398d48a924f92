"""Wrong and alternative answers for posenc-current exercise 8 (Swin V2's log-spaced continuous position bias).

Each code string runs in a student's notebook, where ``np`` and ``math`` exist. The wrong answers keep every
input check of the contract, except the one whose absence is their mistake.
"""

# The input checks of swin_v2_relative_coords_table, as a student writes them; the wrong answers below share them.
_TABLE_CHECKS = '''
    def is_int(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

    if not (is_int(window_height) and is_int(window_width)) or min(window_height, window_width) < 1:
        raise ValueError("window sides must be integers >= 1")
    for p in (pretrained_window_height, pretrained_window_width):
        if not is_int(p) or p < 0 or p == 1:
            raise ValueError("pretrained sides must be integers, 0 or >= 2")
    if (pretrained_window_height == 0) != (pretrained_window_width == 0):
        raise ValueError("give both pretrained sides or neither")
    Wh, Ww = int(window_height), int(window_width)
    if pretrained_window_height:
        Sh, Sw = pretrained_window_height, pretrained_window_width
    else:
        Sh, Sw = Wh, Ww
    dh = np.arange(-(Wh - 1), Wh) / max(Sh - 1, 1)
    dw = np.arange(-(Ww - 1), Ww) / max(Sw - 1, 1)'''

# The input checks of swin_v2_position_bias, as a student writes them.
_BIAS_CHECKS = '''
    for side in (window_height, window_width):
        if isinstance(side, (bool, np.bool_)) or not isinstance(side, (int, np.integer)) or side < 1:
            raise ValueError("window sides must be integers >= 1")
    Wh, Ww = int(window_height), int(window_width)
    table = np.asarray(coords_table, dtype=float)
    w1, b1, w2 = (np.asarray(a, dtype=float) for a in (w1, b1, w2))
    if table.shape != (2 * Wh - 1, 2 * Ww - 1, 2):
        raise ValueError("coords_table has the wrong shape")
    if w1.ndim != 2 or w1.shape[0] != 2 or b1.shape != (w1.shape[1],) or w2.ndim != 2 or w2.shape[0] != w1.shape[1]:
        raise ValueError("w1, b1, w2 must have shapes (2, hidden), (hidden,), (hidden, heads)")
    n = Wh * Ww
    rows, cols = np.arange(n) // Ww, np.arange(n) % Ww'''

_INDEX = '''
    index = (rows[:, None] - rows[None, :] + Wh - 1) * (2 * Ww - 1) + cols[:, None] - cols[None, :] + Ww - 1'''


def _table(body, checks=_TABLE_CHECKS):
    return ("\ndef swin_v2_relative_coords_table(window_height, window_width, pretrained_window_height=0,\n"
            "                                  pretrained_window_width=0):" + checks + "\n" + body)


def _bias(body, checks=_BIAS_CHECKS + _INDEX):
    return ("\ndef swin_v2_position_bias(coords_table, w1, b1, w2, window_height, window_width):" + checks + "\n"
            + body)


WRONG = {  # label: (exercise, {function_name: code})
    # ln where the formula says log2, with log2(8) = 3 kept
    "swin_v2_natural_log": ("ex08", {"swin_v2_relative_coords_table": _table('''
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) * 8
    return np.sign(u) * np.log1p(np.abs(u)) / 3
''')}),
    # log2(|u| + 1) without the division by log2(8)
    "swin_v2_no_division_by_log2_8": ("ex08", {"swin_v2_relative_coords_table": _table('''
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) * 8
    return np.sign(u) * np.log2(np.abs(u) + 1)
''')}),
    # offsets over the side S instead of S - 1
    "swin_v2_divided_by_the_side": ("ex08", {"swin_v2_relative_coords_table": _table('''
    dh, dw = dh * max(Sh - 1, 1) / Sh, dw * max(Sw - 1, 1) / Sw
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) * 8
    return np.sign(u) * np.log2(np.abs(u) + 1) / np.log2(8)
''')}),
    # the offsets scaled to [-1, 1], not [-8, 8]
    "swin_v2_no_factor_8": ("ex08", {"swin_v2_relative_coords_table": _table('''
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1)
    return np.sign(u) * np.log2(np.abs(u) + 1) / np.log2(8)
''')}),
    # the pretrained sides checked, then never used
    "swin_v2_pretrained_window_ignored": ("ex08", {"swin_v2_relative_coords_table": _table('''
    dh = np.arange(-(Wh - 1), Wh) / max(Wh - 1, 1)
    dw = np.arange(-(Ww - 1), Ww) / max(Ww - 1, 1)
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) * 8
    return np.sign(u) * np.log2(np.abs(u) + 1) / np.log2(8)
''')}),
    # |u| only: opposite offsets get the same coordinates
    "swin_v2_sign_dropped": ("ex08", {"swin_v2_relative_coords_table": _table('''
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) * 8
    return np.log2(np.abs(u) + 1) / np.log2(8)
''')}),
    # the last axis (dw, dh)
    "swin_v2_last_axis_dw_dh": ("ex08", {"swin_v2_relative_coords_table": _table('''
    grid_h, grid_w = np.meshgrid(dh, dw, indexing="ij")
    u = np.stack([grid_w, grid_h], axis=-1) * 8
    return np.sign(u) * np.log2(np.abs(u) + 1) / np.log2(8)
''')}),
    # Microsoft's code: a side of 1 divides 0 by 0
    "swin_v2_nan_for_a_side_of_one": ("ex08", {"swin_v2_relative_coords_table": _table('''
    with np.errstate(invalid="ignore", divide="ignore"):
        dh = np.arange(-(Wh - 1), Wh) / (Sh - 1)
        dw = np.arange(-(Ww - 1), Ww) / (Sw - 1)
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) * 8
    return np.sign(u) * np.log2(np.abs(u) + 1) / np.log2(8)
''')}),
    # one pretrained side without the other goes through: (4, 0) divides dw by max(-1, 1)
    "swin_v2_one_pretrained_side_accepted": ("ex08", {"swin_v2_relative_coords_table": '''
def swin_v2_relative_coords_table(window_height, window_width, pretrained_window_height=0,
                                  pretrained_window_width=0):
    for v in (window_height, window_width, pretrained_window_height, pretrained_window_width):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError("sides must be integers")
    if min(window_height, window_width) < 1 or min(pretrained_window_height, pretrained_window_width) < 0:
        raise ValueError("bad sides")
    if 1 in (pretrained_window_height, pretrained_window_width):
        raise ValueError("a pretrained side of 1")
    Wh, Ww = int(window_height), int(window_width)
    Sh, Sw = (pretrained_window_height, pretrained_window_width) if pretrained_window_height else (Wh, Ww)
    dh = np.arange(-(Wh - 1), Wh) / max(Sh - 1, 1)
    dw = np.arange(-(Ww - 1), Ww) / max(Sw - 1, 1)
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1) * 8
    return np.sign(u) * np.log2(np.abs(u) + 1) / np.log2(8)
'''}),
    # the MLP's output as the bias: no 16 sigmoid
    "swin_v2_no_sigmoid": ("ex08", {"swin_v2_position_bias": _bias('''
    values = np.maximum(table.reshape(-1, 2) @ w1 + b1, 0) @ w2
    return np.transpose(values[index], (2, 0, 1))
''')}),
    # sigmoid, without the 16
    "swin_v2_sigmoid_without_16": ("ex08", {"swin_v2_position_bias": _bias('''
    values = np.maximum(table.reshape(-1, 2) @ w1 + b1, 0) @ w2
    with np.errstate(over="ignore"):
        return np.transpose(1 / (1 + np.exp(-values[index])), (2, 0, 1))
''')}),
    # the index of key minus query
    "swin_v2_key_minus_query": ("ex08", {"swin_v2_position_bias": _bias('''
    index = (rows[None, :] - rows[:, None] + Wh - 1) * (2 * Ww - 1) + cols[None, :] - cols[:, None] + Ww - 1
    values = np.maximum(table.reshape(-1, 2) @ w1 + b1, 0) @ w2
    with np.errstate(over="ignore"):
        return 16 / (1 + np.exp(-np.transpose(values[index], (2, 0, 1))))
''', checks=_BIAS_CHECKS)}),
    # the bias as (N, N, heads)
    "swin_v2_heads_last": ("ex08", {"swin_v2_position_bias": _bias('''
    values = np.maximum(table.reshape(-1, 2) @ w1 + b1, 0) @ w2
    with np.errstate(over="ignore"):
        return 16 / (1 + np.exp(-values[index]))
''')}),
    # no ReLU between the layers
    "swin_v2_no_relu": ("ex08", {"swin_v2_position_bias": _bias('''
    values = (table.reshape(-1, 2) @ w1 + b1) @ w2
    with np.errstate(over="ignore"):
        return 16 / (1 + np.exp(-np.transpose(values[index], (2, 0, 1))))
''')}),
    # the table recomputed from the window, the one passed in ignored
    "swin_v2_table_recomputed": ("ex08", {"swin_v2_position_bias": _bias('''
    dh = np.arange(-(Wh - 1), Wh) * 8.0 / max(Wh - 1, 1)
    dw = np.arange(-(Ww - 1), Ww) * 8.0 / max(Ww - 1, 1)
    u = np.stack(np.meshgrid(dh, dw, indexing="ij"), axis=-1).reshape(-1, 2)
    coords = np.sign(u) * np.log2(np.abs(u) + 1) / 3
    values = np.maximum(coords @ w1 + b1, 0) @ w2
    with np.errstate(over="ignore"):
        return 16 / (1 + np.exp(-np.transpose(values[index], (2, 0, 1))))
''')}),
    # the tokens numbered column by column
    "swin_v2_tokens_column_by_column": ("ex08", {"swin_v2_position_bias": _bias('''
    rows, cols = np.arange(n) % Wh, np.arange(n) // Wh
    index = (rows[:, None] - rows[None, :] + Wh - 1) * (2 * Ww - 1) + cols[:, None] - cols[None, :] + Ww - 1
    values = np.maximum(table.reshape(-1, 2) @ w1 + b1, 0) @ w2
    with np.errstate(over="ignore"):
        return 16 / (1 + np.exp(-np.transpose(values[index], (2, 0, 1))))
''', checks=_BIAS_CHECKS)}),
    # b1 never checked: a single bias broadcasts over the hidden units
    "swin_v2_b1_shape_not_checked": ("ex08", {"swin_v2_position_bias": '''
def swin_v2_position_bias(coords_table, w1, b1, w2, window_height, window_width):
    for side in (window_height, window_width):
        if isinstance(side, (bool, np.bool_)) or not isinstance(side, (int, np.integer)) or side < 1:
            raise ValueError("window sides must be integers >= 1")
    Wh, Ww = int(window_height), int(window_width)
    table = np.asarray(coords_table, dtype=float)
    w1, b1, w2 = (np.asarray(a, dtype=float) for a in (w1, b1, w2))
    if table.shape != (2 * Wh - 1, 2 * Ww - 1, 2):
        raise ValueError("coords_table has the wrong shape")
    if w1.ndim != 2 or w1.shape[0] != 2 or w2.ndim != 2 or w2.shape[0] != w1.shape[1]:
        raise ValueError("w1 and w2 must have shapes (2, hidden) and (hidden, heads)")
    n = Wh * Ww
    rows, cols = np.arange(n) // Ww, np.arange(n) % Ww
    index = (rows[:, None] - rows[None, :] + Wh - 1) * (2 * Ww - 1) + cols[:, None] - cols[None, :] + Ww - 1
    values = np.maximum(table.reshape(-1, 2) @ w1 + b1, 0) @ w2
    with np.errstate(over="ignore"):
        return 16 / (1 + np.exp(-np.transpose(values[index], (2, 0, 1))))
'''}),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer_cell_grade_id: code})
    "swin_v2_own_window_range": ("ex08", {"ex08_largest_coordinate_answer":
                                          "ex08_largest_coordinate = math.log2(9) / 3"}),
    "swin_v2_linear_coordinate": ("ex08", {"ex08_largest_coordinate_answer": "ex08_largest_coordinate = 8 * 23 / 11"}),
    "swin_v2_normalised_by_24": ("ex08", {"ex08_largest_coordinate_answer":
                                          "ex08_largest_coordinate = math.log2(8 * 23 / 23 + 1) / 3"}),
}

ALTERNATIVES = {  # function_name: code, a differently written correct answer
    # offset by offset, with math
    "swin_v2_relative_coords_table": '''
def swin_v2_relative_coords_table(window_height, window_width, pretrained_window_height=0,
                                  pretrained_window_width=0):
    sides = [window_height, window_width, pretrained_window_height, pretrained_window_width]
    for s in sides:
        if type(s) is bool or isinstance(s, np.bool_) or not isinstance(s, (int, np.integer)):
            raise ValueError(f"{s!r} is not an integer")
    if window_height < 1 or window_width < 1:
        raise ValueError("a window side is at least 1")
    if pretrained_window_height in (1,) or pretrained_window_width in (1,) or min(sides[2:]) < 0:
        raise ValueError("a pretrained side is 0 or at least 2")
    if (pretrained_window_height > 0) != (pretrained_window_width > 0):
        raise ValueError("both pretrained sides, or neither")
    H, W = int(window_height), int(window_width)
    norm = (pretrained_window_height, pretrained_window_width) if pretrained_window_height > 0 else (H, W)
    out = np.zeros((2 * H - 1, 2 * W - 1, 2))
    for i in range(2 * H - 1):
        for j in range(2 * W - 1):
            for k, delta in enumerate((i - H + 1, j - W + 1)):
                if delta == 0:
                    continue
                u = 8.0 * delta / (norm[k] - 1)
                out[i, j, k] = math.copysign(math.log(abs(u) + 1, 8), u)
    return out
''',
    # np.add.outer for the index, einsum for the MLP, 8 (1 + tanh(z / 2)) for 16 sigmoid(z)
    "swin_v2_position_bias": '''
def swin_v2_position_bias(coords_table, w1, b1, w2, window_height, window_width):
    for side in (window_height, window_width):
        if not isinstance(side, (int, np.integer)) or isinstance(side, (bool, np.bool_)) or side < 1:
            raise ValueError("window sides must be integers >= 1")
    H, W = int(window_height), int(window_width)
    C = np.array(coords_table, dtype=float)
    A, c, B = np.array(w1, dtype=float), np.array(b1, dtype=float), np.array(w2, dtype=float)
    if C.shape != (2 * H - 1, 2 * W - 1, 2):
        raise ValueError("coords_table must have shape (2H-1, 2W-1, 2)")
    if A.ndim != 2 or A.shape[0] != 2:
        raise ValueError("w1 must have shape (2, hidden)")
    if c.shape != (A.shape[1],):
        raise ValueError("b1 must have shape (hidden,)")
    if B.ndim != 2 or B.shape[0] != A.shape[1]:
        raise ValueError("w2 must have shape (hidden, heads)")
    hidden = np.maximum(np.einsum("ijk,kh->ijh", C, A) + c, 0.0)
    per_offset = np.einsum("ijh,hn->nij", hidden, B)  # (heads, 2H-1, 2W-1)
    r = np.repeat(np.arange(H), W)
    q = np.tile(np.arange(W), H)
    dr = np.subtract.outer(r, r) + H - 1
    dq = np.subtract.outer(q, q) + W - 1
    z = per_offset[:, dr, dq]
    return 8.0 * (1.0 + np.tanh(z / 2.0))
''',
}
