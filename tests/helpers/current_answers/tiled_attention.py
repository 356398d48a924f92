"""Wrong and alternative answers for posenc-current exercise 9 (tiled attention with an online softmax,
the bias computed tile by tile).

Each code string runs in a student's notebook, where ``np`` and ``math`` exist. Most wrong answers are
one right answer with one line changed (``_changed``), so that each differs from a passing answer in
its mistake alone.
"""


def _changed(code, old, new):
    """`code` with the line(s) `old` replaced by `new`; `old` must occur exactly once."""
    assert code.count(old) == 1, f"{old!r} occurs {code.count(old)} times"
    return code.replace(old, new)


# ---- online_softmax_update: a right answer, and its mistakes

_UPDATE = '''
def online_softmax_update(running_max, running_sum, accumulator, scores, values):
    m = np.asarray(running_max, dtype=float)
    l = np.asarray(running_sum, dtype=float)
    a = np.asarray(accumulator, dtype=float)
    s = np.asarray(scores, dtype=float)
    v = np.asarray(values, dtype=float)
    if m.ndim != 1 or l.ndim != 1 or a.ndim != 2 or s.ndim != 2 or v.ndim != 2:
        raise ValueError("wrong number of dimensions")
    if not (len(m) == len(l) == len(a) == len(s)):
        raise ValueError("the running state and the scores must have the same rows")
    if v.shape != (s.shape[1], a.shape[1]):
        raise ValueError("values must have shape (Tk, dv)")
    if np.isnan(s).any() or (s == np.inf).any() or np.isnan(m).any() or (m == np.inf).any():
        raise ValueError("NaN or +inf")
    new_m = np.maximum(m, s.max(axis=1, initial=-np.inf))
    ref = np.where(new_m == -np.inf, 0.0, new_m)
    p = np.exp(s - ref[:, None])
    scale = np.exp(m - ref)
    l_new = scale * l + p.sum(axis=1)
    a_new = scale[:, None] * a + p @ v
    return new_m, l_new, a_new
'''

# ---- tiled_biased_attention: a right answer, and its mistakes

_TILED = '''
def tiled_biased_attention(q, k, v, bias_fn, tile_size, causal=True):
    q, k, v = np.asarray(q, dtype=float), np.asarray(k, dtype=float), np.asarray(v, dtype=float)
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError("q, k and v must be 2-D")
    if q.shape[1] != k.shape[1] or q.shape[1] == 0:
        raise ValueError("q and k must have the same d >= 1")
    if len(k) != len(v) or len(q) > len(k):
        raise ValueError("k and v must have the same length, and Lq <= Lk")
    if isinstance(tile_size, bool) or not isinstance(tile_size, (int, np.integer)) or tile_size < 1:
        raise ValueError("tile_size must be an integer >= 1")
    Lq, Lk, T = len(q), len(k), int(tile_size)
    scale = 1 / math.sqrt(q.shape[1])
    out = np.zeros((Lq, v.shape[1]))
    for i0 in range(0, Lq, T):
        qi = q[i0:i0 + T]
        qpos = np.arange(i0, i0 + len(qi)) + (Lk - Lq)
        m, l, a = np.full(len(qi), -np.inf), np.zeros(len(qi)), np.zeros((len(qi), v.shape[1]))
        for j0 in range(0, Lk, T):
            if causal and j0 > qpos[-1]:
                break
            kpos = np.arange(j0, min(j0 + T, Lk))
            bias = np.asarray(bias_fn(qpos, kpos), dtype=float)
            if bias.shape != (len(qpos), len(kpos)):
                raise ValueError("bias_fn returned a tile of the wrong shape")
            if np.isnan(bias).any() or (bias == np.inf).any():
                raise ValueError("bias_fn returned NaN or +inf")
            s = qi @ k[j0:j0 + T].T * scale + bias
            if causal:
                s = np.where(kpos[None, :] <= qpos[:, None], s, -np.inf)
            new_m = np.maximum(m, s.max(axis=1))
            ref = np.where(new_m == -np.inf, 0.0, new_m)
            p = np.exp(s - ref[:, None])
            l = np.exp(m - ref) * l + p.sum(axis=1)
            a = np.exp(m - ref)[:, None] * a + p @ v[j0:j0 + T]
            m = new_m
        out[i0:i0 + T] = a / np.where(l > 0, l, 1.0)[:, None]
    return out
'''

WRONG = {  # label: (exercise, {function_name: code})
    # --- online_softmax_update
    "update_no_rescale": ("ex09", {"online_softmax_update": _changed(_changed(
        _UPDATE, "    l_new = scale * l + p.sum(axis=1)", "    l_new = l + p.sum(axis=1)"),
        "    a_new = scale[:, None] * a + p @ v", "    a_new = a + p @ v")}),
    "update_rescales_the_sum_only": ("ex09", {"online_softmax_update": _changed(
        _UPDATE, "    a_new = scale[:, None] * a + p @ v", "    a_new = a + p @ v")}),
    "update_no_max_subtracted": ("ex09", {"online_softmax_update": _changed(
        _UPDATE, "    ref = np.where(new_m == -np.inf, 0.0, new_m)", "    ref = np.zeros_like(new_m)")}),
    "update_nan_for_rows_that_saw_nothing": ("ex09", {"online_softmax_update": _changed(
        _UPDATE, "    ref = np.where(new_m == -np.inf, 0.0, new_m)", "    ref = new_m")}),
    "update_minus_inf_as_a_large_number": ("ex09", {"online_softmax_update": _changed(
        _UPDATE, "    new_m = np.maximum(m, s.max(axis=1, initial=-np.inf))",
        "    s = np.maximum(s, -1e30)\n    new_m = np.maximum(m, s.max(axis=1, initial=-1e30))")}),
    "update_in_place": ("ex09", {"online_softmax_update": _changed(_changed(
        _UPDATE, "    l_new = scale * l + p.sum(axis=1)", "    l *= scale\n    l += p.sum(axis=1)\n    l_new = l"),
        "    a_new = scale[:, None] * a + p @ v", "    a *= scale[:, None]\n    a += p @ v\n    a_new = a")}),
    "update_shapes_left_to_numpy": ("ex09", {"online_softmax_update": _changed(_changed(
        _UPDATE, '''    if not (len(m) == len(l) == len(a) == len(s)):
        raise ValueError("the running state and the scores must have the same rows")
''', ""), '''    if v.shape != (s.shape[1], a.shape[1]):
        raise ValueError("values must have shape (Tk, dv)")
''', "")}),
    # --- alibi_tile_bias
    "alibi_tile_sign_flipped": ("ex09", {"alibi_tile_bias": '''
def alibi_tile_bias(slope, query_positions, key_positions):
    qp, kp = np.asarray(query_positions, dtype=float), np.asarray(key_positions, dtype=float)
    if np.ndim(slope) != 0 or not isinstance(slope, (int, float, np.number)) or not np.isfinite(slope):
        raise ValueError("slope must be a finite number")
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("positions must be 1-D")
    return slope * (qp[:, None] - kp[None, :])
'''}),
    "alibi_tile_absolute_distance": ("ex09", {"alibi_tile_bias": '''
def alibi_tile_bias(slope, query_positions, key_positions):
    qp, kp = np.asarray(query_positions, dtype=float), np.asarray(key_positions, dtype=float)
    if np.ndim(slope) != 0 or not isinstance(slope, (int, float, np.number)) or not np.isfinite(slope):
        raise ValueError("slope must be a finite number")
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("positions must be 1-D")
    return -slope * np.abs(qp[:, None] - kp[None, :])
'''}),
    "alibi_tile_transposed": ("ex09", {"alibi_tile_bias": '''
def alibi_tile_bias(slope, query_positions, key_positions):
    qp, kp = np.asarray(query_positions, dtype=float), np.asarray(key_positions, dtype=float)
    if np.ndim(slope) != 0 or not isinstance(slope, (int, float, np.number)) or not np.isfinite(slope):
        raise ValueError("slope must be a finite number")
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("positions must be 1-D")
    return -slope * (qp[None, :] - kp[:, None])
'''}),
    "alibi_tile_indices_not_positions": ("ex09", {"alibi_tile_bias": '''
def alibi_tile_bias(slope, query_positions, key_positions):
    qp, kp = np.asarray(query_positions, dtype=float), np.asarray(key_positions, dtype=float)
    if np.ndim(slope) != 0 or not isinstance(slope, (int, float, np.number)) or not np.isfinite(slope):
        raise ValueError("slope must be a finite number")
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("positions must be 1-D")
    i = np.arange(len(qp)) + len(kp) - len(qp)
    return -slope * (i[:, None] - np.arange(len(kp))[None, :])
'''}),
    "alibi_tile_no_slope_check": ("ex09", {"alibi_tile_bias": '''
def alibi_tile_bias(slope, query_positions, key_positions):
    qp, kp = np.asarray(query_positions, dtype=float), np.asarray(key_positions, dtype=float)
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("positions must be 1-D")
    return -float(slope) * (qp[:, None] - kp[None, :])
'''}),
    "alibi_tile_no_ndim_check": ("ex09", {"alibi_tile_bias": '''
def alibi_tile_bias(slope, query_positions, key_positions):
    if np.ndim(slope) != 0 or not isinstance(slope, (int, float, np.number)) or not np.isfinite(slope):
        raise ValueError("slope must be a finite number")
    return -slope * np.subtract.outer(np.asarray(query_positions, float), np.asarray(key_positions, float))
'''}),
    # --- tiled_biased_attention
    "tiled_no_rescale": ("ex09", {"tiled_biased_attention": _changed(_changed(
        _TILED, "            l = np.exp(m - ref) * l + p.sum(axis=1)", "            l = l + p.sum(axis=1)"),
        "            a = np.exp(m - ref)[:, None] * a + p @ v[j0:j0 + T]", "            a = a + p @ v[j0:j0 + T]")}),
    "tiled_rescales_the_sum_only": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "            a = np.exp(m - ref)[:, None] * a + p @ v[j0:j0 + T]",
        "            a = a + p @ v[j0:j0 + T]")}),
    # plain sums of exp(s): right until exp overflows
    "tiled_no_max_subtracted": ("ex09", {"tiled_biased_attention": _changed(_changed(_changed(
        _TILED, "            ref = np.where(new_m == -np.inf, 0.0, new_m)", "            ref = np.zeros_like(new_m)"),
        "            l = np.exp(m - ref) * l + p.sum(axis=1)", "            l = l + p.sum(axis=1)"),
        "            a = np.exp(m - ref)[:, None] * a + p @ v[j0:j0 + T]", "            a = a + p @ v[j0:j0 + T]")}),
    "tiled_nan_when_a_tile_hides_a_whole_row": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "            ref = np.where(new_m == -np.inf, 0.0, new_m)", "            ref = new_m")}),
    "tiled_divides_by_a_zero_sum": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "        out[i0:i0 + T] = a / np.where(l > 0, l, 1.0)[:, None]",
        "        out[i0:i0 + T] = a / l[:, None]")}),
    "tiled_no_sqrt_d": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "    scale = 1 / math.sqrt(q.shape[1])", "    scale = 1.0")}),
    "tiled_queries_from_position_0": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "        qpos = np.arange(i0, i0 + len(qi)) + (Lk - Lq)",
        "        qpos = np.arange(i0, i0 + len(qi))")}),
    "tiled_mask_adds_minus_1e9": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "                s = np.where(kpos[None, :] <= qpos[:, None], s, -np.inf)",
        "                s = s + np.where(kpos[None, :] <= qpos[:, None], 0.0, -1e9)")}),
    "tiled_bias_of_whole_rows": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "            bias = np.asarray(bias_fn(qpos, kpos), dtype=float)",
        "            bias = np.asarray(bias_fn(qpos, np.arange(Lk)), dtype=float)[:, j0:j0 + T]")}),
    "tiled_bias_materialised_once": ("ex09", {"tiled_biased_attention": _changed(_changed(
        _TILED, "    out = np.zeros((Lq, v.shape[1]))",
        "    out = np.zeros((Lq, v.shape[1]))\n"
        "    whole = np.asarray(bias_fn(np.arange(Lk - Lq, Lk), np.arange(Lk)), dtype=float)"),
        "            bias = np.asarray(bias_fn(qpos, kpos), dtype=float)",
        "            bias = whole[i0:i0 + T, j0:j0 + T]")}),
    "tiled_future_tiles_not_skipped": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, '''            if causal and j0 > qpos[-1]:
                break
''', "")}),
    "tiled_skips_the_tile_at_the_last_query": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "            if causal and j0 > qpos[-1]:", "            if causal and j0 >= qpos[-1]:")}),
    "tiled_skips_by_the_first_query": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, "            if causal and j0 > qpos[-1]:", "            if causal and j0 > qpos[0]:")}),
    "tiled_scales_q_in_place": ("ex09", {"tiled_biased_attention": _changed(_changed(
        _TILED, "    scale = 1 / math.sqrt(q.shape[1])", "    q /= math.sqrt(q.shape[1])\n    scale = 1.0"),
        "    q, k, v = np.asarray(q, dtype=float), np.asarray(k, dtype=float), np.asarray(v, dtype=float)",
        "    q, k, v = np.asarray(q), np.asarray(k, dtype=float), np.asarray(v, dtype=float)")}),
    "tiled_bias_shape_left_to_numpy": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, '''            if bias.shape != (len(qpos), len(kpos)):
                raise ValueError("bias_fn returned a tile of the wrong shape")
''', "")}),
    "tiled_lengths_unchecked": ("ex09", {"tiled_biased_attention": _changed(
        _TILED, '''    if len(k) != len(v) or len(q) > len(k):
        raise ValueError("k and v must have the same length, and Lq <= Lk")
''', "")}),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer_cell_grade_id: code})
    "bias_calls_queries_from_0": ("ex09", {"ex09_bias_calls_answer": "ex09_bias_calls = 3"}),
    "bias_calls_every_tile": ("ex09", {"ex09_bias_calls_answer": "ex09_bias_calls = 16"}),
    "bias_calls_whole_prompt": ("ex09", {"ex09_bias_calls_answer": "ex09_bias_calls = 36"}),
}

ALTERNATIVES = {  # function_name: code, a differently written correct answer
    # row by row with math.exp, the state kept against the row's own maximum
    "online_softmax_update": '''
def online_softmax_update(running_max, running_sum, accumulator, scores, values):
    arrays = [np.array(x, dtype=np.float64) for x in (running_max, running_sum, accumulator, scores, values)]
    m, l, a, s, v = arrays
    if [x.ndim for x in arrays] != [1, 1, 2, 2, 2]:
        raise ValueError("expected 1-D running_max and running_sum, 2-D accumulator, scores and values")
    rows = len(m)
    if l.shape != (rows,) or a.shape[0] != rows or s.shape[0] != rows or v.shape != (s.shape[1], a.shape[1]):
        raise ValueError("shapes do not agree")
    if np.isnan(s).any() or np.isnan(m).any() or np.isposinf(s).any() or np.isposinf(m).any():
        raise ValueError("NaN or +inf")
    for i in range(rows):
        row_max = max([m[i]] + [x for x in s[i].tolist()])
        if row_max == -math.inf:
            continue  # nothing visible yet: the state stays (-inf, 0, 0)
        old = math.exp(m[i] - row_max)
        weights = np.array([math.exp(x - row_max) for x in s[i].tolist()])
        l[i] = old * l[i] + weights.sum()
        a[i] = old * a[i] + weights @ v
        m[i] = row_max
    return m, l, a
''',
    # k - q, times the slope
    "alibi_tile_bias": '''
def alibi_tile_bias(slope, query_positions, key_positions):
    if isinstance(slope, (bool, np.bool_)) or not isinstance(slope, (int, float, np.integer, np.floating)):
        raise ValueError("slope must be a number")
    if not math.isfinite(slope):
        raise ValueError("slope must be finite")
    qp, kp = np.asarray(query_positions), np.asarray(key_positions)
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("positions must be 1-D")
    return slope * (kp.astype(float)[None, :] - qp.astype(float)[:, None])
''',
    # the key tiles of each query tile folded with the student's own online_softmax_update; the future
    # tiles cut off by the range of key tiles, not by a break
    "tiled_biased_attention": '''
def tiled_biased_attention(q, k, v, bias_fn, tile_size, causal=True):
    q, k, v = (np.array(x, dtype=float) for x in (q, k, v))
    if min(q.ndim, k.ndim, v.ndim) != 2 or max(q.ndim, k.ndim, v.ndim) != 2:
        raise ValueError("q, k and v must be 2-D")
    (lq, d), (lk, dk), lv = q.shape, k.shape, v.shape[0]
    if d != dk or d < 1 or lv != lk or lq > lk:
        raise ValueError("bad shapes")
    if type(tile_size) is bool or not isinstance(tile_size, (int, np.integer)) or tile_size <= 0:
        raise ValueError("tile_size must be a positive integer")
    t = int(tile_size)
    out = np.empty((lq, v.shape[1]))
    for start in range(0, lq, t):
        positions = np.arange(lk - lq + start, lk - lq + min(start + t, lq))
        last_key = positions[-1] + 1 if causal else lk
        n_tiles = -(-last_key // t)
        state = (np.full(len(positions), -np.inf), np.zeros(len(positions)), np.zeros((len(positions), v.shape[1])))
        for tile in range(n_tiles):
            keys = np.arange(tile * t, min(tile * t + t, lk))
            bias = np.asarray(bias_fn(positions, keys), dtype=float)
            if bias.shape != (len(positions), len(keys)) or not np.all(bias < np.inf):
                raise ValueError("bias_fn must return a (Tq, Tk) tile without NaN or +inf")
            scores = (q[positions - (lk - lq)] @ k[keys].T) / np.sqrt(d) + bias
            if causal:
                scores[keys[None, :] > positions[:, None]] = -np.inf
            state = online_softmax_update(*state, scores, v[keys])
        _, total, acc = state
        out[start:start + len(positions)] = np.divide(acc, total[:, None], out=np.zeros_like(acc),
                                                      where=total[:, None] > 0)
    return out
''',
}
