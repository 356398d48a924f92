"""Wrong and alternative answers of posenc-advanced ex04 (Transformer-XL) and ex05 (Swin).

Each code string runs in the student's notebook, where `np` and `math` exist.
"""

# ---------------------------------------------------------------------------------------------
# ex04: Transformer-XL
# ---------------------------------------------------------------------------------------------

_ENCODINGS_ASCENDING = '''def transformer_xl_relative_encodings(key_length, d_model):
    if key_length < 1 or d_model < 2 or d_model % 2:
        raise ValueError("bad sizes")
    distances = np.arange(key_length, dtype=float)
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.outer(distances, inv_freq)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)
'''

_ENCODINGS_INTERLEAVED = '''def transformer_xl_relative_encodings(key_length, d_model):
    if key_length < 1 or d_model < 2 or d_model % 2:
        raise ValueError("bad sizes")
    distances = np.arange(key_length - 1, -1, -1, dtype=float)
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.outer(distances, inv_freq)
    out = np.zeros((key_length, d_model))
    out[:, 0::2] = np.sin(angles)
    out[:, 1::2] = np.cos(angles)
    return out
'''

_ENCODINGS_ODD_ACCEPTED = '''def transformer_xl_relative_encodings(key_length, d_model):
    if key_length < 1 or d_model < 2:
        raise ValueError("bad sizes")
    distances = np.arange(key_length - 1, -1, -1, dtype=float)
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.outer(distances, inv_freq)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)
'''

_SHIFT_PAD_RIGHT = '''def rel_shift(x):
    x = np.asarray(x)
    if x.ndim < 2 or x.shape[-1] < x.shape[-2]:
        raise ValueError("bad shape")
    lq, lk = x.shape[-2:]
    lead = x.shape[:-2]
    padded = np.concatenate([x, np.zeros(lead + (lq, 1), dtype=x.dtype)], axis=-1)
    padded = padded.reshape(lead + (lk + 1, lq))
    return padded[..., :-1, :].reshape(lead + (lq, lk))
'''

_SHIFT_SQUARE_ONLY = '''def rel_shift(x):
    x = np.asarray(x)
    if x.ndim < 2 or x.shape[-1] < x.shape[-2]:
        raise ValueError("bad shape")
    lq, lk = x.shape[-2:]
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    column = np.clip(j + lk - 1 - i, 0, lk - 1)
    return np.take_along_axis(x, np.broadcast_to(column, x.shape), axis=-1)
'''

_SHIFT_NO_LENGTH_CHECK = '''def rel_shift(x):
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError("x must be at least 2-D")
    lq, lk = x.shape[-2:]
    lead = x.shape[:-2]
    padded = np.concatenate([np.zeros(lead + (lq, 1), dtype=x.dtype), x], axis=-1)
    padded = padded.reshape(lead + (lk + 1, lq))
    return padded[..., 1:, :].reshape(lead + (lq, lk))
'''


def _scores(content_bias="u", position_bias="v", memory="lk - lq", visible="distance >= 0",
            scale="/ math.sqrt(d)", k_transpose="np.swapaxes(k, -1, -2)", add_u="q + u"):
    """A Transformer-XL score with one piece swapped for a mistake."""
    return f'''def transformer_xl_scores(q, k, r, u, v):
    q, k, r = np.asarray(q, dtype=float), np.asarray(k, dtype=float), np.asarray(r, dtype=float)
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    lq, d = q.shape[-2:]
    lk = k.shape[-2]
    if k.shape[-1] != d or lk < lq or r.shape != (lk, d) or u.shape != (d,) or v.shape != (d,):
        raise ValueError("bad shapes")
    content = ({add_u.replace("u", content_bias)}) @ {k_transpose}
    by_row = (q + {position_bias}) @ r.T
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    distance = {memory} + i - j
    row = np.clip(lk - 1 - distance, 0, lk - 1)
    position = np.take_along_axis(by_row, np.broadcast_to(row, by_row.shape), axis=-1)
    scores = (content + position) {scale}
    return np.where({visible}, scores, -np.inf)
'''


_SCORES_IN_PLACE = '''def transformer_xl_scores(q, k, r, u, v):
    lq, d = q.shape[-2:]
    lk = k.shape[-2]
    if k.shape[-1] != d or lk < lq or r.shape != (lk, d) or u.shape != (d,) or v.shape != (d,):
        raise ValueError("bad shapes")
    q_v = q + v
    q += u
    content = q @ np.swapaxes(k, -1, -2)
    by_row = q_v @ r.T
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    distance = lk - lq + i - j
    row = np.clip(lk - 1 - distance, 0, lk - 1)
    position = np.take_along_axis(by_row, np.broadcast_to(row, by_row.shape), axis=-1)
    return np.where(distance >= 0, (content + position) / math.sqrt(d), -np.inf)
'''

# ---------------------------------------------------------------------------------------------
# ex05: Swin
# ---------------------------------------------------------------------------------------------


def _index(rows="n // ww", cols="n % ww", multiplier="2 * ww - 1", shift_h="wh - 1",
           shift_w="ww - 1", order="a_minus_b", height="window_height"):
    """Swin's relative_position_index with one piece swapped for a mistake."""
    first, second = ("[:, None]", "[None, :]")
    if order == "b_minus_a":
        first, second = second, first
    return f'''def swin_relative_position_index(window_height, window_width):
    for side in (window_height, window_width):
        if not isinstance(side, (int, np.integer)) or side < 1:
            raise ValueError("window sides must be integers >= 1")
    wh, ww = {height}, window_width
    n = np.arange(wh * ww)
    h, w = {rows}, {cols}
    dh = h{first} - h{second} + {shift_h}
    dw = w{first} - w{second} + {shift_w}
    return (dh * ({multiplier}) + dw).astype(np.int64)
'''


def _bias(layout="(2, 0, 1)", shift_h="wh - 1", shift_w="ww - 1", check_rows=True):
    """Swin's relative position bias with one piece swapped for a mistake."""
    rows_check = ("    if table.shape[0] != (2 * wh - 1) * (2 * ww - 1):\n"
                  "        raise ValueError('wrong number of rows')\n") if check_rows else ""
    return f'''def swin_relative_bias(table, window_height, window_width):
    table = np.asarray(table, dtype=float)
    wh, ww = window_height, window_width
    if table.ndim != 2:
        raise ValueError("table must be 2-D")
{rows_check}    n = np.arange(wh * ww)
    h, w = n // ww, n % ww
    index = ((h[:, None] - h[None, :] + {shift_h}) * (2 * ww - 1)
             + (w[:, None] - w[None, :] + {shift_w}))
    return np.transpose(table[index], {layout})
'''


WRONG = {
    # ex04
    "txl_ascending_encoding_rows": ("ex04", {
        "transformer_xl_relative_encodings": _ENCODINGS_ASCENDING}),
    "txl_interleaved_sin_cos": ("ex04", {
        "transformer_xl_relative_encodings": _ENCODINGS_INTERLEAVED}),
    "txl_odd_d_model_accepted": ("ex04", {
        "transformer_xl_relative_encodings": _ENCODINGS_ODD_ACCEPTED}),
    "txl_rel_shift_pads_on_the_right": ("ex04", {"rel_shift": _SHIFT_PAD_RIGHT}),
    "txl_rel_shift_assumes_no_memory": ("ex04", {"rel_shift": _SHIFT_SQUARE_ONLY}),
    "txl_rel_shift_accepts_lk_below_lq": ("ex04", {"rel_shift": _SHIFT_NO_LENGTH_CHECK}),
    "txl_u_and_v_swapped": ("ex04", {
        "transformer_xl_scores": _scores(content_bias="v", position_bias="u")}),
    "txl_query_i_at_position_i": ("ex04", {"transformer_xl_scores": _scores(memory="0")}),
    "txl_distance_key_minus_query": ("ex04", {
        "transformer_xl_scores": _scores(memory="-(lk - lq)", visible="distance <= 0")
        .replace("distance = -(lk - lq) + i - j", "distance = j - (lk - lq + i)")}),
    "txl_no_future_mask": ("ex04", {"transformer_xl_scores": _scores(visible="True")}),
    "txl_present_key_masked": ("ex04", {"transformer_xl_scores": _scores(visible="distance > 0")}),
    "txl_no_scale": ("ex04", {"transformer_xl_scores": _scores(scale="")}),
    "txl_scale_by_d": ("ex04", {"transformer_xl_scores": _scores(scale="/ d")}),
    "txl_only_2d_inputs": ("ex04", {"transformer_xl_scores": _scores(k_transpose="k.T")}),
    "txl_u_added_in_place": ("ex04", {"transformer_xl_scores": _SCORES_IN_PLACE}),
    # ex05
    "swin_column_major_tokens": ("ex05", {
        "swin_relative_position_index": _index(rows="n % wh", cols="n // wh")}),
    "swin_height_multiplier": ("ex05", {
        "swin_relative_position_index": _index(multiplier="2 * wh - 1")}),
    "swin_offsets_not_shifted": ("ex05", {
        "swin_relative_position_index": _index(shift_h="0", shift_w="0")}),
    "swin_key_minus_query": ("ex05", {"swin_relative_position_index": _index(order="b_minus_a")}),
    "swin_square_window_assumed": ("ex05", {
        "swin_relative_position_index": _index(height="window_width")}),
    "swin_bias_heads_last": ("ex05", {"swin_relative_bias": _bias(layout="(0, 1, 2)")}),
    "swin_bias_offsets_not_shifted": ("ex05", {
        "swin_relative_bias": _bias(shift_h="0", shift_w="0")}),
    "swin_bias_rows_not_checked": ("ex05", {"swin_relative_bias": _bias(check_rows=False)}),
}

# The distance line of "distance_key_minus_query" reads j - (M + i); the rows are then read at
# Lk - 1 - (j - M - i) (clipped) and the mask keeps j <= M + i: the sign flips every row.
assert ("distance = j - (lk - lq + i)"
        in WRONG["txl_distance_key_minus_query"][1]["transformer_xl_scores"])

WRONG_CONCEPTS = {
    "txl_row_is_the_distance": ("ex04", {"ex04_row_answer": "ex04_row = 5"}),
    "txl_memory_forgotten": ("ex04", {"ex04_row_answer": "ex04_row = 8"}),
    "swin_forgot_the_heads": ("ex05", {"ex05_parameters_answer": "ex05_parameters = 169"}),
    "swin_one_number_per_pair": ("ex05", {
        "ex05_parameters_answer": "ex05_parameters = 49 * 49 * 3"}),
}

ALTERNATIVES = {
    # Element by element, with math.sin and math.cos.
    "transformer_xl_relative_encodings": '''
def transformer_xl_relative_encodings(key_length, d_model):
    if not isinstance(key_length, (int, np.integer)) or not isinstance(d_model, (int, np.integer)):
        raise ValueError("sizes must be integers")
    if key_length < 1 or d_model < 2 or d_model % 2 == 1:
        raise ValueError("key_length >= 1 and an even d_model >= 2 are needed")
    half = d_model // 2
    out = np.empty((key_length, d_model))
    for m in range(key_length):
        distance = key_length - 1 - m
        for t in range(half):
            angle = distance * math.exp(-math.log(10000.0) * 2 * t / d_model)
            out[m, t] = math.sin(angle)
            out[m, half + t] = math.cos(angle)
    return out
''',
    # A gather; the filler entries are NaN (they are not part of the contract).
    "rel_shift": '''def rel_shift(x):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise ValueError("x must be (..., Lq, Lk)")
    lq, lk = x.shape[-2], x.shape[-1]
    if lk < lq:
        raise ValueError("Lk must be >= Lq")
    out = np.full(x.shape, np.nan)
    for i in range(lq):
        for j in range(lk - lq + i + 1):
            out[..., i, j] = x[..., i, j + lq - 1 - i]
    return out
''',
    # The code's AC + BD with einsum and its pad-and-reshape shift, then a mask.
    "transformer_xl_scores": '''def _shift_left_padded(x):
    lq, lk = x.shape[-2:]
    padded = np.concatenate([np.zeros(x.shape[:-1] + (1,)), x], axis=-1)
    return padded.reshape(x.shape[:-2] + (lk + 1, lq))[..., 1:, :].reshape(x.shape)


def transformer_xl_scores(q, k, r, u, v):
    q, k, r = np.asarray(q, dtype=float), np.asarray(k, dtype=float), np.asarray(r, dtype=float)
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError("q and k must be (..., L, d) with the same d")
    lq, d = q.shape[-2:]
    lk = k.shape[-2]
    if lk < lq:
        raise ValueError("Lk < Lq")
    if r.shape != (lk, d) or u.shape != (d,) or v.shape != (d,):
        raise ValueError("r must be (Lk, d), u and v (d,)")
    ac = np.einsum("...id,...jd->...ij", q + u, k)
    bd = _shift_left_padded(np.einsum("...id,md->...im", q + v, r))
    future = np.triu(np.ones((lq, lk), dtype=bool), k=lk - lq + 1)
    return np.where(future, -np.inf, (ac + bd) / np.sqrt(d))
''',
    # Swin's own steps: a meshgrid of coordinates, pairwise differences, shift, scale, sum.
    "swin_relative_position_index": '''
def swin_relative_position_index(window_height, window_width):
    for side in (window_height, window_width):
        if isinstance(side, bool) or not isinstance(side, (int, np.integer)) or side < 1:
            raise ValueError("window sides must be integers >= 1")
    coords = np.stack(np.meshgrid(np.arange(window_height), np.arange(window_width),
                                  indexing="ij")).reshape(2, -1)
    relative = coords[:, :, None] - coords[:, None, :]
    relative[0] += window_height - 1
    relative[1] += window_width - 1
    relative[0] *= 2 * window_width - 1
    return relative.sum(axis=0).astype(np.int64)
''',
    # A one-hot matrix of the offsets times the table, heads moved to the front.
    "swin_relative_bias": '''def swin_relative_bias(table, window_height, window_width):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2:
        raise ValueError("table must be 2-D")
    if window_height < 1 or window_width < 1:
        raise ValueError("window sides must be >= 1")
    width = 2 * window_width - 1
    if table.shape[0] != (2 * window_height - 1) * width:
        raise ValueError("wrong number of table rows")
    positions = [divmod(n, window_width) for n in range(window_height * window_width)]
    n = len(positions)
    one_hot = np.zeros((n, n, table.shape[0]))
    for a, (ha, wa) in enumerate(positions):
        for b, (hb, wb) in enumerate(positions):
            one_hot[a, b, (ha - hb + window_height - 1) * width + wa - wb + window_width - 1] = 1.0
    return np.moveaxis(one_hot @ table, -1, 0)
''',
}
