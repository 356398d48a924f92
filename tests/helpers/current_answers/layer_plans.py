"""Wrong and alternative answers for posenc-current exercise 6 (per-layer position schemes: Gemma 3's
layer types and two bases, Llama 4's chunked mask and NoPE temperature).

Each code string runs in a student's notebook, where ``np`` and ``math`` exist.
"""

# The input checks most wrong answers share, written once: a student's checks, not the reference's.
_INT_CHECK = '''
    for value in (num_layers, pattern):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError("expected an integer >= 1")'''


def _layer_types(full_when, checks=_INT_CHECK, result="types"):
    """gemma3_layer_types with the condition `full_when` (of i and pattern) for a full-attention layer."""
    return f'''
def gemma3_layer_types(num_layers, sliding_window_pattern):
    pattern = sliding_window_pattern{checks}
    types = ["full_attention" if {full_when} else "sliding_attention" for i in range(int(num_layers))]
    return {result}
'''


def _inv_freq(frequencies, layer_check='layer_type not in ("sliding_attention", "full_attention")',
              factor_check="not global_factor >= 1"):
    """gemma3_layer_inv_freq whose last line is `frequencies` (of base, factor, t, d and layer_type)."""
    return f'''
def gemma3_layer_inv_freq(layer_type, head_dim, local_base, global_base, global_factor=1.0):
    if not isinstance(layer_type, str) or {layer_check}:
        raise ValueError("unknown layer type")
    if isinstance(head_dim, bool) or not isinstance(head_dim, (int, np.integer)) or head_dim < 2 or head_dim % 2:
        raise ValueError("head_dim must be an even integer >= 2")
    for b in (local_base, global_base):
        if not isinstance(b, (int, float, np.integer, np.floating)) or not (0 < b < math.inf):
            raise ValueError("a base must be a finite number > 0")
    if not isinstance(global_factor, (int, float, np.integer, np.floating)) or {factor_check} \\
            or not math.isfinite(global_factor):
        raise ValueError("global_factor must be a finite number >= 1")
    d = int(head_dim)
    t = np.arange(d // 2)
    base = local_base if layer_type == "sliding_attention" else global_base
    factor = 1.0 if layer_type == "sliding_attention" else global_factor
    return {frequencies}
'''


def _chunked(visible, checks=True):
    """chunked_causal_mask returning `visible`, an expression of the int arrays q (Lq, 1), k (1, Lk) and c."""
    check = '''
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError("chunk_size must be an integer >= 1")
    qp, kp = np.asarray(query_positions), np.asarray(key_positions)
    for p in (qp, kp):
        if p.ndim != 1 or p.dtype.kind not in "iuf" or not np.all(np.isfinite(p)) or np.any(p % 1 != 0):
            raise ValueError("positions must be 1-D integers")''' if checks else '''
    qp, kp = np.asarray(query_positions), np.asarray(key_positions)'''
    return f'''
def chunked_causal_mask(query_positions, key_positions, chunk_size):{check}
    q, k, c = qp.astype(np.int64)[:, None], kp.astype(np.int64)[None, :], int(chunk_size)
    return {visible}
'''


def _nope(scale, checks=True, negative_check=True):
    """nope_attention_scale returning `scale`, an expression of the float array p, f and alpha."""
    negative = '''
    if np.any(p < 0):
        raise ValueError("positions must be >= 0")''' if negative_check else ""
    check = f'''
    for s in (floor_scale, attn_scale):
        if isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)) or not math.isfinite(s):
            raise ValueError("scales must be finite numbers")
    if floor_scale <= 0:
        raise ValueError("floor_scale must be > 0")
    p = np.asarray(positions)
    if p.dtype.kind not in "iuf" or not np.all(np.isfinite(p)) or np.any(p != np.floor(p)):
        raise ValueError("positions must be integers"){negative}''' if checks else '''
    p = np.asarray(positions)'''
    return f'''
def nope_attention_scale(positions, floor_scale, attn_scale):{check}
    p, f, alpha = p.astype(np.float64), float(floor_scale), float(attn_scale)
    return {scale}
'''


WRONG = {  # label: (exercise, {function_name: code})
    # --- gemma3_layer_types
    "layer_types_shifted_by_one": ("ex06", {"gemma3_layer_types": _layer_types("i % pattern == 0")}),
    "layer_types_period_pattern_plus_one": ("ex06", {"gemma3_layer_types": _layer_types(
        "(i + 1) % (pattern + 1) == 0")}),
    "layer_types_no_checks": ("ex06", {"gemma3_layer_types": _layer_types(
        "(i + 1) % pattern == 0", checks="\n    pattern = int(pattern)")}),
    "layer_types_zero_layers_allowed": ("ex06", {"gemma3_layer_types": _layer_types(
        "(i + 1) % pattern == 0", checks='''
    for value in (num_layers, pattern):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError("expected an integer")
    if pattern < 1:
        raise ValueError("the pattern must be >= 1")''')}),
    "layer_types_array": ("ex06", {"gemma3_layer_types": _layer_types("(i + 1) % pattern == 0",
                                                                       result="np.array(types)")}),
    # --- gemma3_layer_inv_freq
    "inv_freq_factor_on_every_layer": ("ex06", {"gemma3_layer_inv_freq": _inv_freq(
        "base ** (-2 * t / d) / global_factor")}),
    "inv_freq_times_factor": ("ex06", {"gemma3_layer_inv_freq": _inv_freq("base ** (-2 * t / d) * factor")}),
    "inv_freq_bases_swapped": ("ex06", {"gemma3_layer_inv_freq": _inv_freq(
        "(global_base if layer_type == 'sliding_attention' else local_base) ** (-2 * t / d) / factor")}),
    "inv_freq_t_over_d": ("ex06", {"gemma3_layer_inv_freq": _inv_freq("base ** (-t / d) / factor")}),
    "inv_freq_any_type_is_full": ("ex06", {"gemma3_layer_inv_freq": _inv_freq(
        "base ** (-2 * t / d) / factor", layer_check="False")}),
    "inv_freq_factor_below_one_allowed": ("ex06", {"gemma3_layer_inv_freq": _inv_freq(
        "base ** (-2 * t / d) / factor", factor_check="not global_factor > 0")}),
    # --- chunked_causal_mask
    "chunked_is_a_sliding_window": ("ex06", {"chunked_causal_mask": _chunked("(k <= q) & (q - k < c)")}),
    "chunked_not_causal": ("ex06", {"chunked_causal_mask": _chunked("q // c == k // c")}),
    "chunked_counted_from_one": ("ex06", {"chunked_causal_mask": _chunked(
        "(k <= q) & ((q + 1) // c == (k + 1) // c)")}),
    "chunked_keys_from_zero": ("ex06", {"chunked_causal_mask": _chunked(
        "(np.arange(k.shape[1])[None, :] <= q) & (np.arange(k.shape[1])[None, :] // c == q // c)")}),
    "chunked_offset_in_chunk": ("ex06", {"chunked_causal_mask": _chunked("(k <= q) & ((q - k) // c == 0)")}),
    "chunked_no_checks": ("ex06", {"chunked_causal_mask": _chunked("(k <= q) & (q // c == k // c)", checks=False)}),
    # --- nope_attention_scale
    "nope_p_not_p_plus_1": ("ex06", {"nope_attention_scale": _nope("np.log1p(np.floor(p / f)) * alpha + 1.0")}),
    "nope_rounds": ("ex06", {"nope_attention_scale": _nope("np.log1p(np.round((p + 1) / f)) * alpha + 1.0")}),
    "nope_no_floor": ("ex06", {"nope_attention_scale": _nope("np.log1p((p + 1) / f) * alpha + 1.0")}),
    "nope_log_not_log1p": ("ex06", {"nope_attention_scale": _nope(
        "np.log(np.maximum(np.floor((p + 1) / f), 1.0)) * alpha + 1.0")}),
    "nope_without_plus_one": ("ex06", {"nope_attention_scale": _nope("np.log1p(np.floor((p + 1) / f)) * alpha")}),
    "nope_negative_positions_allowed": ("ex06", {"nope_attention_scale": _nope(
        "np.log1p(np.floor((p + 1) / f)) * alpha + 1.0", negative_check=False)}),
    "nope_no_checks": ("ex06", {"nope_attention_scale": _nope(
        "np.log1p(np.floor((p + 1) / f)) * alpha + 1.0", checks=False)}),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer_cell_grade_id: code})
    "visible_keys_one_too_many": ("ex06", {"ex06_visible_keys_answer": "ex06_visible_keys = 1697"}),
    "visible_keys_whole_chunk": ("ex06", {"ex06_visible_keys_answer": "ex06_visible_keys = 8192"}),
    "visible_keys_whole_prompt": ("ex06", {"ex06_visible_keys_answer": "ex06_visible_keys = 100000"}),
}

ALTERNATIVES = {  # function_name: code, a differently written correct answer
    # a counter that restarts every pattern layers
    "gemma3_layer_types": '''
def gemma3_layer_types(num_layers, sliding_window_pattern):
    for value in (num_layers, sliding_window_pattern):
        if type(value) is bool or not isinstance(value, (int, np.integer)):
            raise ValueError("expected an integer")
        if value <= 0:
            raise ValueError("expected a value >= 1")
    types, count = [], 0
    for _ in range(num_layers):
        count += 1
        if count == sliding_window_pattern:
            types.append("full_attention")
            count = 0
        else:
            types.append("sliding_attention")
    return types
''',
    # one pair at a time, 1 / (base^(2t/d) * factor)
    "gemma3_layer_inv_freq": '''
def gemma3_layer_inv_freq(layer_type, head_dim, local_base, global_base, global_factor=1.0):
    settings = {"sliding_attention": (local_base, 1.0), "full_attention": (global_base, global_factor)}
    if not isinstance(layer_type, str) or layer_type not in settings:
        raise ValueError(f"unknown layer type {layer_type!r}")
    if type(head_dim) is bool or not isinstance(head_dim, (int, np.integer)) or head_dim < 2 or head_dim % 2 == 1:
        raise ValueError("head_dim must be an even integer >= 2")
    for name, value in (("local_base", local_base), ("global_base", global_base)):
        if type(value) is bool or not isinstance(value, (int, float, np.number)) or math.isnan(value) \\
                or value <= 0 or math.isinf(value):
            raise ValueError(f"{name} must be a finite number > 0")
    if type(global_factor) is bool or not isinstance(global_factor, (int, float, np.number)) \\
            or math.isnan(global_factor) or global_factor < 1 or math.isinf(global_factor):
        raise ValueError("global_factor must be a finite number >= 1")
    base, factor = settings[layer_type]
    return np.array([1.0 / (math.pow(base, 2 * t / head_dim) * factor) for t in range(head_dim // 2)])
''',
    # loops; a key is visible when it lies between the start of the query's chunk and the query
    "chunked_causal_mask": '''
def chunked_causal_mask(query_positions, key_positions, chunk_size):
    if type(chunk_size) is bool or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError("chunk_size must be an integer >= 1")
    arrays = [np.asarray(query_positions), np.asarray(key_positions)]
    for a in arrays:
        if a.ndim != 1:
            raise ValueError("positions must be 1-D")
        if a.dtype.kind not in "iuf" or not all(math.isfinite(x) and x == int(x) for x in a.tolist()):
            raise ValueError("positions must be integers")
    queries, keys = [[int(x) for x in a.tolist()] for a in arrays]
    mask = np.zeros((len(queries), len(keys)), dtype=bool)
    for i, q in enumerate(queries):
        start = q - q % chunk_size
        for j, k in enumerate(keys):
            mask[i, j] = start <= k <= q
    return mask
''',
    # np.floor_divide on the integers, then math.log1p element by element
    "nope_attention_scale": '''
def nope_attention_scale(positions, floor_scale, attn_scale):
    for value in (floor_scale, attn_scale):
        if type(value) is bool or not isinstance(value, (int, float, np.number)) or not np.isfinite(value):
            raise ValueError("floor_scale and attn_scale must be finite numbers")
    if floor_scale <= 0:
        raise ValueError("floor_scale must be > 0")
    p = np.array(positions)
    if p.dtype.kind not in "iuf" or np.isnan(p).any() or np.isinf(p).any() or (np.mod(p, 1) != 0).any():
        raise ValueError("positions must be integers")
    if (p < 0).any():
        raise ValueError("positions must be >= 0")
    steps = np.floor_divide(p.astype(np.float64) + 1, floor_scale)
    flat = [math.log1p(s) * attn_scale + 1 for s in steps.ravel().tolist()]
    return np.array(flat, dtype=np.float64).reshape(p.shape)
''',
}
