"""Wrong and alternative answers for posenc-advanced exercises 7 (RoPE checkpoint layouts) and 8
(position ids in serving).

Each code string runs in a student's notebook, where ``np`` and ``math`` exist.
"""

WRONG = {  # label: (exercise, {function_name: code})
    "half_split_pairs_interleaved": ("ex07", {"apply_rope_half_split": '''
def apply_rope_half_split(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with an even d")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    d = x.shape[-1]
    angles = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out
'''}),
    "half_split_sin_sign": ("ex07", {"apply_rope_half_split": '''
def apply_rope_half_split(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with an even d")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    h = x.shape[-1] // 2
    angles = positions[:, None] * base ** (-2 * np.arange(h) / x.shape[-1])
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * np.cos(angles) + b * np.sin(angles),
                           b * np.cos(angles) - a * np.sin(angles)], axis=-1)
'''}),
    "half_split_theta_t_over_d": ("ex07", {"apply_rope_half_split": '''
def apply_rope_half_split(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with an even d")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    h = x.shape[-1] // 2
    angles = positions[:, None] * base ** (-np.arange(h) / x.shape[-1])
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles),
                           b * np.cos(angles) + a * np.sin(angles)], axis=-1)
'''}),
    "half_split_no_ndim_check": ("ex07", {"apply_rope_half_split": '''
def apply_rope_half_split(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.shape[-1] % 2:
        raise ValueError("d must be even")
    positions = np.asarray(positions, dtype=float)
    if x.ndim >= 2 and len(positions) != x.shape[-2]:
        raise ValueError("positions must have shape (L,)")
    h = x.shape[-1] // 2
    angles = positions[:, None] * base ** (-2 * np.arange(h) / x.shape[-1])
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles),
                           b * np.cos(angles) + a * np.sin(angles)], axis=-1)
'''}),
    "inverse_permutation": ("ex07", {"interleaved_to_half_split": '''
def interleaved_to_half_split(head_dim):
    if head_dim < 2 or head_dim % 2:
        raise ValueError("head_dim must be even and >= 2")
    half = head_dim // 2
    return np.array([t // 2 + half * (t % 2) for t in range(head_dim)], dtype=np.int64)
'''}),
    "permutation_no_odd_check": ("ex07", {"interleaved_to_half_split": '''
def interleaved_to_half_split(head_dim):
    if head_dim < 2:
        raise ValueError("head_dim must be >= 2")
    return np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)]).astype(np.int64)
'''}),
    "permute_whole_weight": ("ex07", {"permute_for_half_split": '''
def permute_for_half_split(weight, num_heads):
    weight = np.asarray(weight)
    if weight.ndim != 2 or num_heads < 1 or weight.shape[0] % num_heads:
        raise ValueError("bad weight or num_heads")
    if (weight.shape[0] // num_heads) % 2:
        raise ValueError("odd head_dim")
    rows = weight.shape[0]
    return weight[np.concatenate([np.arange(0, rows, 2), np.arange(1, rows, 2)])]
'''}),
    "permute_inverse_per_head": ("ex07", {"permute_for_half_split": '''
def permute_for_half_split(weight, num_heads):
    weight = np.asarray(weight)
    if weight.ndim != 2 or num_heads < 1 or weight.shape[0] % num_heads:
        raise ValueError("bad weight or num_heads")
    d = weight.shape[0] // num_heads
    if d % 2:
        raise ValueError("odd head_dim")
    heads = weight.reshape(num_heads, 2, d // 2, weight.shape[1])
    return heads.transpose(0, 2, 1, 3).reshape(weight.shape)
'''}),
    "permute_columns": ("ex07", {"permute_for_half_split": '''
def permute_for_half_split(weight, num_heads):
    weight = np.asarray(weight)
    if weight.ndim != 2 or num_heads < 1 or weight.shape[0] % num_heads:
        raise ValueError("bad weight or num_heads")
    d = weight.shape[0] // num_heads
    if d % 2:
        raise ValueError("odd head_dim")
    cols = weight.shape[1]
    perm = np.concatenate([np.arange(0, cols, 2), np.arange(1, cols, 2)])
    return weight[:, perm]
'''}),
    "permute_in_place": ("ex07", {"permute_for_half_split": '''
def permute_for_half_split(weight, num_heads):
    if weight.ndim != 2 or num_heads < 1 or weight.shape[0] % num_heads:
        raise ValueError("bad weight or num_heads")
    d = weight.shape[0] // num_heads
    if d % 2:
        raise ValueError("odd head_dim")
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    for h in range(num_heads):
        weight[h * d:(h + 1) * d] = weight[h * d + perm]
    return weight
'''}),
    "packed_ids_not_reset": ("ex08", {"packed_position_ids": '''
def packed_position_ids(document_lengths):
    lengths = np.asarray(document_lengths)
    if lengths.ndim != 1 or len(lengths) == 0 or np.any(lengths < 1):
        raise ValueError("bad document lengths")
    return np.arange(int(lengths.sum()), dtype=np.int64)
'''}),
    "packed_ids_no_length_check": ("ex08", {"packed_position_ids": '''
def packed_position_ids(document_lengths):
    ids = []
    for n in np.ravel(document_lengths):
        ids += list(range(int(n)))
    return np.array(ids, dtype=np.int64)
'''}),
    "packed_mask_plain_causal": ("ex08", {"packed_causal_mask": '''
def packed_causal_mask(document_lengths):
    lengths = np.asarray(document_lengths)
    if lengths.ndim != 1 or len(lengths) == 0 or np.any(lengths < 1):
        raise ValueError("bad document lengths")
    n = int(lengths.sum())
    return np.tril(np.ones((n, n), dtype=bool))
'''}),
    "packed_mask_not_causal": ("ex08", {"packed_causal_mask": '''
def packed_causal_mask(document_lengths):
    lengths = np.asarray(document_lengths)
    if lengths.ndim != 1 or len(lengths) == 0 or np.any(lengths < 1):
        raise ValueError("bad document lengths")
    doc = np.repeat(np.arange(len(lengths)), lengths)
    return doc[:, None] == doc[None, :]
'''}),
    "window_off_by_one": ("ex08", {"sliding_window_positions": '''
def sliding_window_positions(num_tokens, window):
    if window < 1 or num_tokens < 0:
        raise ValueError("window must be >= 1 and num_tokens >= 0")
    return np.arange(max(num_tokens - window - 1, 0), num_tokens, dtype=np.int64)
'''}),
    "window_no_checks": ("ex08", {"sliding_window_positions": '''
def sliding_window_positions(num_tokens, window):
    return np.arange(max(num_tokens - window, 0), num_tokens, dtype=np.int64)
'''}),
    "sinks_counted_twice": ("ex08", {"attention_sink_positions": '''
def attention_sink_positions(num_tokens, cache_size, num_sinks):
    if cache_size < 1 or num_sinks < 0 or num_sinks >= cache_size or num_tokens < 0:
        raise ValueError("bad cache")
    if num_tokens <= cache_size:
        return np.arange(num_tokens, dtype=np.int64)
    return np.concatenate([np.arange(num_sinks),
                           np.arange(num_tokens - cache_size, num_tokens)]).astype(np.int64)
'''}),
    "sinks_dropped": ("ex08", {"attention_sink_positions": '''
def attention_sink_positions(num_tokens, cache_size, num_sinks):
    if cache_size < 1 or num_sinks < 0 or num_sinks >= cache_size or num_tokens < 0:
        raise ValueError("bad cache")
    return np.arange(max(num_tokens - cache_size, 0), num_tokens, dtype=np.int64)
'''}),
    "sinks_short_stream": ("ex08", {"attention_sink_positions": '''
def attention_sink_positions(num_tokens, cache_size, num_sinks):
    if cache_size < 1 or num_sinks < 0 or num_sinks >= cache_size or num_tokens < 0:
        raise ValueError("bad cache")
    recent = cache_size - num_sinks
    return np.concatenate([np.arange(min(num_sinks, num_tokens)),
                           np.arange(max(num_tokens - recent, 0), num_tokens)]).astype(np.int64)
'''}),
    "sinks_no_size_check": ("ex08", {"attention_sink_positions": '''
def attention_sink_positions(num_tokens, cache_size, num_sinks):
    if cache_size < 1 or num_sinks < 0 or num_tokens < 0:
        raise ValueError("bad cache")
    if num_tokens <= cache_size:
        return np.arange(num_tokens, dtype=np.int64)
    recent = cache_size - num_sinks
    return np.concatenate([np.arange(num_sinks),
                           np.arange(num_tokens - recent, num_tokens)]).astype(np.int64)
'''}),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer_cell_grade_id: code})
    "permute_values_too": ("ex07", {"ex07_permuted_answer": 'ex07_permuted = "W_q, W_k and W_v"'}),
    "permute_queries_only": ("ex07", {"ex07_permuted_answer": 'ex07_permuted = "W_q only"'}),
    "original_position": ("ex08", {"ex08_next_position_answer": "ex08_next_position = 10000"}),
    "last_slot": ("ex08", {"ex08_next_position_answer": "ex08_next_position = 7"}),
}

ALTERNATIVES = {  # function_name: code, a differently written correct answer
    # complex numbers: (a + ib) e^{i angle} rotates the pair (a, b) counter-clockwise
    "apply_rope_half_split": '''
def apply_rope_half_split(x, positions, base=10000.0):
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError("x needs at least 2 dimensions (..., L, d)")
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError("d must be even")
    p = np.asarray(positions, dtype=float)
    if p.ndim != 1 or len(p) != x.shape[-2]:
        raise ValueError("positions must have shape (L,)")
    h = d // 2
    freqs = np.exp(-math.log(base) * np.arange(0, d, 2) / d)
    z = (x[..., :h] + 1j * x[..., h:]) * np.exp(1j * np.outer(p, freqs))
    return np.concatenate([z.real, z.imag], axis=-1)
''',
    # Hugging Face's own recipe: view the head as (d/2, 2) and transpose
    "interleaved_to_half_split": '''
def interleaved_to_half_split(head_dim):
    if head_dim != int(head_dim) or head_dim < 2 or head_dim % 2 != 0:
        raise ValueError("head_dim must be an even integer >= 2")
    head_dim = int(head_dim)
    return np.arange(head_dim, dtype=np.int64).reshape(head_dim // 2, 2).T.reshape(-1)
''',
    # loops over heads and pairs
    "permute_for_half_split": '''
def permute_for_half_split(weight, num_heads):
    w = np.asarray(weight)
    if w.ndim != 2:
        raise ValueError("weight must be 2-D")
    if num_heads < 1 or w.shape[0] % num_heads != 0:
        raise ValueError("the rows must split into num_heads >= 1 heads")
    d = w.shape[0] // num_heads
    if d % 2 != 0:
        raise ValueError("the head dimension must be even")
    out = np.zeros_like(w)
    for h in range(num_heads):
        for t in range(d // 2):
            out[h * d + t] = w[h * d + 2 * t]
            out[h * d + d // 2 + t] = w[h * d + 2 * t + 1]
    return out
''',
    # a cumulative count that drops back at each document start
    "packed_position_ids": '''
def packed_position_ids(document_lengths):
    given = list(np.asarray(document_lengths).reshape(-1))
    lengths = [int(n) for n in given]
    if np.ndim(document_lengths) != 1 or not lengths or min(lengths) < 1 or lengths != given:
        raise ValueError("document_lengths must be a non-empty 1-D list of lengths >= 1")
    ids = []
    for n in lengths:
        ids.extend(range(n))
    return np.array(ids, dtype=np.int64)
''',
    # loops over query and key
    "packed_causal_mask": '''
def packed_causal_mask(document_lengths):
    lengths = np.asarray(document_lengths)
    if lengths.ndim != 1 or lengths.size == 0 or (lengths < 1).any() or (lengths != np.trunc(lengths)).any():
        raise ValueError("document_lengths must be a non-empty 1-D list of whole lengths >= 1")
    starts = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    mask = np.zeros((total, total), dtype=bool)
    for start, n in zip(starts, lengths):
        for i in range(int(n)):
            for j in range(i + 1):
                mask[start + i, start + j] = True
    return mask
''',
    # simulate Mistral's rolling buffer: slot i % window holds position i
    "sliding_window_positions": '''
def sliding_window_positions(num_tokens, window):
    if window < 1 or num_tokens < 0:
        raise ValueError("window must be >= 1 and num_tokens >= 0")
    if int(window) != window or int(num_tokens) != num_tokens:
        raise ValueError("window and num_tokens must be whole numbers")
    slots = {}
    for i in range(int(num_tokens)):
        slots[i % int(window)] = i
    return np.array(sorted(slots.values()), dtype=np.int64)
''',
    # lists: the sinks, then the tail of everything after them
    "attention_sink_positions": '''
def attention_sink_positions(num_tokens, cache_size, num_sinks):
    if cache_size < 1 or num_sinks < 0 or num_tokens < 0 or num_sinks >= cache_size:
        raise ValueError("need cache_size >= 1, 0 <= num_sinks < cache_size, num_tokens >= 0")
    if int(cache_size) != cache_size or int(num_sinks) != num_sinks or int(num_tokens) != num_tokens:
        raise ValueError("the sizes must be whole numbers")
    sinks = list(range(min(int(num_sinks), int(num_tokens))))
    recent_size = int(cache_size) - int(num_sinks)
    recent = [i for i in range(len(sinks), int(num_tokens))][-recent_size:]
    return np.array(sinks + recent, dtype=np.int64)
''',
}
