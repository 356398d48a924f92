"""Mistakes and correct answers found by a review of the hidden tests, written as a student would.

Each WRONG entry scored full marks before a hidden test was added for it. STUDENT_ALTERNATIVES is one
student who writes every function in a way of their own (loops, einsum, meshgrid, a cumsum, reuse of
their earlier functions, other error messages): it must get full marks.
"""

WRONG = {
    "attn_mask_minus_1e4": ("ex01", {
        "shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q, k, v = (np.asarray(x, float) for x in (q, k, v))
    rk, rv = np.asarray(rel_keys, float), np.asarray(rel_values, float)
    if q.ndim < 2 or q.shape != k.shape or v.ndim != k.ndim or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("shapes")
    for t, w in ((rk, q.shape[-1]), (rv, v.shape[-1])):
        if t.ndim != 2 or t.shape[0] % 2 == 0 or t.shape[1] != w:
            raise ValueError("tables")
    L = q.shape[-2]; p = np.arange(L); off = p[:, None] - p[None, :]
    K, Kv = rk.shape[0] // 2, rv.shape[0] // 2
    e = (q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, rk[np.clip(off, -K, K) + K])) / math.sqrt(q.shape[-1])
    if causal:
        e = e - 1e4 * (off < 0)
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v + np.einsum("...ij,ijd->...id", w, rv[np.clip(off, -Kv, Kv) + Kv])
''',
    }),
    "direction_works_up_to_1000": ("ex02", {
        "direction_task_solution": '''
def direction_task_solution(head_dim):
    if head_dim < 1:
        raise ValueError("head_dim")
    d = int(head_dim)
    u = np.zeros(d); u[:min(d, 3)] = 10.0
    return np.stack([u, -u]), np.zeros(d), np.stack([-u, np.zeros(d), u])
''',
    }),
    "swin_index_int32": ("ex05", {
        "swin_relative_position_index": '''
def swin_relative_position_index(window_height, window_width):
    for v in (window_height, window_width):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError("bad")
    t = np.arange(window_height * window_width, dtype=np.int32)
    h, w = t // window_width, t % window_width
    return ((h[:, None] - h[None, :] + window_height - 1) * (2 * window_width - 1) + w[:, None] - w[None, :] + window_width - 1).astype(np.int32)
''',
    }),
    "yarn_no_beta_slow_positive_check": ("ex06", {
        "yarn_inv_freq": '''
def yarn_inv_freq(head_dim, base, factor, original_max_position, beta_fast=32.0, beta_slow=1.0):
    if head_dim < 2 or head_dim % 2 or base <= 0 or factor < 1 or original_max_position < 1 or beta_fast <= beta_slow:
        raise ValueError("bad")
    c = lambda r: head_dim * math.log(original_max_position / (2 * math.pi * r)) / (2 * math.log(base))
    low = max(math.floor(c(beta_fast)), 0); high = min(math.ceil(c(beta_slow)), head_dim - 1)
    if low == high: high += 0.001
    t = np.arange(head_dim // 2); th = base ** (-2.0 * t / head_dim)
    g = np.clip((t - low) / (high - low), 0, 1)
    return g * th / factor + (1 - g) * th, (0.1 * math.log(factor) + 1 if factor > 1 else 1.0)
''',
    }),
    "rope_half_2d_and_4d_only": ("ex07", {
        "apply_rope_half_split": '''
def apply_rope_half_split(x, positions, base=10000.0):
    x = np.asarray(x, float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x")
    p = np.asarray(positions, float)
    if p.shape != (x.shape[-2],):
        raise ValueError("p")
    h = x.shape[-1] // 2
    a = np.outer(p, base ** (-np.arange(h) * 2.0 / x.shape[-1]))
    if x.ndim == 3:
        a = a[None]
    c, s = np.cos(a), np.sin(a)
    if x.ndim == 3:
        c, s = c[:, :1], s[:, :1]
    return np.concatenate([x[..., :h] * c - x[..., h:] * s, x[..., h:] * c + x[..., :h] * s], -1)
''',
    }),
    "skew_for_3d_batch_wrong": ("ex03", {
        "skew": '''
def skew(rel_logits):
    p = np.asarray(rel_logits)
    if p.ndim < 2 or p.shape[-1] != 2 * p.shape[-2] - 1:
        raise ValueError("shape")
    L = p.shape[-2]
    if p.ndim == 3:
        p = p.swapaxes(0, 0)[::-1]
    i = np.arange(L)[:, None]; j = np.arange(L)[None, :]
    return p[..., i, i - j + L - 1]
''',
    }),
    "logits_2d_and_4d_only": ("ex01", {
        "shaw_logits": '''
def shaw_logits(q, k, rel_keys):
    q, k, rel_keys = np.asarray(q, float), np.asarray(k, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError("q and k")
    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    kt = k.T if k.ndim == 2 else k.transpose(0, 1, 3, 2)
    return (q @ kt + np.einsum("...id,ijd->...ij", q, a)) / np.sqrt(q.shape[-1])
''',
    }),
    "naive_2d_and_4d_only": ("ex03", {
        "relative_logits_naive": '''
def relative_logits_naive(q, rel_keys):
    q, rel_keys = np.asarray(q, float), np.asarray(rel_keys, float)
    if q.ndim < 2 or rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:
        raise ValueError("shapes")
    L, K = q.shape[-2], rel_keys.shape[0] // 2
    i = np.arange(L)
    a = rel_keys[K + np.clip(i[:, None] - i[None, :], -K, K)]
    if q.ndim == 2:
        return np.einsum("id,ijd->ij", q, a)
    return np.einsum("bhid,ijd->bhij", q, a)
''',
    }),
    "list_llama3_inv_freq": ("ex06", {
        "llama3_inv_freq": 'def _ref_llama3_inv_freq(head_dim, base, factor, low_freq_factor, high_freq_factor,\n                    original_max_position):\n    r"""Llama 3.1\'s RoPE inverse frequencies (rope_type="llama3"): a ramp in the wavelength.\n\n    Pair ``t`` has wavelength ``lambda_t = 2 pi / theta_t`` tokens (one full turn). With the trained\n    length ``L``, pairs whose wavelength is longer than ``L / low_freq_factor`` are divided by\n    ``s``, those shorter than ``L / high_freq_factor`` are kept, and those in between are blended.\n    As in Hugging Face transformers (``modeling_rope_utils._compute_llama3_parameters``):\n\n    .. math::\n        \\theta\'_t = \\begin{cases}\n            \\theta_t / s & \\lambda_t > L / \\alpha \\\\\n            \\theta_t & \\lambda_t < L / \\beta \\\\\n            (1 - g_t)\\, \\theta_t / s + g_t\\, \\theta_t & \\text{otherwise,}\n        \\end{cases}\n        \\qquad g_t = \\frac{L / \\lambda_t - \\alpha}{\\beta - \\alpha},\n\n    with ``theta_t = b^(-2t/d)``, ``alpha = low_freq_factor`` and ``beta = high_freq_factor``. The\n    blend equals the neighbouring rule at both thresholds (``g = 0`` and ``g = 1``), so the result\n    is continuous in the wavelength.\n\n    Parameters\n    ----------\n    head_dim : int\n        Size ``d`` of one attention head: an even integer >= 2.\n    base : float\n        RoPE base ``b`` (``rope_theta``), > 0.\n    factor : float\n        Scaling factor ``s`` >= 1 (8 in Llama 3.1).\n    low_freq_factor : float\n        ``alpha`` > 0 (1 in Llama 3.1).\n    high_freq_factor : float\n        ``beta`` > ``alpha`` (4 in Llama 3.1).\n    original_max_position : int\n        Trained context length ``L`` >= 1 (8192 in Llama 3.1).\n\n    Returns\n    -------\n    ndarray, shape (head_dim // 2,)\n        ``theta\'_t`` for ``t = 0 .. d/2 - 1``, float64.\n\n    Raises\n    ------\n    ValueError\n        If `head_dim` is not an even integer >= 2, ``base <= 0``, ``factor < 1``,\n        ``low_freq_factor <= 0``, ``high_freq_factor <= low_freq_factor`` or\n        ``original_max_position < 1``.\n\n    Examples\n    --------\n    >>> print(llama3_inv_freq(4, 10000.0, 8.0, 1.0, 4.0, 1000))  # wavelengths 6.3 and 628\n    [1.         0.00297535]\n    """\n    if isinstance(head_dim, bool) or int(head_dim) != head_dim or head_dim < 2 or head_dim % 2:\n        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")\n    if not base > 0:\n        raise ValueError(f"base must be > 0, got {base!r}")\n    if not factor >= 1:\n        raise ValueError(f"factor must be >= 1, got {factor!r}")\n    if not low_freq_factor > 0:\n        raise ValueError(f"low_freq_factor must be > 0, got {low_freq_factor!r}")\n    if not high_freq_factor > low_freq_factor:\n        raise ValueError(f"high_freq_factor must be > low_freq_factor, got {high_freq_factor!r} "\n                         f"<= {low_freq_factor!r}")\n    if not original_max_position >= 1:\n        raise ValueError(f"original_max_position must be >= 1, got {original_max_position!r}")\n    inv_freq = float(base) ** (-np.arange(0, int(head_dim), 2) / head_dim)\n    wavelen = 2 * math.pi / inv_freq\n    gap = high_freq_factor - low_freq_factor\n    smooth = (original_max_position / wavelen - low_freq_factor) / gap\n    blended = (1 - smooth) * inv_freq / factor + smooth * inv_freq\n    out = np.where(wavelen < original_max_position / high_freq_factor, inv_freq, blended)\n    return np.where(wavelen > original_max_position / low_freq_factor, inv_freq / factor, out)\n\n\ndef llama3_inv_freq(head_dim, base, factor, low_freq_factor, high_freq_factor, original_max_position):\n    return _ref_llama3_inv_freq(head_dim, base, factor, low_freq_factor, high_freq_factor, original_max_position).tolist()\n',
    }),
    "list_relative_logits_skewed": ("ex03", {
        "relative_logits_skewed": 'def _ref_relative_logits_skewed(q, rel_keys):\n    r"""The position term of Shaw\'s logits in O(L d) extra memory: one matmul, then a skew.\n\n    .. math::\n        R_c = \\text{rel\\_keys}[K + \\mathrm{clip}(c - (L - 1), -K, K)], \\quad\n        P = q R^\\top, \\quad S = \\mathrm{skew}(P)\n\n    ``R`` holds the ``2L - 1`` (clipped) vectors of the offsets ``-(L-1)`` to\n    ``L-1`` in ascending order, so ``P[..., i, c] = q_i . R_c`` has shape\n    ``(..., L, 2L-1)``; `skew` moves each entry to its key. The result equals\n    `relative_logits_naive` (exactly, on integer-valued inputs). No\n    ``1/sqrt(d)`` scaling.\n\n    Parameters\n    ----------\n    q : array_like, shape (..., L, d)\n    rel_keys : array_like, shape (2K+1, d)\n        Row ``K + r`` is the vector for offset ``r = i - j``, ``K >= 0``.\n\n    Returns\n    -------\n    ndarray of float, shape (..., L, L)\n\n    Raises\n    ------\n    ValueError\n        If `q` is less than 2-D, or `rel_keys` is not 2-D, has an even number\n        of rows or a width other than ``d``.\n\n    Examples\n    --------\n    >>> q = np.array([[1.0], [10.0], [100.0]])\n    >>> print(relative_logits_skewed(q, np.array([[-1.0], [0.0], [1.0]])))\n    [[  0.  -1.  -1.]\n     [ 10.   0. -10.]\n     [100. 100.   0.]]\n    """\n    q, rel_keys = np.asarray(q, dtype=float), np.asarray(rel_keys, dtype=float)\n    if q.ndim < 2:\n        raise ValueError(f"q must have shape (..., L, d), got {q.shape}")\n    if rel_keys.ndim != 2 or rel_keys.shape[0] % 2 == 0 or rel_keys.shape[1] != q.shape[-1]:\n        raise ValueError(f"rel_keys must have shape (2K+1, d) = (odd, {q.shape[-1]}), got "\n                         f"{rel_keys.shape}")\n    *batch, length, _ = q.shape\n    max_offset = rel_keys.shape[0] // 2\n    offsets = np.arange(-(length - 1), length)                      # ascending, 2L - 1 of them\n    by_offset = q @ rel_keys[np.clip(offsets, -max_offset, max_offset) + max_offset].T\n    # the skew: pad each flattened (L, 2L-1) matrix with L zeros, read it as (L, 2L), reverse\n    width = 2 * length - 1\n    flat = by_offset.reshape(*batch, length * width)\n    padded = np.concatenate([flat, np.zeros((*batch, length))], axis=-1)\n    return padded.reshape(*batch, length, width + 1)[..., :length][..., ::-1]\n\n\ndef relative_logits_skewed(q, rel_keys):\n    return _ref_relative_logits_skewed(q, rel_keys).tolist()\n',
    }),
}

WRONG_CONCEPTS = {}

ALTERNATIVES = {}

STUDENT_ALTERNATIVES = {
    "shaw_relative_vectors": '''
def shaw_relative_vectors(table, query_positions, key_positions):
    class TableError(ValueError):
        pass
    T = np.array(table, dtype=np.float64)
    qp, kp = np.array(query_positions), np.array(key_positions)
    if T.ndim != 2 or len(T) % 2 != 1:
        raise TableError("bad table")
    if qp.ndim != 1 or kp.ndim != 1:
        raise TableError("bad positions")
    K = (len(T) - 1) // 2
    out = np.empty((len(qp), len(kp), T.shape[1]))
    for i, a in enumerate(qp):
        for j, b in enumerate(kp):
            out[i, j] = T[K + max(-K, min(K, int(a) - int(b)))]
    return out
''',
    "shaw_logits": '''
def shaw_logits(q, k, rel_keys):
    q = np.asarray(q, float); k = np.asarray(k, float); rk = np.asarray(rel_keys, float)
    if q.ndim < 2 or q.shape != k.shape:
        raise ValueError("q, k")
    if rk.ndim != 2 or rk.shape[0] % 2 == 0 or rk.shape[1] != q.shape[-1]:
        raise ValueError("rel_keys")
    L = q.shape[-2]
    A = shaw_relative_vectors(rk, np.arange(L), np.arange(L))
    return (np.einsum('...id,...jd->...ij', q, k) + np.einsum('...id,ijd->...ij', q, A)) / math.sqrt(q.shape[-1])
''',
    "shaw_attention": '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    q = np.asarray(q, float); v = np.asarray(v, float); k = np.asarray(k, float)
    rv = np.asarray(rel_values, float)
    if v.ndim != k.ndim or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("v")
    if rv.ndim != 2 or rv.shape[0] % 2 == 0 or rv.shape[1] != v.shape[-1]:
        raise ValueError("rel_values")
    e = shaw_logits(q, k, rel_keys)
    L = q.shape[-2]
    visible = np.ones((L, L), bool)
    if causal:
        visible = np.tril(visible)
    e = np.where(visible, e, -np.inf)
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    AV = shaw_relative_vectors(rv, np.arange(L), np.arange(L))
    out = np.zeros(v.shape)
    for i in range(L):
        for j in range(L):
            out[..., i, :] += w[..., i, j, None] * (v[..., j, :] + AV[i, j])
    return out
''',
    "left_weights": '''
def left_weights(queries, key, rel_keys=None, rel_bias=None):
    if (rel_keys is None) == (rel_bias is None):
        raise ValueError("exactly one")
    Q = np.asarray(queries, float); key = np.asarray(key, float)
    if Q.ndim != 2 or key.ndim != 1 or key.shape[0] != Q.shape[1]:
        raise ValueError("shapes")
    d = Q.shape[1]
    if rel_keys is not None:
        R = np.asarray(rel_keys, float)
        if R.shape != (3, d):
            raise ValueError("rel_keys")
        diff = Q @ (R[2] - R[0]) / math.sqrt(d)
    else:
        b = np.asarray(rel_bias, float)
        if b.shape != (3,):
            raise ValueError("rel_bias")
        diff = np.full(len(Q), b[2] - b[0])
    return 1.0 / (1.0 + np.exp(-diff))
''',
    "direction_task_solution": '''
def direction_task_solution(head_dim):
    if head_dim < 1:
        raise ValueError("head_dim >= 1")
    rng = np.random.default_rng()
    s = rng.choice([-1.0, 1.0], size=int(head_dim))
    queries = np.stack([3 * s, -3 * s])
    key = rng.uniform(-10, 10, size=int(head_dim))
    rel_keys = np.stack([-3 * s, rng.uniform(-10, 10, size=int(head_dim)), 3 * s])
    return queries.tolist(), key, rel_keys
''',
    "relative_logits_naive": '''
def relative_logits_naive(q, rel_keys):
    q = np.asarray(q, float); rk = np.asarray(rel_keys, float)
    if q.ndim < 2 or rk.ndim != 2 or rk.shape[0] % 2 != 1 or rk.shape[1] != q.shape[-1]:
        raise ValueError("shapes")
    L, K = q.shape[-2], rk.shape[0] // 2
    A = np.empty((L, L, rk.shape[1]))
    for i in range(L):
        for j in range(L):
            A[i, j] = rk[K + min(max(i - j, -K), K)]
    return np.einsum('...id,ijd->...ij', q, A)
''',
    "skew": '''
def skew(rel_logits):
    p = np.asarray(rel_logits)
    if p.ndim < 2:
        raise ValueError("2-D")
    L = p.shape[-2]
    if p.shape[-1] != 2 * L - 1:
        raise ValueError("2L-1")
    i = np.arange(L)[:, None]; j = np.arange(L)[None, :]
    return p[..., i, i - j + L - 1]
''',
    "relative_logits_skewed": '''
def relative_logits_skewed(q, rel_keys):
    q = np.asarray(q, float); rk = np.asarray(rel_keys, float)
    if q.ndim < 2 or rk.ndim != 2 or rk.shape[0] % 2 != 1 or rk.shape[1] != q.shape[-1]:
        raise ValueError("shapes")
    L, K = q.shape[-2], rk.shape[0] // 2
    R = np.stack([rk[K + min(max(c - (L - 1), -K), K)] for c in range(2 * L - 1)])
    return skew(np.einsum('...id,cd->...ic', q, R))
''',
    "transformer_xl_relative_encodings": '''
def transformer_xl_relative_encodings(key_length, d_model):
    import operator
    try:
        key_length, d_model = operator.index(key_length), operator.index(d_model)
    except TypeError:
        raise ValueError("sizes must be integers")
    if key_length < 1 or d_model < 2 or d_model % 2:
        raise ValueError("bad sizes")
    out = np.zeros((key_length, d_model))
    h = d_model // 2
    for m in range(key_length):
        dist = key_length - 1 - m
        for t in range(h):
            a = dist / 10000 ** (2 * t / d_model)
            out[m, t] = math.sin(a); out[m, h + t] = math.cos(a)
    return out
''',
    "rel_shift": '''
def rel_shift(x):
    x = np.asarray(x)
    if x.ndim < 2 or x.shape[-1] < x.shape[-2]:
        raise ValueError("bad")
    lq, lk = x.shape[-2:]
    i = np.arange(lq)[:, None]; j = np.arange(lk)[None, :]
    col = j + lq - 1 - i
    ok = col < lk
    out = np.take_along_axis(x.astype(float), np.broadcast_to(np.where(ok, col, 0), x.shape), axis=-1)
    return np.where(ok, out, np.nan)
''',
    "transformer_xl_scores": '''
def transformer_xl_scores(q, k, r, u, v):
    q, k, r, u, v = (np.asarray(a, float) for a in (q, k, r, u, v))
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError("q k")
    lq, d = q.shape[-2:]; lk = k.shape[-2]
    if lk < lq or r.shape != (lk, d) or u.shape != (d,) or v.shape != (d,):
        raise ValueError("shapes")
    M = lk - lq
    a = np.einsum('...id,...jd->...ij', q, k)
    c = np.einsum('d,...jd->...j', u, k)[..., None, :]
    dist = M + np.arange(lq)[:, None] - np.arange(lk)[None, :]
    rows = np.clip(lk - 1 - dist, 0, lk - 1)
    rsel = r[rows]  # (lq, lk, d)
    b = np.einsum('...id,ijd->...ij', q, rsel)
    dd = rsel @ v
    s = (a + b + c + dd) / math.sqrt(d)
    s = np.array(s, copy=True)
    s[..., dist < 0] = -np.inf
    return s
''',
    "swin_relative_position_index": '''
def swin_relative_position_index(window_height, window_width):
    import operator
    try:
        h, w = operator.index(window_height), operator.index(window_width)
    except TypeError:
        raise ValueError("not an integer")
    if h < 1 or w < 1:
        raise ValueError("below 1")
    hh, ww = np.meshgrid(np.arange(h), np.arange(w), indexing='ij')
    hh, ww = hh.ravel(), ww.ravel()
    return (hh[:, None] - hh[None, :] + h - 1) * (2 * w - 1) + (ww[:, None] - ww[None, :] + w - 1)
''',
    "swin_relative_bias": '''
def swin_relative_bias(table, window_height, window_width):
    t = np.asarray(table, float)
    if t.ndim != 2 or t.shape[0] != (2 * window_height - 1) * (2 * window_width - 1):
        raise ValueError("table")
    idx = swin_relative_position_index(window_height, window_width)
    return np.moveaxis(t[idx], -1, 0)
''',
    "linear_scaled_inv_freq": '''
def linear_scaled_inv_freq(head_dim, base, factor):
    if head_dim < 2 or head_dim % 2 or base <= 0 or factor < 1:
        raise ValueError("bad")
    return 1.0 / (base ** (np.arange(0, head_dim, 2) / head_dim)) / factor
''',
    "dynamic_ntk_inv_freq": '''
def dynamic_ntk_inv_freq(head_dim, base, factor, original_max_position, seq_len):
    if head_dim < 4 or head_dim % 2 or base <= 0 or factor < 1 or original_max_position < 1 or seq_len < 1:
        raise ValueError("bad")
    Lp = max(seq_len, original_max_position)
    scale = 1 + factor * (Lp / original_max_position - 1)
    t = np.arange(head_dim // 2)
    return base ** (-2.0 * t / head_dim) * scale ** (-2.0 * t / (head_dim - 2))
''',
    "yarn_inv_freq": '''
def yarn_inv_freq(head_dim, base, factor, original_max_position, beta_fast=32.0, beta_slow=1.0):
    if head_dim < 2 or head_dim % 2 or base <= 0 or base == 1 or factor < 1 or original_max_position < 1:
        raise ValueError("bad")
    if beta_slow <= 0 or beta_fast <= beta_slow:
        raise ValueError("betas")
    c = lambda r: head_dim / 2 * math.log(original_max_position / (2 * math.pi * r), base)
    low = max(math.floor(c(beta_fast)), 0)
    high = min(math.ceil(c(beta_slow)), head_dim - 1)
    if low == high:
        high += 0.001
    t = np.arange(head_dim // 2)
    theta = 1.0 / base ** (2 * t / head_dim)
    extrap = 1 - np.clip((t - low) / (high - low), 0, 1)
    inv = (theta / factor) * (1 - extrap) + theta * extrap
    att = float(0.1 * np.log(factor) + 1) if factor > 1 else 1
    return inv, att
''',
    "llama3_inv_freq": '''
def llama3_inv_freq(head_dim, base, factor, low_freq_factor, high_freq_factor, original_max_position):
    if head_dim < 2 or head_dim % 2 or base <= 0 or factor < 1 or low_freq_factor <= 0:
        raise ValueError("bad")
    if high_freq_factor <= low_freq_factor or original_max_position < 1:
        raise ValueError("bad")
    out = []
    for t in range(head_dim // 2):
        th = base ** (-2 * t / head_dim)
        if th < 2 * math.pi * low_freq_factor / original_max_position:
            out.append(th / factor)
        elif th > 2 * math.pi * high_freq_factor / original_max_position:
            out.append(th)
        else:
            g = (original_max_position * th / (2 * math.pi) - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append(th / factor + g * (th - th / factor))
    return np.array(out)
''',
    "apply_rope_half_split": '''
def apply_rope_half_split(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x")
    p = np.asarray(positions, dtype=float)
    if p.shape != (x.shape[-2],):
        raise ValueError("positions")
    h = x.shape[-1] // 2
    freqs = base ** (-np.arange(0, x.shape[-1], 2) / x.shape[-1])
    ang = np.concatenate([np.outer(p, freqs)] * 2, axis=-1)
    rot = np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
    return x * np.cos(ang) + rot * np.sin(ang)
''',
    "interleaved_to_half_split": '''
def interleaved_to_half_split(head_dim):
    if not isinstance(head_dim, (int, np.integer)) or head_dim < 2 or head_dim % 2:
        raise ValueError("bad")
    return np.array(list(range(0, head_dim, 2)) + list(range(1, head_dim, 2)), dtype=np.int64)
''',
    "permute_for_half_split": '''
def permute_for_half_split(weight, num_heads):
    w = np.asarray(weight)
    if w.ndim != 2 or num_heads < 1 or w.shape[0] % num_heads:
        raise ValueError("bad")
    d = w.shape[0] // num_heads
    if d % 2:
        raise ValueError("odd")
    perm = interleaved_to_half_split(d)
    return np.vstack([w[h * d:(h + 1) * d][perm] for h in range(num_heads)])
''',
    "packed_position_ids": '''
def packed_position_ids(document_lengths):
    n = np.asarray(document_lengths)
    if n.ndim != 1 or n.size == 0 or np.any(n < 1) or np.any(n % 1 != 0):
        raise ValueError("bad")
    n = n.astype(np.int64)
    steps = np.ones(n.sum(), dtype=np.int64)
    starts = np.cumsum(n)[:-1]
    steps[0] = 0
    steps[starts] = 1 - n[:-1]
    return np.cumsum(steps)
''',
    "packed_causal_mask": '''
def packed_causal_mask(document_lengths):
    ids = packed_position_ids(document_lengths)
    doc = np.cumsum(ids == 0)
    return (doc[:, None] == doc[None, :]) & np.tri(len(ids), dtype=bool)
''',
    "sliding_window_positions": '''
def sliding_window_positions(num_tokens, window):
    if window < 1 or num_tokens < 0 or window % 1 or num_tokens % 1:
        raise ValueError("bad")
    return np.arange(num_tokens, dtype=np.int64)[-window:] if num_tokens else np.arange(0, dtype=np.int64)
''',
    "attention_sink_positions": '''
def attention_sink_positions(num_tokens, cache_size, num_sinks):
    if any(x % 1 != 0 for x in (num_tokens, cache_size, num_sinks)):
        raise ValueError("not integers")
    if cache_size < 1 or num_sinks < 0 or num_sinks >= cache_size or num_tokens < 0:
        raise ValueError("bad")
    allpos = np.arange(num_tokens)
    if num_tokens <= cache_size:
        return allpos
    return np.r_[allpos[:num_sinks], allpos[num_tokens - (cache_size - num_sinks):]]
''',
}
