"""Wrong and alternative answers for posenc-advanced exercises 1-3 (Shaw's vectors, the scalar
limit, the skew trick): each WRONG entry is a mistake students make and must lose points in its own
exercise only; each ALTERNATIVES entry is a differently written correct answer and must pass."""

def _masks_with_a_number(masked):
    """shaw_attention, right but for its causal mask: the logits `masked` (an expression of the logits e and
    the positions i) give the future keys a large negative number, not -inf."""
    return f'''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = np.asarray(q, float), np.asarray(k, float), np.asarray(v, float)
    rel_keys, rel_values = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("shapes")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    if rel_values.ndim != 2 or rel_values.shape[0] % 2 == 0 or rel_values.shape[1] != v.shape[-1]:
        raise ValueError("rel_values")
    L, K, KV = q.shape[-2], rel_keys.shape[0] // 2, rel_values.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    av = rel_values[KV + np.clip(i[:, None] - i[None, :], -KV, KV)]
    e = (q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, a)) / np.sqrt(q.shape[-1])
    if causal:
        e = {masked}  # a large negative number, not -inf
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v + np.einsum("...ij,ijd->...id", w, av)
'''


WRONG = {  # label: (exercise, {function_name: code})
    "vectors_paper_sign": ("ex01", {"shaw_relative_vectors": '''
def shaw_relative_vectors(table, query_positions, key_positions):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] % 2 == 0:
        raise ValueError("bad table")
    qp, kp = np.asarray(query_positions), np.asarray(key_positions)
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("bad positions")
    K = table.shape[0] // 2
    offsets = kp[None, :] - qp[:, None]          # the paper's j - i, read with our table
    return table[K + np.clip(offsets, -K, K)]
'''}),
    "vectors_no_clip": ("ex01", {"shaw_relative_vectors": '''
def shaw_relative_vectors(table, query_positions, key_positions):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] % 2 == 0:
        raise ValueError("bad table")
    qp, kp = np.asarray(query_positions), np.asarray(key_positions)
    if qp.ndim != 1 or kp.ndim != 1:
        raise ValueError("bad positions")
    K = table.shape[0] // 2
    return table[K + qp[:, None] - kp[None, :]]
'''}),
    "logits_no_scale": ("ex01", {"shaw_logits": '''
def shaw_logits(q, k, rel_keys):
    q, k, rel_keys = np.asarray(q, float), np.asarray(k, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError("q and k")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    return np.einsum("...id,...jd->...ij", q, k) + np.einsum("...id,ijd->...ij", q, a)
'''}),
    "logits_position_unscaled": ("ex01", {"shaw_logits": '''
def shaw_logits(q, k, rel_keys):
    q, k, rel_keys = np.asarray(q, float), np.asarray(k, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError("q and k")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    content = np.einsum("...id,...jd->...ij", q, k) / np.sqrt(q.shape[-1])
    return content + np.einsum("...id,ijd->...ij", q, a)
'''}),
    "logits_2d_only": ("ex01", {"shaw_logits": '''
def shaw_logits(q, k, rel_keys):
    q, k, rel_keys = np.asarray(q, float), np.asarray(k, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError("q and k")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    return (q @ k.T + np.einsum("id,ijd->ij", q, a)) / np.sqrt(q.shape[-1])
'''}),
    "attention_no_value_term": ("ex01", {"shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = np.asarray(q, float), np.asarray(k, float), np.asarray(v, float)
    rel_keys, rel_values = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("shapes")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    if rel_values.ndim != 2 or rel_values.shape[0] % 2 == 0 or rel_values.shape[1] != v.shape[-1]:
        raise ValueError("rel_values")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    e = (q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, a)) / np.sqrt(q.shape[-1])
    if causal:
        e = np.where(i[:, None] >= i[None, :], e, -np.inf)
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v
'''}),
    "attention_mask_after_softmax": ("ex01", {"shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = np.asarray(q, float), np.asarray(k, float), np.asarray(v, float)
    rel_keys, rel_values = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("shapes")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    if rel_values.ndim != 2 or rel_values.shape[0] % 2 == 0 or rel_values.shape[1] != v.shape[-1]:
        raise ValueError("rel_values")
    L, K, KV = q.shape[-2], rel_keys.shape[0] // 2, rel_values.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    av = rel_values[KV + np.clip(i[:, None] - i[None, :], -KV, KV)]
    e = (q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, a)) / np.sqrt(q.shape[-1])
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    if causal:
        w = w * (i[:, None] >= i[None, :])       # masked after the softmax: rows no longer sum to 1
    return w @ v + np.einsum("...ij,ijd->...id", w, av)
'''}),
    "attention_mask_adds_minus_1e9": ("ex01", {"shaw_attention": _masks_with_a_number(
        "e + np.where(i[:, None] >= i[None, :], 0.0, -1e9)")}),
    "attention_mask_puts_minus_1e30": ("ex01", {"shaw_attention": _masks_with_a_number(
        "np.where(i[:, None] >= i[None, :], e, -1e30)")}),
    "attention_unstable_softmax": ("ex01", {"shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = np.asarray(q, float), np.asarray(k, float), np.asarray(v, float)
    rel_keys, rel_values = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("shapes")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    if rel_values.ndim != 2 or rel_values.shape[0] % 2 == 0 or rel_values.shape[1] != v.shape[-1]:
        raise ValueError("rel_values")
    L, K, KV = q.shape[-2], rel_keys.shape[0] // 2, rel_values.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    av = rel_values[KV + np.clip(i[:, None] - i[None, :], -KV, KV)]
    e = (q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, a)) / np.sqrt(q.shape[-1])
    w = np.exp(e)
    if causal:
        w = w * (i[:, None] >= i[None, :])
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v + np.einsum("...ij,ijd->...id", w, av)
'''}),
    "attention_values_read_with_K": ("ex01", {"shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = np.asarray(q, float), np.asarray(k, float), np.asarray(v, float)
    rel_keys, rel_values = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("shapes")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    if rel_values.ndim != 2 or rel_values.shape[0] % 2 == 0 or rel_values.shape[1] != v.shape[-1]:
        raise ValueError("rel_values")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    rows = K + np.clip(i[:, None] - i[None, :], -K, K)
    e = (q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, rel_keys[rows]))
    e = e / np.sqrt(q.shape[-1])
    if causal:
        e = np.where(i[:, None] >= i[None, :], e, -np.inf)
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v + np.einsum("...ij,ijd->...id", w, rel_values[np.clip(rows, 0, len(rel_values) - 1)])
'''}),
    "attention_scales_q_in_place": ("ex01", {"shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = np.asarray(q), np.asarray(k, float), np.asarray(v, float)
    rel_keys, rel_values = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("shapes")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    if rel_values.ndim != 2 or rel_values.shape[0] % 2 == 0 or rel_values.shape[1] != v.shape[-1]:
        raise ValueError("rel_values")
    q /= np.sqrt(q.shape[-1])                     # scales the caller's array
    L, K, KV = q.shape[-2], rel_keys.shape[0] // 2, rel_values.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    av = rel_values[KV + np.clip(i[:, None] - i[None, :], -KV, KV)]
    e = q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, a)
    if causal:
        e = np.where(i[:, None] >= i[None, :], e, -np.inf)
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v + np.einsum("...ij,ijd->...id", w, av)
'''}),
    "left_weights_content_only": ("ex02", {"left_weights": '''
def left_weights(queries, key, rel_keys=None, rel_bias=None):
    if (rel_keys is None) == (rel_bias is None):
        raise ValueError("exactly one table")
    queries, key = np.asarray(queries, float), np.asarray(key, float)
    if queries.ndim != 2 or key.shape != (queries.shape[1],):
        raise ValueError("shapes")
    d = queries.shape[1]
    content = queries @ key / np.sqrt(d)
    if rel_keys is not None:
        if np.shape(rel_keys) != (3, d):
            raise ValueError("rel_keys")
        left = right = content                   # the relative vectors are forgotten
    else:
        if np.shape(rel_bias) != (3,):
            raise ValueError("rel_bias")
        left, right = content + rel_bias[2], content + rel_bias[0]
    return 1.0 / (1.0 + np.exp(right - left))
'''}),
    "left_weights_rows_swapped": ("ex02", {"left_weights": '''
def left_weights(queries, key, rel_keys=None, rel_bias=None):
    if (rel_keys is None) == (rel_bias is None):
        raise ValueError("exactly one table")
    queries, key = np.asarray(queries, float), np.asarray(key, float)
    if queries.ndim != 2 or key.shape != (queries.shape[1],):
        raise ValueError("shapes")
    d = queries.shape[1]
    if rel_keys is not None:
        rel_keys = np.asarray(rel_keys, float)
        if rel_keys.shape != (3, d):
            raise ValueError("rel_keys")
        left, right = queries @ (key + rel_keys[0]) / np.sqrt(d), queries @ (key + rel_keys[2]) / np.sqrt(d)
    else:
        rel_bias = np.asarray(rel_bias, float)
        if rel_bias.shape != (3,):
            raise ValueError("rel_bias")
        left, right = queries @ key / np.sqrt(d) + rel_bias[0], queries @ key / np.sqrt(d) + rel_bias[2]
    m = np.maximum(left, right)
    return np.exp(left - m) / (np.exp(left - m) + np.exp(right - m))
'''}),
    "left_weights_no_scale": ("ex02", {"left_weights": '''
def left_weights(queries, key, rel_keys=None, rel_bias=None):
    if (rel_keys is None) == (rel_bias is None):
        raise ValueError("exactly one table")
    queries, key = np.asarray(queries, float), np.asarray(key, float)
    if queries.ndim != 2 or key.shape != (queries.shape[1],):
        raise ValueError("shapes")
    d = queries.shape[1]
    if rel_keys is not None:
        rel_keys = np.asarray(rel_keys, float)
        if rel_keys.shape != (3, d):
            raise ValueError("rel_keys")
        left, right = queries @ (key + rel_keys[2]), queries @ (key + rel_keys[0])
    else:
        rel_bias = np.asarray(rel_bias, float)
        if rel_bias.shape != (3,):
            raise ValueError("rel_bias")
        left, right = queries @ key + rel_bias[2], queries @ key + rel_bias[0]
    m = np.maximum(left, right)
    return np.exp(left - m) / (np.exp(left - m) + np.exp(right - m))
'''}),
    "left_weights_accepts_both": ("ex02", {"left_weights": '''
def left_weights(queries, key, rel_keys=None, rel_bias=None):
    queries, key = np.asarray(queries, float), np.asarray(key, float)
    if queries.ndim != 2 or key.shape != (queries.shape[1],):
        raise ValueError("shapes")
    d = queries.shape[1]
    if rel_keys is not None:                     # rel_bias silently ignored; neither -> zeros
        rel_keys = np.asarray(rel_keys, float)
        if rel_keys.shape != (3, d):
            raise ValueError("rel_keys")
        left, right = queries @ (key + rel_keys[2]) / np.sqrt(d), queries @ (key + rel_keys[0]) / np.sqrt(d)
    else:
        rel_bias = np.zeros(3) if rel_bias is None else np.asarray(rel_bias, float)
        if rel_bias.shape != (3,):
            raise ValueError("rel_bias")
        left, right = queries @ key / np.sqrt(d) + rel_bias[2], queries @ key / np.sqrt(d) + rel_bias[0]
    m = np.maximum(left, right)
    return np.exp(left - m) / (np.exp(left - m) + np.exp(right - m))
'''}),
    "direction_one_coordinate": ("ex02", {"direction_task_solution": '''
def direction_task_solution(head_dim):
    if head_dim < 1:
        raise ValueError("head_dim")
    e0 = np.zeros(head_dim)
    e0[0] = 10.0                                 # enough for small head_dim, not for 4096
    return np.stack([e0, -e0]), np.zeros(head_dim), np.stack([-e0, 0 * e0, e0])
'''}),
    "direction_too_large": ("ex02", {"direction_task_solution": '''
def direction_task_solution(head_dim):
    if head_dim < 1:
        raise ValueError("head_dim")
    u = np.ones(head_dim)
    return np.stack([100.0 * u, -100.0 * u]), u, np.stack([-u, 0 * u, u])
'''}),
    "direction_rows_swapped": ("ex02", {"direction_task_solution": '''
def direction_task_solution(head_dim):
    if head_dim < 1:
        raise ValueError("head_dim")
    u = np.ones(head_dim)
    return np.stack([2.0 * u, -2.0 * u]), u, np.stack([2.0 * u, 0 * u, -2.0 * u])
'''}),
    "naive_scaled": ("ex03", {"relative_logits_naive": '''
def relative_logits_naive(q, rel_keys):
    q, rel_keys = np.asarray(q, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("shapes")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    return np.einsum("...id,ijd->...ij", q, a) / np.sqrt(q.shape[-1])
'''}),
    "naive_paper_sign": ("ex03", {"relative_logits_naive": '''
def relative_logits_naive(q, rel_keys):
    q, rel_keys = np.asarray(q, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("shapes")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[None, :] - i[:, None], -K, K)]
    return np.einsum("...id,ijd->...ij", q, a)
'''}),
    "skew_wrong_way": ("ex03", {"skew": '''
def skew(rel_logits):
    p = np.asarray(rel_logits)
    if p.ndim < 2 or p.shape[-1] != 2 * p.shape[-2] - 1:
        raise ValueError("shape")
    *batch, L, W = p.shape
    padded = np.concatenate([np.zeros((*batch, L, 1)), p], axis=-1)   # Transformer-XL's shift
    return padded.reshape(*batch, 2 * L, L)[..., 1:, :].reshape(*batch, L, W)[..., :L]
'''}),
    "skew_off_by_one": ("ex03", {"skew": '''
def skew(rel_logits):
    p = np.asarray(rel_logits)
    if p.ndim < 2 or p.shape[-1] != 2 * p.shape[-2] - 1:
        raise ValueError("shape")
    *batch, L, W = p.shape
    flat = np.concatenate([p.reshape(*batch, L * W), np.zeros((*batch, L))], axis=-1)
    return flat.reshape(*batch, L, W + 1)[..., 1:L + 1][..., ::-1]
'''}),
    "skew_2d_only": ("ex03", {"skew": '''
def skew(rel_logits):
    p = np.asarray(rel_logits)
    if p.ndim < 2 or p.shape[-1] != 2 * p.shape[-2] - 1:
        raise ValueError("shape")
    L, W = p.shape[-2], p.shape[-1]
    flat = np.concatenate([p.ravel(), np.zeros(L)])
    return flat.reshape(L, W + 1)[:, :L][:, ::-1]
'''}),
    "skewed_no_clip": ("ex03", {"relative_logits_skewed": '''
def relative_logits_skewed(q, rel_keys):
    q, rel_keys = np.asarray(q, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("shapes")
    *batch, L, d = q.shape
    K = rel_keys.shape[0] // 2
    P = q @ rel_keys[K + np.arange(-(L - 1), L)].T
    flat = np.concatenate([P.reshape(*batch, L * (2 * L - 1)), np.zeros((*batch, L))], axis=-1)
    return flat.reshape(*batch, L, 2 * L)[..., :L][..., ::-1]
'''}),
    "skewed_descending": ("ex03", {"relative_logits_skewed": '''
def relative_logits_skewed(q, rel_keys):
    q, rel_keys = np.asarray(q, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("shapes")
    *batch, L, d = q.shape
    K = rel_keys.shape[0] // 2
    offsets = np.arange(L - 1, -L, -1)           # descending: the skew below expects ascending
    P = q @ rel_keys[K + np.clip(offsets, -K, K)].T
    flat = np.concatenate([P.reshape(*batch, L * (2 * L - 1)), np.zeros((*batch, L))], axis=-1)
    return flat.reshape(*batch, L, 2 * L)[..., :L][..., ::-1]
'''}),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer_cell_grade_id: code})
    "logit_paper_sign": ("ex01", {"ex01_logit_answer": "ex01_logit = 3.0"}),
    "logit_no_scale": ("ex01", {"ex01_logit_answer": "ex01_logit = 22.0"}),
    "gap_like_vectors": ("ex02", {"ex02_gap_answer": "ex02_gap = 1.0"}),
    "gap_from_content": ("ex02", {"ex02_gap_answer":
                                  "ex02_gap = 1 / (1 + math.exp(-3 / math.sqrt(2))) - 1 / (1 + math.exp(-1 / math.sqrt(2)))"}),
    "mib_forgot_bytes": ("ex03", {"ex03_naive_mib_answer": "ex03_naive_mib = 64"}),
    "mib_as_megabytes": ("ex03", {"ex03_naive_mib_answer": "ex03_naive_mib = 1024 * 1024 * 64 * 8 / 1e6"}),
}

ALTERNATIVES = {  # function_name: code, each written differently from the reference
    "shaw_relative_vectors": '''
def shaw_relative_vectors(table, query_positions, key_positions):
    table = np.array(table, dtype=float)
    if len(table.shape) != 2 or table.shape[0] % 2 != 1:
        raise ValueError("table must be (2K+1, d)")
    qp, kp = np.array(query_positions), np.array(key_positions)
    if len(qp.shape) != 1 or len(kp.shape) != 1:
        raise ValueError("positions must be 1-D")
    K = (table.shape[0] - 1) // 2
    out = np.empty((len(qp), len(kp), table.shape[1]))
    for i, qi in enumerate(qp):
        for j, kj in enumerate(kp):
            out[i, j] = table[K + max(-K, min(K, int(qi) - int(kj)))]
    return out
''',
    "shaw_logits": '''
def shaw_logits(q, k, rel_keys):
    q, k, rel_keys = np.asarray(q, float), np.asarray(k, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError("q and k must share a shape (..., L, d)")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 != 1 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys must be (2K+1, d)")
    L, d, K = q.shape[-2], q.shape[-1], rel_keys.shape[0] // 2
    r = np.arange(L)[:, None] - np.arange(L)[None, :]
    a = rel_keys[np.minimum(np.maximum(r, -K), K) + K]               # (L, L, d)
    keys = k[..., None, :, :] + a                                     # (..., L, L, d)
    return np.einsum("...id,...ijd->...ij", q / math.sqrt(d), keys)
''',
    "shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = np.asarray(q, float), np.asarray(k, float), np.asarray(v, float)
    rel_keys, rel_values = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.ndim != k.ndim or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("bad q, k, v shapes")
    for t, w in ((rel_keys, q.shape[-1]), (rel_values, v.shape[-1])):
        if t.ndim != 2 or t.shape[0] % 2 != 1 or t.shape[1] != w:
            raise ValueError("bad table shape")
    L = q.shape[-2]
    K, KV = rel_keys.shape[0] // 2, rel_values.shape[0] // 2
    out = np.zeros(v.shape)
    for i in range(L):
        last = i + 1 if causal else L
        js = np.arange(last)
        a = rel_keys[K + np.clip(i - js, -K, K)]                      # (n, d)
        e = (q[..., i:i + 1, :] * (k[..., :last, :] + a)).sum(-1) / math.sqrt(q.shape[-1])
        e = e - e.max(axis=-1, keepdims=True)
        w = np.exp(e) / np.exp(e).sum(axis=-1, keepdims=True)        # (..., n)
        counts = np.zeros(w.shape[:-1] + (rel_values.shape[0],))
        for n, j in enumerate(js):                                   # weight per table row
            counts[..., KV + min(max(i - j, -KV), KV)] += w[..., n]
        out[..., i, :] = np.einsum("...n,...nd->...d", w, v[..., :last, :]) + counts @ rel_values
    return out
''',
    "left_weights": '''
def left_weights(queries, key, rel_keys=None, rel_bias=None):
    given = [t for t in (rel_keys, rel_bias) if t is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of rel_keys and rel_bias")
    Q, kv = np.asarray(queries, float), np.asarray(key, float)
    if Q.ndim != 2 or kv.ndim != 1 or kv.shape[0] != Q.shape[1]:
        raise ValueError("queries (n, d) and key (d,)")
    d = Q.shape[1]
    if rel_keys is not None:
        A = np.asarray(rel_keys, float)
        if A.shape != (3, d):
            raise ValueError("rel_keys must be (3, d)")
        diff = Q @ (A[2] - A[0]) / math.sqrt(d)
    else:
        b = np.asarray(rel_bias, float)
        if b.shape != (3,):
            raise ValueError("rel_bias must be (3,)")
        diff = np.full(Q.shape[0], b[2] - b[0])
    return np.exp(-np.logaddexp(0.0, -diff))                          # sigmoid(diff), stable
''',
    "direction_task_solution": '''
def direction_task_solution(head_dim):
    if not head_dim >= 1:
        raise ValueError("head_dim must be >= 1")
    u = np.where(np.arange(head_dim) % 2 == 0, 1.0, -1.0)           # +1, -1, +1, ...
    key = np.linspace(-3.0, 3.0, head_dim)                           # any content will do
    queries = np.stack([3.0 * u, -3.0 * u])
    rel_keys = np.stack([-u, np.full(head_dim, 7.0), u])             # gap 6 sqrt(d) >= 6
    return queries, key, rel_keys
''',
    "relative_logits_naive": '''
def relative_logits_naive(q, rel_keys):
    q, rel_keys = np.asarray(q, float), np.asarray(rel_keys, float)
    if q.ndim < 2:
        raise ValueError("q must be (..., L, d)")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 != 1 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys must be (2K+1, d)")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    out = np.zeros(q.shape[:-1] + (L,))
    for i in range(L):
        for j in range(L):
            out[..., i, j] = q[..., i, :] @ rel_keys[K + min(max(i - j, -K), K)]
    return out
''',
    "skew": '''
def skew(rel_logits):
    p = np.asarray(rel_logits)
    if p.ndim < 2 or p.shape[-1] != 2 * p.shape[-2] - 1:
        raise ValueError("rel_logits must be (..., L, 2L-1)")
    L = p.shape[-2]
    rows = np.arange(L)[:, None]
    cols = rows - np.arange(L)[None, :] + L - 1                     # a gather is fine too
    return p[..., rows, cols]
''',
    "relative_logits_skewed": '''
def relative_logits_skewed(q, rel_keys):
    q, rel_keys = np.asarray(q, float), np.asarray(rel_keys, float)
    if q.ndim < 2:
        raise ValueError("q must be (..., L, d)")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 != 1 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys must be (2K+1, d)")
    *batch, L, d = q.shape
    K = rel_keys.shape[0] // 2
    R = rel_keys[np.clip(np.arange(1 - L, L), -K, K) + K]
    P = (q @ R.T)[..., ::-1]                     # columns now ascending in j - i
    # Transformer-XL's _rel_shift: a zero column on the left, read as (2L, L), drop the first row
    padded = np.concatenate([np.zeros((*batch, L, 1)), P], axis=-1)
    shifted = padded.reshape(*batch, 2 * L, L)[..., 1:, :].reshape(*batch, L, 2 * L - 1)
    return shifted[..., :L]
''',
}
