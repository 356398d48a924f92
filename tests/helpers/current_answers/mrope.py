"""Wrong and alternative answers for posenc-current exercise 7 (M-RoPE: Qwen2-VL's three rows of position ids
and their rotation).

Each code string runs in a student's notebook, where ``np`` and ``math`` exist. The wrong answers keep every
input check of the contract, except the one whose absence is their mistake.
"""

# The input checks of mrope_position_ids, as a student writes them; the wrong answers below share them.
_IDS_CHECKS = '''
    if not isinstance(segments, (list, tuple)) or not segments:
        raise ValueError("segments must be a non-empty list")
    for segment in segments:
        if not isinstance(segment, (list, tuple)) or not segment or segment[0] not in ("text", "image"):
            raise ValueError(f"bad segment {segment!r}")
        if len(segment) != (2 if segment[0] == "text" else 4):
            raise ValueError(f"bad number of counts in {segment!r}")
        for count in segment[1:]:
            if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)) or count < 1:
                raise ValueError(f"bad count {count!r}")'''

# The input checks of apply_mrope, as a student writes them.
_APPLY_CHECKS = '''
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with an even d")
    length, d = x.shape[-2:]
    ids = np.asarray(position_ids, dtype=float)
    if ids.shape != (3, length):
        raise ValueError("position_ids must have shape (3, L)")
    section = list(mrope_section)
    if len(section) != 3 or any(isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer)) or m < 0
                                for m in section):
        raise ValueError("mrope_section must be three integers >= 0")
    if sum(section) != d // 2:
        raise ValueError("mrope_section must add up to d/2")
    if base <= 0:
        raise ValueError("base must be > 0")
    half = d // 2'''


def _ids(body, checks=_IDS_CHECKS):
    return "\ndef mrope_position_ids(segments):" + checks + "\n" + body


def _apply(body, checks=_APPLY_CHECKS):
    return "\ndef apply_mrope(x, position_ids, mrope_section, base=10000.0):" + checks + "\n" + body


WRONG = {  # label: (exercise, {function_name: code})
    # 1-D habit: the text after an image resumes at the number of tokens so far
    "mrope_text_resumes_at_token_count": ("ex07", {"mrope_position_ids": _ids('''
    rows, count = [[], [], []], 0
    for segment in segments:
        start = count
        if segment[0] == "text":
            for i in range(segment[1]):
                for row in rows:
                    row.append(start + i)
            count += segment[1]
        else:
            _, t, h, w = segment
            for a in range(t):
                for b in range(h):
                    for c in range(w):
                        rows[0].append(start + a)
                        rows[1].append(start + b)
                        rows[2].append(start + c)
            count += t * h * w
    return np.array(rows, dtype=np.int64)
''')}),
    # rows 1 and 2 swapped: the height row counts columns, the width row counts rows
    "mrope_height_width_rows_swapped": ("ex07", {"mrope_position_ids": _ids('''
    columns, start = [], 0
    for segment in segments:
        if segment[0] == "text":
            ids = np.tile(np.arange(segment[1]), (3, 1))
        else:
            t, h, w = segment[1:]
            a, b, c = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
            ids = np.stack([a.ravel(), c.ravel(), b.ravel()])
        columns.append(ids + start)
        start += ids.max() + 1
    return np.concatenate(columns, axis=1).astype(np.int64)
''')}),
    # an image read column by column: its tokens in the order t, w, h (h fastest)
    "mrope_image_read_column_by_column": ("ex07", {"mrope_position_ids": _ids('''
    columns, start = [], 0
    for segment in segments:
        if segment[0] == "text":
            ids = np.tile(np.arange(segment[1]), (3, 1))
        else:
            t, h, w = segment[1:]
            a, c, b = np.meshgrid(np.arange(t), np.arange(w), np.arange(h), indexing="ij")
            ids = np.stack([a.ravel(), b.ravel(), c.ravel()])
        columns.append(ids + start)
        start += ids.max() + 1
    return np.concatenate(columns, axis=1).astype(np.int64)
''')}),
    # transformers 5.24: past an image or video by max(h, w), whatever the number of frames
    "mrope_advance_by_max_h_w": ("ex07", {"mrope_position_ids": _ids('''
    columns, start = [], 0
    for segment in segments:
        if segment[0] == "text":
            ids = np.tile(np.arange(segment[1]), (3, 1))
            columns.append(ids + start)
            start += segment[1]
        else:
            t, h, w = segment[1:]
            a, b, c = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
            columns.append(np.stack([a.ravel(), b.ravel(), c.ravel()]) + start)
            start += max(h, w)
    return np.concatenate(columns, axis=1).astype(np.int64)
''')}),
    # the next segment starts at the last token's width id + 1 (right for text and wide images only)
    "mrope_start_after_last_width_id": ("ex07", {"mrope_position_ids": _ids('''
    columns, start = [], 0
    for segment in segments:
        if segment[0] == "text":
            ids = np.tile(np.arange(segment[1]), (3, 1))
        else:
            t, h, w = segment[1:]
            a, b, c = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
            ids = np.stack([a.ravel(), b.ravel(), c.ravel()])
        columns.append(ids + start)
        start = columns[-1][2, -1] + 1
    return np.concatenate(columns, axis=1).astype(np.int64)
''')}),
    # off by one: the next segment starts at the largest id so far, not one past it
    "mrope_start_at_max_not_max_plus_one": ("ex07", {"mrope_position_ids": _ids('''
    columns, start = [], 0
    for segment in segments:
        if segment[0] == "text":
            ids = np.tile(np.arange(segment[1]), (3, 1))
        else:
            t, h, w = segment[1:]
            a, b, c = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
            ids = np.stack([a.ravel(), b.ravel(), c.ravel()])
        columns.append(ids + start)
        start = columns[-1].max()
    return np.concatenate(columns, axis=1).astype(np.int64)
''')}),
    # counts rounded with int(): 2.0, 2.5 and True pass
    "mrope_counts_not_checked": ("ex07", {"mrope_position_ids": '''
def mrope_position_ids(segments):
    if not isinstance(segments, (list, tuple)) or not segments:
        raise ValueError("segments must be a non-empty list")
    columns, start = [], 0
    for segment in segments:
        if not isinstance(segment, (list, tuple)) or not segment or segment[0] not in ("text", "image"):
            raise ValueError(f"bad segment {segment!r}")
        if len(segment) != (2 if segment[0] == "text" else 4):
            raise ValueError(f"bad number of counts in {segment!r}")
        counts = [int(c) for c in segment[1:]]
        if min(counts) < 1:
            raise ValueError("counts must be >= 1")
        if segment[0] == "text":
            ids = np.tile(np.arange(counts[0]), (3, 1))
        else:
            a, b, c = np.meshgrid(*(np.arange(n) for n in counts), indexing="ij")
            ids = np.stack([a.ravel(), b.ravel(), c.ravel()])
        columns.append(ids + start)
        start += ids.max() + 1
    return np.concatenate(columns, axis=1).astype(np.int64)
'''}),
    # the number of counts never checked: ("text", 1, 2) reads as ("text", 1)
    "mrope_segment_length_not_checked": ("ex07", {"mrope_position_ids": '''
def mrope_position_ids(segments):
    if not isinstance(segments, (list, tuple)) or not segments:
        raise ValueError("segments must be a non-empty list")
    columns, start = [], 0
    for segment in segments:
        if not isinstance(segment, (list, tuple)) or not segment or segment[0] not in ("text", "image"):
            raise ValueError(f"bad segment {segment!r}")
        for count in segment[1:]:
            if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)) or count < 1:
                raise ValueError(f"bad count {count!r}")
        if segment[0] == "text":
            ids = np.tile(np.arange(segment[1]), (3, 1))
        else:
            t, h, w = segment[1:4]
            a, b, c = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
            ids = np.stack([a.ravel(), b.ravel(), c.ravel()])
        columns.append(ids + start)
        start += ids.max() + 1
    return np.concatenate(columns, axis=1).astype(np.int64)
'''}),
    # transformers' recipe without its `* 2`: the sections cut the d columns of cos and sin, so the second
    # half of the head (dimensions d/2 .. d-1) all read the width row
    "mrope_section_cuts_dimensions": ("ex07", {"apply_mrope": _apply('''
    theta = base ** (-np.arange(half) * 2.0 / d)
    rows = np.repeat([0, 1, 2], [section[0], section[1], section[2] + half])
    angles = ids[rows].T * np.concatenate([theta, theta])
    rotated_half = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * np.cos(angles) + rotated_half * np.sin(angles)
''')}),
    # interleaved pairs (2t, 2t + 1) instead of the half-split (t, t + d/2)
    "mrope_interleaved_pairs": ("ex07", {"apply_mrope": _apply('''
    theta = base ** (-np.arange(half) * 2.0 / d)
    rows = np.repeat([0, 1, 2], section)
    angles = ids[rows].T * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * np.cos(angles) - odd * np.sin(angles)
    out[..., 1::2] = odd * np.cos(angles) + even * np.sin(angles)
    return out
''')}),
    # the first section reads the width row and the last the temporal one
    "mrope_rows_reversed": ("ex07", {"apply_mrope": _apply('''
    theta = base ** (-np.arange(half) * 2.0 / d)
    rows = np.repeat([2, 1, 0], section)
    angles = ids[rows].T * theta
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles)], axis=-1)
''')}),
    # each section a RoPE of its own: the frequencies restart at 1 in every section
    "mrope_frequencies_restart_per_section": ("ex07", {"apply_mrope": _apply('''
    theta = np.concatenate([base ** (-np.arange(m) * 2.0 / d) for m in section])
    rows = np.repeat([0, 1, 2], section)
    angles = ids[rows].T * theta
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles)], axis=-1)
''')}),
    # Qwen3-VL's interleaved M-RoPE: pair t reads row t % 3, whatever the section
    "mrope_pairs_cycle_through_rows": ("ex07", {"apply_mrope": _apply('''
    theta = base ** (-np.arange(half) * 2.0 / d)
    rows = np.arange(half) % 3
    angles = ids[rows].T * theta
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles)], axis=-1)
''')}),
    # every pair reads the temporal row: plain RoPE on the first row
    "mrope_temporal_row_only": ("ex07", {"apply_mrope": _apply('''
    theta = base ** (-np.arange(half) * 2.0 / d)
    angles = ids[0][:, None] * theta
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles)], axis=-1)
''')}),
    # rotates the caller's array in place (np.asarray keeps a float64 array as it is)
    "mrope_rotates_in_place": ("ex07", {"apply_mrope": _apply('''
    theta = base ** (-np.arange(half) * 2.0 / d)
    angles = ids[np.repeat([0, 1, 2], section)].T * theta
    a, b = x[..., :half].copy(), x[..., half:].copy()
    x[..., :half] = a * np.cos(angles) - b * np.sin(angles)
    x[..., half:] = b * np.cos(angles) + a * np.sin(angles)
    return x
''')}),
    # the section's sum never checked: a section shorter than d/2 pairs broadcasts its single row
    "mrope_section_sum_not_checked": ("ex07", {"apply_mrope": '''
def apply_mrope(x, position_ids, mrope_section, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with an even d")
    length, d = x.shape[-2:]
    ids = np.asarray(position_ids, dtype=float)
    if ids.shape != (3, length):
        raise ValueError("position_ids must have shape (3, L)")
    section = list(mrope_section)
    if len(section) != 3 or any(not isinstance(m, (int, np.integer)) or m < 0 for m in section):
        raise ValueError("mrope_section must be three integers >= 0")
    if base <= 0:
        raise ValueError("base must be > 0")
    half = d // 2
    theta = base ** (-np.arange(half) * 2.0 / d)
    angles = ids[np.repeat([0, 1, 2], section)].T * theta
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles)], axis=-1)
'''}),
    # position_ids checked by its number of rows only: one column broadcasts over L tokens
    "mrope_position_ids_shape_not_checked": ("ex07", {"apply_mrope": '''
def apply_mrope(x, position_ids, mrope_section, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with an even d")
    d = x.shape[-1]
    ids = np.asarray(position_ids, dtype=float)
    if len(ids) != 3:
        raise ValueError("position_ids must have three rows")
    section = list(mrope_section)
    if len(section) != 3 or any(isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer)) or m < 0
                                for m in section):
        raise ValueError("mrope_section must be three integers >= 0")
    if sum(section) != d // 2:
        raise ValueError("mrope_section must add up to d/2")
    if base <= 0:
        raise ValueError("base must be > 0")
    half = d // 2
    theta = base ** (-np.arange(half) * 2.0 / d)
    angles = ids[np.repeat([0, 1, 2], section)].T * theta
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles)], axis=-1)
'''}),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer_cell_grade_id: code})
    "mrope_end_as_1d_positions": ("ex07", {"ex07_end_position_answer": "ex07_end_position = 10 + 16 * 24"}),
    "mrope_end_patches_not_merged": ("ex07", {"ex07_end_position_answer": "ex07_end_position = 10 + 48"}),
    "mrope_end_largest_id_itself": ("ex07", {"ex07_end_position_answer": "ex07_end_position = 33"}),
}

ALTERNATIVES = {  # function_name: code, a differently written correct answer
    # plain loops and lists, the largest id tracked as it is written
    "mrope_position_ids": '''
def mrope_position_ids(segments):
    if type(segments) not in (list, tuple) or len(segments) < 1:
        raise ValueError("segments must be a non-empty list or tuple")

    def is_count(n):
        return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) and n >= 1

    temporal, height, width = [], [], []
    next_start = 0
    for segment in segments:
        if not isinstance(segment, (list, tuple)) or len(segment) not in (2, 4):
            raise ValueError(f"not a segment: {segment!r}")
        kind, counts = segment[0], segment[1:]
        if (kind, len(counts)) not in (("text", 1), ("image", 3)) or not all(is_count(n) for n in counts):
            raise ValueError(f"not a segment: {segment!r}")
        start, largest = next_start, next_start
        if kind == "text":
            for i in range(counts[0]):
                temporal.append(start + i)
                height.append(start + i)
                width.append(start + i)
                largest = start + i
        else:
            t, h, w = counts
            for a in range(t):
                for b in range(h):
                    for c in range(w):
                        temporal.append(start + a)
                        height.append(start + b)
                        width.append(start + c)
                        largest = max(largest, start + a, start + b, start + c)
        next_start = largest + 1
    return np.array([temporal, height, width], dtype=np.int64)
''',
    # transformers' recipe: cos and sin of width d, cut at mrope_section * 2, chunk i from row i % 3, rotate_half
    "apply_mrope": '''
def apply_mrope(x, position_ids, mrope_section, base=10000.0):
    x = np.array(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError("x must have shape (..., L, d)")
    L, d = x.shape[-2], x.shape[-1]
    if d % 2 == 1:
        raise ValueError("d must be even")
    pos = np.array(position_ids, dtype=np.float64)
    if pos.ndim != 2 or pos.shape[0] != 3 or pos.shape[1] != L:
        raise ValueError("position_ids must have shape (3, L)")
    if isinstance(mrope_section, (str, bytes)) or not hasattr(mrope_section, "__len__") or len(mrope_section) != 3:
        raise ValueError("mrope_section must be three integers")
    for m in mrope_section:
        if isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer)) or m < 0:
            raise ValueError("mrope_section must be three integers >= 0")
    if int(np.sum(mrope_section)) * 2 != d:
        raise ValueError("mrope_section must add up to d/2")
    if not base > 0:
        raise ValueError("base must be positive")
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    freqs = pos[:, :, None] * inv_freq  # (3, L, d/2)
    emb = np.concatenate([freqs, freqs], axis=-1)  # (3, L, d)
    cuts = np.cumsum(list(mrope_section) * 2)[:-1]
    cos = np.concatenate([chunk[i % 3] for i, chunk in enumerate(np.split(np.cos(emb), cuts, axis=-1))], axis=-1)
    sin = np.concatenate([chunk[i % 3] for i, chunk in enumerate(np.split(np.sin(emb), cuts, axis=-1))], axis=-1)
    rotate_half = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * cos + rotate_half * sin
''',
}
