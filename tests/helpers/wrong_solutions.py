"""Realistic wrong answers, each a mistake that students make, grafted into a submission.

``WRONG[label] = (exercise, {function_name: code})``. Every entry must lose points in its own
exercise and keep full marks in every other one. The code runs in the student's notebook, so it
may use ``np``, ``math`` and the notebook's other functions.
"""

import inspect

import posenc_solutions

WRONG = {}


def wrong(label, exercise, function, code):
    assert label not in WRONG, label
    WRONG[label] = (exercise, {function: code})


def _without_lines(function, first, stop):
    """The reference `function`'s source without its lines from the one starting `first` up to the one starting
    `stop` (each found exactly once), so that a wrong answer cannot silently become the reference."""
    lines = inspect.getsource(function).splitlines(keepends=True)
    [begin] = [i for i, line in enumerate(lines) if line.strip().startswith(first)]
    [end] = [i for i, line in enumerate(lines) if line.strip().startswith(stop)]
    assert begin < end, (first, stop)
    return "".join(lines[:begin] + lines[end:])


def _replacing(function, old, new):
    """The reference `function`'s source with its one line that holds `old` (found exactly once) holding `new`
    there instead: the mistake, and nothing else, in the reference."""
    source = inspect.getsource(function)
    assert source.count(old) == 1, (function.__name__, old)
    return source.replace(old, new)


# ex01 sinusoidal rows -------------------------------------------------------------------------
wrong("concat_layout", "ex01", "sinusoidal_row", '''
def sinusoidal_row(position, d_model, base=10000.0):
    if d_model % 2 or d_model < 2 or base <= 0:
        raise ValueError("d_model must be even and base > 0")
    angles = position * base ** (-np.arange(0, d_model, 2) / d_model)
    return np.concatenate([np.sin(angles), np.cos(angles)])
''')
wrong("exponent_i_over_d", "ex01", "sinusoidal_row", '''
def sinusoidal_row(position, d_model, base=10000.0):
    if d_model % 2 or d_model < 2 or base <= 0:
        raise ValueError("d_model must be even and base > 0")
    angles = position * base ** (-np.arange(d_model // 2) / d_model)
    row = np.empty(d_model)
    row[0::2], row[1::2] = np.sin(angles), np.cos(angles)
    return row
''')
wrong("table_starts_at_1", "ex01", "sinusoidal_table", '''
def sinusoidal_table(num_positions, d_model, base=10000.0):
    if num_positions < 0:
        raise ValueError("num_positions must be >= 0")
    return np.array([sinusoidal_row(p + 1, d_model, base) for p in range(num_positions)]).reshape(num_positions, d_model)
''')
wrong("no_d_model_check", "ex01", "sinusoidal_row", '''
def sinusoidal_row(position, d_model, base=10000.0):
    angles = position * base ** (-np.arange(0, d_model, 2) / d_model)
    row = np.zeros(2 * len(angles))
    row[0::2], row[1::2] = np.sin(angles), np.cos(angles)
    return row[:d_model]
''')

# ex02 token plus position ----------------------------------------------------------------------
wrong("no_range_check", "ex02", "add_positions", '''
def add_positions(token_embeddings, position_table, start=0):
    tokens, table = np.asarray(token_embeddings), np.asarray(position_table)
    if tokens.ndim < 2 or table.ndim != 2 or tokens.shape[-1] != table.shape[1] or start < 0:
        raise ValueError("bad input")
    return tokens + table[start:start + tokens.shape[-2]]
''')
wrong("range_message_without_length", "ex02", "add_positions", _replacing(
    posenc_solutions.add_positions, 'f"the position table only has P={num_positions} rows"',
    '"the position table is too short"'))
wrong("ignores_start", "ex02", "add_positions", '''
def add_positions(token_embeddings, position_table, start=0):
    tokens, table = np.asarray(token_embeddings), np.asarray(position_table)
    if tokens.ndim < 2 or table.ndim != 2 or tokens.shape[-1] != table.shape[1] or start < 0:
        raise ValueError("bad input")
    L = tokens.shape[-2]
    if start + L > table.shape[0]:
        raise ValueError(f"only P={table.shape[0]} positions")
    return tokens + table[:L]
''')
wrong("adds_in_place", "ex02", "add_positions", '''
def add_positions(token_embeddings, position_table, start=0):
    tokens, table = np.asarray(token_embeddings), np.asarray(position_table)
    if tokens.ndim < 2 or table.ndim != 2 or tokens.shape[-1] != table.shape[1] or start < 0:
        raise ValueError("bad input")
    L = tokens.shape[-2]
    if start + L > table.shape[0]:
        raise ValueError(f"only P={table.shape[0]} positions")
    tokens += table[start:start + L]
    return tokens
''')

# ex03 relative distances -----------------------------------------------------------------------
wrong("key_minus_query", "ex03", "relative_position_matrix", '''
def relative_position_matrix(query_positions, key_positions):
    q, k = np.asarray(query_positions), np.asarray(key_positions)
    if q.ndim != 1 or k.ndim != 1:
        raise ValueError("positions must be 1-D")
    return (k[None, :] - q[:, None]).astype(np.int64)
''')
wrong("strict_causal", "ex03", "causal_mask", '''
def causal_mask(query_positions, key_positions):
    return np.asarray(key_positions)[None, :] < np.asarray(query_positions)[:, None]
''')
wrong("mask_from_lengths", "ex03", "causal_mask", '''
def causal_mask(query_positions, key_positions):
    return np.tril(np.ones((len(query_positions), len(key_positions)), dtype=bool))
''')

# ex04 relative bias ----------------------------------------------------------------------------
wrong("shaw_no_clipping", "ex04", "clipped_relative_bias", '''
def clipped_relative_bias(bias_table, query_positions, key_positions):
    table = np.asarray(bias_table)
    if table.ndim != 2 or table.shape[1] % 2 == 0:
        raise ValueError("bias_table must be (H, 2K+1)")
    K = table.shape[1] // 2
    offsets = np.asarray(query_positions)[:, None] - np.asarray(key_positions)[None, :]
    return table[:, (offsets + K) % table.shape[1]]
''')
wrong("shaw_sign_flipped", "ex04", "clipped_relative_bias", '''
def clipped_relative_bias(bias_table, query_positions, key_positions):
    table = np.asarray(bias_table)
    if table.ndim != 2 or table.shape[1] % 2 == 0:
        raise ValueError("bias_table must be (H, 2K+1)")
    K = table.shape[1] // 2
    offsets = np.asarray(key_positions)[None, :] - np.asarray(query_positions)[:, None]
    return table[:, np.clip(offsets, -K, K) + K]
''')
wrong("t5_no_cap", "ex04", "t5_relative_position_bucket", '''
def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    rel = np.asarray(relative_position)
    if bidirectional:
        num_buckets //= 2
        bucket = (rel > 0) * num_buckets
        n = np.abs(rel)
    else:
        bucket = np.zeros_like(rel)
        n = np.maximum(-rel, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore"):
        large = max_exact + (np.log(n / max_exact) / np.log(max_distance / max_exact) * (num_buckets - max_exact)).astype(int)
    return bucket + np.where(n < max_exact, n, large)
''')
wrong("t5_future_offset_on_past", "ex04", "t5_relative_position_bucket", '''
def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    rel = np.asarray(relative_position)
    if bidirectional:
        num_buckets //= 2
        bucket = (rel < 0) * num_buckets
        n = np.abs(rel)
    else:
        bucket = np.zeros_like(rel)
        n = np.maximum(-rel, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore"):
        large = max_exact + (np.log(n / max_exact) / np.log(max_distance / max_exact) * (num_buckets - max_exact)).astype(int)
    return bucket + np.where(n < max_exact, n, np.minimum(large, num_buckets - 1))
''')
# The reference without its checks of num_buckets and max_distance: 2 buckets bidirectional divide by zero,
# max_distance at the last exact distance makes every large distance a NaN bucket
wrong("t5_no_input_checks", "ex04", "t5_relative_position_bucket", _without_lines(
    posenc_solutions.t5_relative_position_bucket, "smallest = 4 if bidirectional",
    "relative_position = np.asarray(relative_position)"))
wrong("t5_round_not_floor", "ex04", "t5_relative_position_bucket", _replacing(
    posenc_solutions.t5_relative_position_bucket, "np.floor(log_ratio * (num_buckets - max_exact))",
    "np.round(log_ratio * (num_buckets - max_exact))"))
wrong("t5_bias_query_minus_key", "ex04", "t5_relative_bias", '''
def t5_relative_bias(bias_table, query_positions, key_positions, bidirectional=True, max_distance=128):
    table = np.asarray(bias_table)
    rel = np.asarray(query_positions)[:, None] - np.asarray(key_positions)[None, :]
    return table[:, t5_relative_position_bucket(rel, bidirectional, table.shape[1], max_distance)]
''')

wrong("t5_warns_at_distance_0", "ex04", "t5_relative_position_bucket", '''
def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # HF's torch code, line by line in numpy: the log is taken of every distance, 0 included, and
    # torch.where picks the exact bucket afterwards. Right buckets, but numpy warns
    # "divide by zero encountered in log" at distance 0, which the contract forbids.
    rel = np.asarray(relative_position)
    buckets = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        rel = np.abs(rel)
    else:
        rel = -np.minimum(rel, 0)
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    large = max_exact + (np.log(rel.astype(np.float32) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(is_small, rel, large)
''')
# ex05 RoPE ---------------------------------------------------------------------------------------
wrong("rope_half_split", "ex05", "apply_rope", '''
def apply_rope(x, positions, base=10000.0):
    x, positions = np.asarray(x, dtype=float), np.asarray(positions, dtype=float)
    if x.shape[-1] % 2 or len(positions) != x.shape[-2]:
        raise ValueError("bad shapes")
    half = x.shape[-1] // 2
    angles = positions[:, None] * rope_frequencies(x.shape[-1], base)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), a * np.sin(angles) + b * np.cos(angles)], axis=-1)
''')
wrong("rope_clockwise", "ex05", "apply_rope", '''
def apply_rope(x, positions, base=10000.0):
    x, positions = np.asarray(x, dtype=float), np.asarray(positions, dtype=float)
    if x.shape[-1] % 2 or len(positions) != x.shape[-2]:
        raise ValueError("bad shapes")
    angles = positions[:, None] * rope_frequencies(x.shape[-1], base)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) + x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = -x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out
''')
wrong("rope_ignores_positions", "ex05", "apply_rope", '''
def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.shape[-1] % 2 or len(positions) != x.shape[-2]:
        raise ValueError("bad shapes")
    angles = np.arange(x.shape[-2])[:, None] * rope_frequencies(x.shape[-1], base)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out
''')
wrong("rope_t_over_d", "ex05", "rope_frequencies", '''
def rope_frequencies(head_dim, base=10000.0):
    if head_dim < 2 or head_dim % 2:
        raise ValueError("head_dim must be even and >= 2")
    return base ** (-np.arange(head_dim // 2) / head_dim)
''')

# ex06 RoPE offset identity -----------------------------------------------------------------------
wrong("offset_query_minus_key", "ex06", "rope_score_from_offset", '''
def rope_score_from_offset(q, k, offset, theta):
    return float(np.asarray(q) @ (rotation_2d(-offset * theta) @ np.asarray(k)))
''')
wrong("rotation_clockwise", "ex06", "rotation_2d", '''
def rotation_2d(angle):
    return np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])
''')
wrong("score_uses_m_twice", "ex06", "rope_score_2d", '''
def rope_score_2d(q, k, m, n, theta):
    return float((rotation_2d(m * theta) @ np.asarray(q)) @ (rotation_2d(m * theta) @ np.asarray(k)))
''')

# ex07 ALiBi -------------------------------------------------------------------------------------------
wrong("slopes_not_power_of_two", "ex07", "alibi_slopes", '''
def alibi_slopes(num_heads):
    if num_heads < 1:
        raise ValueError("num_heads must be >= 1")
    return 2.0 ** (-8.0 / num_heads * np.arange(1, num_heads + 1))
''')
wrong("alibi_positive_bias", "ex07", "alibi_bias", '''
def alibi_bias(slopes, query_positions, key_positions):
    distance = np.abs(np.asarray(query_positions)[:, None] - np.asarray(key_positions)[None, :])
    return np.asarray(slopes, dtype=float)[:, None, None] * distance
''')
wrong("mask_after_softmax", "ex07", "masked_softmax", '''
def masked_softmax(logits, mask):
    logits = np.asarray(logits, dtype=float)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * np.asarray(mask)
''')
wrong("unstable_softmax", "ex07", "masked_softmax", '''
def masked_softmax(logits, mask):
    e = np.where(mask, np.exp(np.asarray(logits, dtype=float)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''')
wrong("max_includes_masked", "ex07", "masked_softmax", '''
def masked_softmax(logits, mask):
    logits = np.asarray(logits, dtype=float)
    e = np.where(mask, np.exp(logits - logits.max(axis=-1, keepdims=True)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
''')
# A large negative number for the mask instead of -inf: weights near 0, but not exactly 0 whatever the logits.
wrong("mask_adds_minus_1e9", "ex07", "masked_softmax", '''
def masked_softmax(logits, mask):
    logits = np.asarray(logits, dtype=float)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), np.broadcast_shapes(np.shape(logits), np.shape(mask)))
    z = logits + np.where(mask, 0.0, -1e9)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return np.where(mask.any(axis=-1, keepdims=True), e / e.sum(axis=-1, keepdims=True), 0.0)
''')
wrong("mask_puts_minus_1e30", "ex07", "masked_softmax", '''
def masked_softmax(logits, mask):
    logits = np.asarray(logits, dtype=float)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), np.broadcast_shapes(np.shape(logits), np.shape(mask)))
    z = np.where(mask, logits, -1e30)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return np.where(mask.any(axis=-1, keepdims=True), e / e.sum(axis=-1, keepdims=True), 0.0)
''')
wrong("bias_after_softmax", "ex07", "alibi_attention", '''
def alibi_attention(scores, slopes, query_positions, key_positions, causal=True):
    q, k = np.asarray(query_positions), np.asarray(key_positions)
    mask = (k[None, :] <= q[:, None]) if causal else np.ones((len(q), len(k)), dtype=bool)
    bias = alibi_bias(slopes, q, k)
    weights = masked_softmax(np.broadcast_to(np.asarray(scores, dtype=float), bias.shape), mask) + bias
    return weights
''')

# ex08 learned tables ---------------------------------------------------------------------------------
wrong("interpolate_not_endpoint_aligned", "ex08", "interpolate_position_table", '''
def interpolate_position_table(table, new_num_positions):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] < 2 or new_num_positions < 2:
        raise ValueError("need a 2-D table with P >= 2 and P' >= 2")
    x = np.arange(new_num_positions) * table.shape[0] / new_num_positions
    return np.stack([np.interp(x, np.arange(table.shape[0]), column) for column in table.T], axis=1)
''')
wrong("interpolate_nearest_row", "ex08", "interpolate_position_table", '''
def interpolate_position_table(table, new_num_positions):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] < 2 or new_num_positions < 2:
        raise ValueError("need a 2-D table with P >= 2 and P' >= 2")
    x = np.arange(new_num_positions) * (table.shape[0] - 1) / (new_num_positions - 1)
    return table[np.round(x).astype(int)]
''')
wrong("t5_table_per_layer", "ex08", "position_parameter_count", '''
def position_parameter_count(scheme, *, d_model, num_heads, num_layers, max_positions=0, num_buckets=32, max_distance=16):
    counts = {"learned": max_positions * d_model, "sinusoidal": 0, "rope": 0, "alibi": 0,
              "t5": num_layers * num_buckets * num_heads,
              "shaw": num_layers * 2 * (2 * max_distance + 1) * (d_model // num_heads)}
    if scheme not in counts:
        raise ValueError(f"unknown scheme {scheme}")
    return counts[scheme]
''')
wrong("shaw_per_head", "ex08", "position_parameter_count", '''
def position_parameter_count(scheme, *, d_model, num_heads, num_layers, max_positions=0, num_buckets=32, max_distance=16):
    counts = {"learned": max_positions * d_model, "sinusoidal": 0, "rope": 0, "alibi": 0,
              "t5": num_buckets * num_heads,
              "shaw": num_layers * 2 * (2 * max_distance + 1) * d_model}
    if scheme not in counts:
        raise ValueError(f"unknown scheme {scheme}")
    return counts[scheme]
''')

# ex09 position ids ----------------------------------------------------------------------------------
wrong("padding_counted", "ex09", "position_ids_from_attention_mask", '''
def position_ids_from_attention_mask(attention_mask):
    mask = np.asarray(attention_mask)
    if mask.ndim != 2 or not np.isin(mask, (0, 1)).all():
        raise ValueError("attention_mask must be a 2-D 0/1 array")
    return np.broadcast_to(np.arange(mask.shape[1]), mask.shape).astype(np.int64)
''')
wrong("decode_from_padded_length", "ex09", "decode_position_ids", '''
def decode_position_ids(attention_mask, num_new_tokens):
    mask = np.asarray(attention_mask)
    if mask.ndim != 2 or not np.isin(mask, (0, 1)).all() or num_new_tokens < 0:
        raise ValueError("bad input")
    return np.broadcast_to(mask.shape[1] + np.arange(num_new_tokens), (mask.shape[0], num_new_tokens)).astype(np.int64)
''')
wrong("decode_same_id_for_every_new_token", "ex09", "decode_position_ids", _replacing(
    posenc_solutions.decode_position_ids, "return num_real[:, None] + np.arange(int(num_new_tokens), dtype=np.int64)",
    "return np.repeat(num_real[:, None], int(num_new_tokens), axis=1)"))
wrong("decode_off_by_one", "ex09", "decode_position_ids", '''
def decode_position_ids(attention_mask, num_new_tokens):
    mask = np.asarray(attention_mask)
    if mask.ndim != 2 or not np.isin(mask, (0, 1)).all() or num_new_tokens < 0:
        raise ValueError("bad input")
    return (mask.sum(axis=1)[:, None] - 1 + np.arange(num_new_tokens)).astype(np.int64)
''')
wrong("first_bad_returns_minus_one", "ex09", "first_bad_decode_step", '''
def first_bad_decode_step(prompt_len, observed_position_ids):
    for t, pid in enumerate(observed_position_ids):
        if pid != prompt_len + t:
            return t
    return -1
''')

# ex10 diagnostics ------------------------------------------------------------------------------------
wrong("entropy_in_bits", "ex10", "attention_entropy", '''
def attention_entropy(weights):
    w = np.asarray(weights, dtype=float)
    return -(w * np.log2(np.where(w > 0, w, 1.0))).sum(axis=-1).mean(axis=-1)
''')
wrong("entropy_nan_for_zeros", "ex10", "attention_entropy", '''
def attention_entropy(weights):
    w = np.asarray(weights, dtype=float)
    return -(w * np.log(w)).sum(axis=-1).mean(axis=-1)
''')
wrong("distance_summed_over_queries", "ex10", "mean_attention_distance", '''
def mean_attention_distance(weights, query_positions, key_positions):
    d = np.abs(np.asarray(query_positions)[:, None] - np.asarray(key_positions)[None, :])
    return (np.asarray(weights) * d).sum(axis=(1, 2))
''')
wrong("needle_floor", "ex10", "needle_attention_by_depth", '''
def needle_attention_by_depth(bias_fn, context_len, depths, needle_logit=5.0):
    depths = np.asarray(depths, dtype=float)
    if context_len < 1 or ((depths < 0) | (depths > 1)).any():
        raise ValueError("bad input")
    bias = np.asarray(bias_fn(np.array([context_len - 1]), np.arange(context_len)))[:, 0, :]
    out = np.zeros((bias.shape[0], len(depths)))
    for column, depth in enumerate(depths):
        needle = int(depth * (context_len - 1))
        logits = bias.copy()
        logits[:, needle] += needle_logit
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        out[:, column] = e[:, needle] / e.sum(axis=1)
    return out
''')
wrong("gap_positions_from_one", "ex10", "shift_invariance_gap", '''
def shift_invariance_gap(logit_fn, q, k, shift):
    positions = np.arange(1, len(q) + 1)
    return float(np.max(np.abs(logit_fn(q, k, positions) - logit_fn(q, k, positions + shift))))
''')


# Concept questions: plausible wrong answers, each a step of reasoning gone wrong --------------------
#: ``WRONG_CONCEPTS[label] = (exercise, {answer cell grade_id: code})``
WRONG_CONCEPTS = {
    "period_of_the_fastest_pair": ("ex01", {"ex01_slowest_period_answer": "ex01_slowest_period = 2 * math.pi"}),
    "every_new_token_has_a_row": ("ex02", {"ex02_tokens_with_a_row_answer": "ex02_tokens_with_a_row = 30"}),
    "one_row_short": ("ex02", {"ex02_tokens_with_a_row_answer": "ex02_tokens_with_a_row = 23"}),
    "a_fraction_of_a_row": ("ex02", {"ex02_tokens_with_a_row_answer": "ex02_tokens_with_a_row = 24.5"}),
    "offsets_key_minus_query": ("ex03", {"ex03_negative_offsets_answer": "ex03_negative_offsets = 18"}),
    "columns_sign_flipped": ("ex04", {"ex04_columns_answer": "ex04_columns = [0, 1, 2, 4]"}),
    "pairs_off_by_one": ("ex05", {"ex05_fast_pairs_answer": "ex05_fast_pairs = 20"}),
    "offset_magnitude_only": ("ex06", {"ex06_same_score_answer": 'ex06_same_score = "(5, 2)"'}),
    "alibi_sign_flipped": ("ex07", {"ex07_ratio_answer": "ex07_ratio = 1 / math.e"}),
    "whole_new_table": ("ex08", {"ex08_added_parameters_answer": "ex08_added_parameters = 4096 * 768"}),
    "needle_without_bias": ("ex10", {"ex10_needle_weight_answer": "ex10_needle_weight = math.e / (math.e + 2)"}),
}
