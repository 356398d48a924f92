"""Correct answers written as students write them, each of which must get full marks.

``STUDENT_ALTERNATIVES[label] = {function_name: code}``: the code is pasted into the answer cells
of an otherwise reference submission, as in ``wrong_solutions``. Each is right by the contract
(``docs/contract.md``) and by the notebook's "What is graded" box, but differs from the reference in a
way a strict test could wrongly punish:

- numpy scalars where Python scalars are natural, and the reverse;
- other error messages within the contract;
- HF-exact float32 arithmetic where the contract cites HF;
- reuse of the student's own earlier functions, which the notebook allows.
"""

STUDENT_ALTERNATIVES = {
    "numpy_scalars": {
        "learned_table_parameters": '''
def learned_table_parameters(max_positions, d_model):
    if max_positions < 0 or d_model < 0:
        raise ValueError("negative size")
    return np.prod([max_positions, d_model])  # an np.int64
''',
        "position_parameter_count": '''
def position_parameter_count(scheme, *, d_model, num_heads, num_layers, max_positions=0, num_buckets=32, max_distance=16):
    counts = {"learned": np.int64(max_positions) * d_model, "sinusoidal": np.int64(0), "rope": np.int64(0),
              "alibi": np.int64(0), "t5": np.int64(num_buckets) * num_heads,
              "shaw": np.int64(num_layers) * 2 * (2 * max_distance + 1) * (d_model // num_heads)}
    if scheme not in counts:
        raise ValueError(f"unknown scheme {scheme!r}")
    return counts[scheme]
''',
        "first_bad_decode_step": '''
def first_bad_decode_step(prompt_len, observed_position_ids):
    observed = np.asarray(observed_position_ids)
    bad = np.flatnonzero(observed != prompt_len + np.arange(observed.size))
    return bad[0] if bad.size else None  # an np.int64
''',
        "rope_score_2d": '''
def rope_score_2d(q, k, m, n, theta):
    def turn(v, a):
        return np.array([v[0] * np.cos(a) - v[1] * np.sin(a), v[0] * np.sin(a) + v[1] * np.cos(a)])
    return np.dot(turn(q, m * theta), turn(k, n * theta))  # an np.float64
''',
        "shift_invariance_gap": '''
def shift_invariance_gap(logit_fn, q, k, shift):
    positions = np.arange(len(q))
    return np.abs(logit_fn(q, k, positions) - logit_fn(q, k, positions + shift)).max()  # an np.float64
''',
    },
    "python_scalars": {
        "rope_score_from_offset": '''
def rope_score_from_offset(q, k, offset, theta):
    import math
    a = offset * theta
    k0, k1 = float(k[0]), float(k[1])
    return float(q[0]) * (k0 * math.cos(a) - k1 * math.sin(a)) + float(q[1]) * (k0 * math.sin(a) + k1 * math.cos(a))
''',
        "first_bad_decode_step": '''
def first_bad_decode_step(prompt_len, observed_position_ids):
    for step, position in enumerate(list(observed_position_ids)):
        if int(position) != prompt_len + step:
            return step
    return None
''',
    },
    "other_messages": {
        "add_positions": '''
def add_positions(token_embeddings, position_table, start=0):
    tokens, table = np.asarray(token_embeddings), np.asarray(position_table)
    if tokens.ndim < 2 or table.ndim != 2 or tokens.shape[-1] != table.shape[1] or start < 0:
        raise ValueError("bad shapes or start")
    length = tokens.shape[-2]
    if start + length > table.shape[0]:
        raise ValueError(f"positions {start}..{start + length - 1} do not fit in a table of length P")
    return tokens + table[start:start + length]
''',
        "alibi_slopes": '''
def alibi_slopes(num_heads):
    if num_heads < 1:
        raise ValueError("Need at least one head.")
    def power_of_two(n):
        start = 2 ** (-8 / n)
        return [start ** (i + 1) for i in range(n)]
    closest = 2 ** int(math.floor(math.log2(num_heads)))
    return np.array(power_of_two(closest) + power_of_two(2 * closest)[0::2][:num_heads - closest])
''',
    },
    "hf_float32_buckets": {
        "t5_relative_position_bucket": '''
def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # HF's T5Attention._relative_position_bucket in numpy, float32 as in torch, the log taken of
    # the large distances only (max with max_exact), so distance 0 warns nothing; the contract's checks first.
    min_buckets = 4 if bidirectional else 2
    if isinstance(num_buckets, (bool, np.bool_)) or not (num_buckets % 1 == 0 and num_buckets >= min_buckets):
        raise ValueError(f"num_buckets must be an integer >= {min_buckets}")
    if not (np.isfinite(max_distance) and max_distance > (num_buckets // 2 if bidirectional else num_buckets) // 2):
        raise ValueError("max_distance must be finite and beyond the exact buckets")
    relative_position = np.asarray(relative_position)
    relative_buckets = np.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).astype(relative_position.dtype) * num_buckets
        relative_position = np.abs(relative_position)
    else:
        relative_position = -np.minimum(relative_position, np.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = np.maximum(relative_position, max_exact).astype(np.float32)
    relative_position_if_large = max_exact + (
        np.log(large / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).astype(relative_position.dtype)
    relative_position_if_large = np.minimum(relative_position_if_large, num_buckets - 1)
    relative_buckets += np.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets
''',
    },
    # The mask as Hugging Face applies it: the dtype's most negative number, not -inf. Exact 0 for any finite logit.
    "hf_finfo_min_mask": {
        "masked_softmax": '''
def masked_softmax(logits, mask):
    logits = np.asarray(logits, dtype=float)
    mask = np.asarray(mask, dtype=bool)
    scores = logits + np.where(mask, 0.0, np.finfo(logits.dtype).min)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.where(np.broadcast_to(mask, weights.shape).any(axis=-1, keepdims=True), weights, 0.0)
''',
    },
    "reuses_earlier_functions": {
        "alibi_attention": '''
def alibi_attention(scores, slopes, query_positions, key_positions, causal=True):
    # ex03's causal_mask and this exercise's alibi_bias and masked_softmax, the student's own
    mask = causal_mask(query_positions, key_positions) if causal else True
    return masked_softmax(scores + alibi_bias(slopes, query_positions, key_positions), mask)
''',
        "mean_attention_distance": '''
def mean_attention_distance(weights, query_positions, key_positions):
    distance = np.abs(relative_position_matrix(query_positions, key_positions))  # ex03
    return (np.asarray(weights) * distance).sum(axis=-1).mean(axis=-1)
''',
        "t5_relative_bias": '''
def t5_relative_bias(bias_table, query_positions, key_positions, bidirectional=True, max_distance=128):
    if np.ndim(bias_table) != 2:
        raise ValueError("bias_table must be (H, num_buckets)")
    # ex03's relative_position_matrix is query - key; T5 wants key - query
    buckets = t5_relative_position_bucket(-relative_position_matrix(query_positions, key_positions),
                                          bidirectional, np.shape(bias_table)[1], max_distance)
    return np.asarray(bias_table)[:, buckets]
''',
        "sinusoidal_table": '''
def sinusoidal_table(num_positions, d_model, base=10000.0):
    if num_positions < 0:
        raise ValueError("num_positions must be >= 0")
    sinusoidal_row(0, d_model, base)  # its ValueErrors for d_model and base
    return np.array([sinusoidal_row(p, d_model, base) for p in range(num_positions)]).reshape(num_positions, d_model)
''',
        "needle_attention_by_depth": '''
def needle_attention_by_depth(bias_fn, context_len, depths, needle_logit=5.0):
    depths = np.asarray(depths, dtype=float)
    if context_len < 1 or np.any((depths < 0) | (depths > 1)):
        raise ValueError("context_len >= 1 and depths in [0, 1]")
    positions = np.arange(context_len)
    bias = np.asarray(bias_fn(positions, positions))[:, -1, :]  # every query, keep the last: (H, L)
    out = []
    for depth in depths:
        logits = bias.copy()
        logits[:, int(round(depth * (context_len - 1)))] += needle_logit
        weights = masked_softmax(logits, np.ones(context_len, dtype=bool))  # ex07
        out.append(weights[:, int(round(depth * (context_len - 1)))])
    return np.stack(out, axis=1)
''',
    },
}
