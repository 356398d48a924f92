"""Correct answers written differently from the reference: loops, complex numbers, einsum.

Each function is written straight from the contract (``docs/contract.md``, the docstrings), independently of
``posenc_solutions``. The package is checked against them on random inputs, and
the grading tests graft them into a submission to prove that any correct answer
earns full marks. Each function stands alone and uses only numpy and math.
"""

import math

import numpy as np


def sinusoidal_row(position, d_model, base=10000.0):
    if d_model != int(d_model) or d_model < 2 or d_model % 2 != 0 or base <= 0:
        raise ValueError("d_model must be an even integer >= 2 and base > 0")
    row = []
    for i in range(int(d_model) // 2):
        angle = position / base ** (2 * i / d_model)
        row += [math.sin(angle), math.cos(angle)]
    return np.array(row)


def sinusoidal_table(num_positions, d_model, base=10000.0):
    if num_positions < 0:
        raise ValueError("num_positions must be >= 0")
    half = np.arange(d_model // 2) if d_model == int(d_model) and d_model >= 2 and d_model % 2 == 0 else None
    if half is None or base <= 0:
        raise ValueError("d_model must be an even integer >= 2 and base > 0")
    phase = np.exp(1j * np.outer(np.arange(num_positions), np.exp(-np.log(base) * 2 * half / d_model)))
    return np.stack([phase.imag, phase.real], axis=-1).reshape(num_positions, int(d_model))


def add_positions(token_embeddings, position_table, start=0):
    x = np.array(token_embeddings, dtype=float)
    table = np.array(position_table, dtype=float)
    if x.ndim < 2:
        raise ValueError("token_embeddings needs at least 2 dimensions (L, d)")
    if table.ndim != 2:
        raise ValueError("position_table must be 2-D")
    if table.shape[1] != x.shape[-1]:
        raise ValueError("token and position widths differ")
    if start < 0:
        raise ValueError("start must be non-negative")
    seq_len, num_positions = x.shape[-2], table.shape[0]
    if start + seq_len > num_positions:
        raise ValueError(f"need positions up to {start + seq_len - 1} but P = {num_positions}")
    for pos in range(seq_len):
        x[..., pos, :] += table[start + pos]
    return x


def relative_position_matrix(query_positions, key_positions):
    q = np.asarray(query_positions)
    k = np.asarray(key_positions)
    if q.ndim != 1 or k.ndim != 1:
        raise ValueError("positions must be 1-D")
    out = np.zeros((len(q), len(k)), dtype=np.int64)
    for i in range(len(q)):
        for j in range(len(k)):
            out[i, j] = q[i] - k[j]
    return out


def causal_mask(query_positions, key_positions):
    q = np.asarray(query_positions)
    k = np.asarray(key_positions)
    if q.ndim != 1 or k.ndim != 1:
        raise ValueError("positions must be 1-D")
    return np.array([[kj <= qi for kj in k] for qi in q], dtype=bool).reshape(len(q), len(k))


def clipped_relative_bias(bias_table, query_positions, key_positions):
    table = np.asarray(bias_table, dtype=float)
    if table.ndim != 2 or table.shape[1] % 2 != 1:
        raise ValueError("bias_table must be (H, 2K+1)")
    K = (table.shape[1] - 1) // 2
    q = np.asarray(query_positions)
    k = np.asarray(key_positions)
    out = np.zeros((table.shape[0], len(q), len(k)))
    for i in range(len(q)):
        for j in range(len(k)):
            r = min(max(int(q[i] - k[j]), -K), K)
            out[:, i, j] = table[:, K + r]
    return out


def _t5_bucket_scalar(rel, bidirectional, num_buckets, max_distance):
    bucket = 0
    if bidirectional:
        num_buckets //= 2
        if rel > 0:
            bucket += num_buckets
        n = abs(rel)
    else:
        n = max(-rel, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return bucket + n
    large = max_exact + int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    return bucket + min(large, num_buckets - 1)


def t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if isinstance(num_buckets, bool) or not float(num_buckets).is_integer() or num_buckets < (4 if bidirectional else 2):
        raise ValueError("too few buckets, or not a whole number of them")
    exact = (int(num_buckets) // 2 if bidirectional else int(num_buckets)) // 2
    if isinstance(max_distance, bool) or not math.isfinite(max_distance) or max_distance <= exact:
        raise ValueError("max_distance must lie past the exact buckets")
    rel = np.asarray(relative_position)
    flat = [_t5_bucket_scalar(int(r), bidirectional, num_buckets, max_distance) for r in rel.ravel()]
    return np.array(flat, dtype=np.int64).reshape(rel.shape)


def t5_relative_bias(bias_table, query_positions, key_positions, bidirectional=True, max_distance=128):
    table = np.asarray(bias_table, dtype=float)
    if table.ndim != 2:
        raise ValueError("bias_table must be 2-D")
    q = np.asarray(query_positions)
    k = np.asarray(key_positions)
    out = np.zeros((table.shape[0], len(q), len(k)))
    for i in range(len(q)):
        for j in range(len(k)):
            b = _t5_bucket_scalar(int(k[j] - q[i]), bidirectional, table.shape[1], max_distance)
            out[:, i, j] = table[:, b]
    return out


def rope_frequencies(head_dim, base=10000.0):
    if head_dim != int(head_dim) or head_dim < 2 or head_dim % 2:
        raise ValueError("head_dim must be an even integer >= 2")
    return np.exp(-math.log(base) * np.arange(head_dim // 2) * 2.0 / head_dim)


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    positions = np.asarray(positions, dtype=float)
    if x.shape[-1] % 2:
        raise ValueError("head_dim must be even")
    if positions.ndim != 1 or len(positions) != x.shape[-2]:
        raise ValueError("need one position per row of x")
    theta = rope_frequencies(x.shape[-1], base)
    z = x[..., 0::2] + 1j * x[..., 1::2]
    z = z * np.exp(1j * np.einsum("l,t->lt", positions, theta))
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)


def pair_norms(x):
    x = np.asarray(x, dtype=float)
    if x.shape[-1] % 2:
        raise ValueError("last axis must be even")
    pairs = x.reshape(x.shape[:-1] + (x.shape[-1] // 2, 2))
    return np.sqrt(np.einsum("...p,...p->...", pairs, pairs))


def rotation_2d(angle):
    z = complex(math.cos(angle), math.sin(angle))
    return np.array([[z.real, -z.imag], [z.imag, z.real]])


def rope_score_2d(q, k, m, n, theta):
    zq = complex(q[0], q[1]) * complex(math.cos(m * theta), math.sin(m * theta))
    zk = complex(k[0], k[1]) * complex(math.cos(n * theta), math.sin(n * theta))
    return float((zq * zk.conjugate()).real)


def rope_score_from_offset(q, k, offset, theta):
    zk = complex(k[0], k[1]) * complex(math.cos(offset * theta), math.sin(offset * theta))
    return float((complex(q[0], q[1]) * zk.conjugate()).real)


def alibi_slopes(num_heads):
    if num_heads < 1:
        raise ValueError("num_heads must be >= 1")

    def power_of_two(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    def slopes(n):
        if math.log2(n).is_integer():
            return power_of_two(n)
        closest = 2 ** math.floor(math.log2(n))
        return power_of_two(closest) + slopes(2 * closest)[0::2][: n - closest]

    return np.array(slopes(num_heads))


def alibi_bias(slopes, query_positions, key_positions):
    slopes = np.asarray(slopes, dtype=float)
    distance = np.abs(np.asarray(query_positions)[:, None] - np.asarray(key_positions)[None, :])
    return np.einsum("h,ij->hij", -slopes, distance.astype(float))


def masked_softmax(logits, mask):
    logits = np.asarray(logits, dtype=float)
    logits, mask = np.broadcast_arrays(logits, np.asarray(mask, dtype=bool))
    out = np.zeros(logits.shape)
    for index in np.ndindex(logits.shape[:-1]):
        visible = mask[index]
        if visible.any():
            z = logits[index][visible]
            e = np.exp(z - z.max())
            out[index][visible] = e / e.sum()
    return out


def alibi_attention(scores, slopes, query_positions, key_positions, causal=True):
    scores = np.asarray(scores, dtype=float)
    q = np.asarray(query_positions)
    k = np.asarray(key_positions)
    bias = alibi_bias(slopes, q, k)
    mask = (q[:, None] - k[None, :] >= 0) if causal else np.ones((len(q), len(k)), dtype=bool)
    return masked_softmax(np.broadcast_to(scores, bias.shape) + bias, mask)


def learned_table_parameters(max_positions, d_model):
    if min(max_positions, d_model) < 0:
        raise ValueError("negative size")
    return max_positions * d_model


def position_parameter_count(scheme, *, d_model, num_heads, num_layers, max_positions=0, num_buckets=32,
                             max_distance=16):
    if scheme == "learned":
        return max_positions * d_model
    if scheme in ("sinusoidal", "rope", "alibi"):
        return 0
    if scheme == "t5":
        return num_heads * num_buckets
    if scheme == "shaw":
        head_dim = d_model // num_heads
        return 2 * num_layers * head_dim * (2 * max_distance + 1)
    raise ValueError(f"unknown scheme: {scheme}")


def interpolate_position_table(table, new_num_positions):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] < 2 or new_num_positions < 2:
        raise ValueError("need a 2-D table with P >= 2 and P' >= 2")
    old = np.arange(table.shape[0])
    new = np.linspace(0, table.shape[0] - 1, new_num_positions)
    return np.stack([np.interp(new, old, table[:, c]) for c in range(table.shape[1])], axis=1)


def position_ids_from_attention_mask(attention_mask):
    mask = np.asarray(attention_mask)
    if mask.ndim != 2 or not np.all((mask == 0) | (mask == 1)):
        raise ValueError("attention_mask must be a 2-D array of 0/1")
    ids = np.zeros(mask.shape, dtype=np.int64)
    for b in range(mask.shape[0]):
        seen = 0
        for t in range(mask.shape[1]):
            if mask[b, t]:
                ids[b, t] = seen
                seen += 1
    return ids


def decode_position_ids(attention_mask, num_new_tokens):
    mask = np.asarray(attention_mask)
    if mask.ndim != 2 or not np.all((mask == 0) | (mask == 1)):
        raise ValueError("attention_mask must be a 2-D array of 0/1")
    if num_new_tokens < 0:
        raise ValueError("num_new_tokens must be >= 0")
    counts = np.count_nonzero(mask, axis=1)
    return np.array([[n + t for t in range(num_new_tokens)] for n in counts], dtype=np.int64).reshape(
        mask.shape[0], num_new_tokens
    )


def first_bad_decode_step(prompt_len, observed_position_ids):
    for step, pid in enumerate(list(np.ravel(observed_position_ids))):
        if pid != prompt_len + step:
            return step
    return None


def mean_attention_distance(weights, query_positions, key_positions):
    w = np.asarray(weights, dtype=float)
    q = np.asarray(query_positions)
    k = np.asarray(key_positions)
    result = []
    for h in range(w.shape[0]):
        total = 0.0
        for i in range(w.shape[1]):
            total += sum(w[h, i, j] * abs(q[i] - k[j]) for j in range(w.shape[2]))
        result.append(total / w.shape[1])
    return np.array(result)


def attention_entropy(weights):
    w = np.asarray(weights, dtype=float)
    terms = np.zeros_like(w)
    positive = w > 0
    terms[positive] = -w[positive] * np.log(w[positive])
    return terms.sum(axis=2).mean(axis=1)


def shift_invariance_gap(logit_fn, q, k, shift):
    positions = np.arange(len(q))
    return float(np.abs(np.asarray(logit_fn(q, k, positions)) - np.asarray(logit_fn(q, k, positions + shift))).max())


def needle_attention_by_depth(bias_fn, context_len, depths, needle_logit=5.0):
    if context_len < 1:
        raise ValueError("context_len must be >= 1")
    depths = list(np.ravel(depths))
    if any(not (0.0 <= d <= 1.0) for d in depths):
        raise ValueError("depths must be in [0, 1]")
    bias = np.asarray(bias_fn(np.array([context_len - 1]), np.arange(context_len)), dtype=float)[:, 0, :]
    out = np.zeros((bias.shape[0], len(depths)))
    for col, depth in enumerate(depths):
        needle = int(round(depth * (context_len - 1)))
        logits = bias.copy()
        logits[:, needle] += needle_logit
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        out[:, col] = weights[:, needle]
    return out
