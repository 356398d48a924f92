"""Wrong and alternative answers for posenc-current exercises 1-5: a config.json's RoPE settings and llama3's
bands, LongRoPE, stale keys, partial and proportional rotary, DeepSeek's YaRN scales.

Most wrong answers are the reference with the one line a student gets wrong (:func:`_changed` refuses a change
that does not apply exactly once, so a wrong answer cannot silently become the reference); the alternatives are
written from scratch, another way.
"""

import inspect

import posenc_solutions


def _changed(name, old, new):
    """The reference function `name` with `old` (which must occur exactly once) replaced by `new`."""
    source = inspect.getsource(getattr(posenc_solutions, name))
    assert source.count(old) == 1, f"{name}: {old!r} occurs {source.count(old)} times"
    return {name: source.replace(old, new)}


WRONG = {  # label: (exercise, {function_name: code})
    # ---- ex01 rope_parameters_from_config
    "settings_only_rope_parameters": ("ex01", _changed(
        "rope_parameters_from_config", 'config.get("rope_scaling") or config.get("rope_parameters")',
        'config.get("rope_parameters")')),
    "settings_rope_parameters_first": ("ex01", _changed(
        "rope_parameters_from_config", 'config.get("rope_scaling") or config.get("rope_parameters")',
        'config.get("rope_parameters") or config.get("rope_scaling")')),
    "settings_ignore_old_type": ("ex01", _changed(
        "rope_parameters_from_config", 'settings.setdefault("rope_type", settings.get("type", "default"))',
        'settings.setdefault("rope_type", "default")')),
    "settings_inner_length_wins": ("ex01", _changed(
        "rope_parameters_from_config",
        'if "original_max_position_embeddings" in config:\n'
        '            settings["original_max_position_embeddings"] = config["original_max_position_embeddings"]\n'
        '        elif',
        'if "original_max_position_embeddings" in config and "original_max_position_embeddings" not in settings:\n'
        '            settings["original_max_position_embeddings"] = config["original_max_position_embeddings"]\n'
        '        elif')),
    "settings_length_for_every_type": ("ex01", _changed(
        "rope_parameters_from_config", 'if settings["rope_type"] in ("llama3", "yarn", "longrope"):',
        'if settings["rope_type"] != "default":')),
    "settings_theta_config_first": ("ex01", _changed(
        "rope_parameters_from_config", 'settings.setdefault("rope_theta", config.get("rope_theta", 10000.0))',
        'settings["rope_theta"] = config.get("rope_theta", settings.get("rope_theta", 10000.0))')),
    # The settings dict taken as it is, not copied: the keys it adds land in the caller's config (the notebook:
    # "Return a new dict (the caller's config is theirs: copy the settings before you add to them)")
    "settings_not_copied": ("ex01", _changed(
        "rope_parameters_from_config", "settings = dict(settings)\n    settings.setdefault(", "settings.setdefault(")),
    # ---- ex01 llama3_frequency_bands
    "bands_thresholds_inclusive": ("ex01", _changed(
        "llama3_frequency_bands", "bands[wavelength < original_max_position / high_freq_factor] = 0",
        "bands[wavelength <= original_max_position / high_freq_factor] = 0")),
    "bands_factors_swapped": ("ex01", _changed(
        "llama3_frequency_bands",
        "bands[wavelength < original_max_position / high_freq_factor] = 0\n"
        "    bands[wavelength > original_max_position / low_freq_factor] = 2",
        "bands[wavelength < original_max_position / low_freq_factor] = 0\n"
        "    bands[wavelength > original_max_position / high_freq_factor] = 2")),
    "bands_frequency_not_wavelength": ("ex01", _changed(
        "llama3_frequency_bands", "wavelength = 2 * math.pi / inv_freq", "wavelength = 1 / inv_freq")),
    "bands_float": ("ex01", _changed(
        "llama3_frequency_bands", "bands = np.ones(inv_freq.shape, dtype=np.int64)", "bands = np.ones(inv_freq.shape)")),
    # ---- ex02
    "longrope_factor_log_not_sqrt": ("ex02", _changed(
        "longrope_attention_factor", "return math.sqrt(1 + math.log(factor) / math.log(original_max_position))",
        "return 1 + math.log(factor) / math.log(original_max_position)")),
    "longrope_factor_always": ("ex02", _changed(
        "longrope_attention_factor", "    if factor <= 1:\n        return 1.0\n", "")),
    "longrope_switch_at_length": ("ex02", _changed(
        "longrope_inv_freq", "seq_len is not None and seq_len > original_max_position",
        "seq_len is not None and seq_len >= original_max_position")),
    "longrope_multiply": ("ex02", _changed(
        "longrope_inv_freq", "inv_freq = 1.0 / (chosen * float(base) ** (np.arange(0, int(head_dim), 2) / head_dim))",
        "inv_freq = chosen / float(base) ** (np.arange(0, int(head_dim), 2) / head_dim)")),
    "longrope_no_factor_shape_check": ("ex02", _changed(
        "longrope_inv_freq", "if value.shape != (pairs,):", "if value.ndim > 1:")),
    "longrope_attention_from_seq_len": ("ex02", _changed(
        "longrope_inv_freq", "factor = max_position / original_max_position",
        "factor = max(seq_len or 1, original_max_position) / original_max_position")),
    # ---- ex03
    "lengths_t_not_t_plus_1": ("ex03", _changed(
        "rotation_lengths", "return np.maximum(positions + 1, int(prompt_len))",
        "return np.maximum(positions, int(prompt_len))")),
    "lengths_prompt_decoded": ("ex03", _changed(
        "rotation_lengths", "return np.maximum(positions + 1, int(prompt_len))", "return positions + 1")),
    "cache_rotated_for_the_final_length": ("ex03", _changed(
        "cached_keys", "lengths = np.maximum(np.arange(1, num_tokens + 1), int(prompt_len))",
        "lengths = np.full(num_tokens, num_tokens)")),
    "cache_prompt_decoded": ("ex03", _changed(
        "cached_keys", "lengths = np.maximum(np.arange(1, num_tokens + 1), int(prompt_len))",
        "lengths = np.arange(1, num_tokens + 1)")),
    "cache_asks_per_token": ("ex03", {"cached_keys": '''
def cached_keys(keys, prompt_len, inv_freq_for_length):
    keys = np.asarray(keys, dtype=float)
    if keys.ndim < 2 or keys.shape[-1] % 2:
        raise ValueError("keys must be (..., N, d) with d even")
    n, d = keys.shape[-2:]
    if not isinstance(prompt_len, (int, np.integer)) or isinstance(prompt_len, bool) or not 1 <= prompt_len <= n:
        raise ValueError("prompt_len must be an integer in [1, N]")
    out = keys.copy()
    h = d // 2
    for t in range(n):
        theta = np.asarray(inv_freq_for_length(max(prompt_len, t + 1)), dtype=float)
        if theta.shape != (h,):
            raise ValueError("the frequencies must have shape (d // 2,)")
        a, b = keys[..., t, :h], keys[..., t, h:]
        c, s = np.cos(t * theta), np.sin(t * theta)
        out[..., t, :h], out[..., t, h:] = a * c - b * s, b * c + a * s
    return out
'''}),
    "cache_interleaved": ("ex03", _changed(
        "cached_keys", "first, second = keys[..., :half], keys[..., half:]\n"
        "    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)",
        "out = np.array(keys, dtype=dtype)\n"
        "    out[..., 0::2] = keys[..., 0::2] * cos - keys[..., 1::2] * sin\n"
        "    out[..., 1::2] = keys[..., 1::2] * cos + keys[..., 0::2] * sin\n"
        "    return out")),
    "stale_no_clamp": ("ex03", _changed(
        "stale_keys", "return np.maximum(lengths, int(original_max_position)) != max(int(num_tokens), int(original_max_position))",
        "return lengths != num_tokens")),
    "stale_last_too": ("ex03", _changed(
        "stale_keys", "return np.maximum(lengths, int(original_max_position)) != max(int(num_tokens), int(original_max_position))",
        "return np.full(int(num_tokens), int(num_tokens) > int(original_max_position))")),
    "stale_as_int": ("ex03", _changed(
        "stale_keys", "return np.maximum(lengths, int(original_max_position)) != max(int(num_tokens), int(original_max_position))",
        "return (np.maximum(lengths, int(original_max_position)) != max(int(num_tokens), int(original_max_position)))"
        ".astype(int)")),
    # ---- ex04
    "partial_head_frequencies": ("ex04", _changed(
        "apply_partial_rotary", "angles = positions[:, None] * float(base) ** (-np.arange(0, rotary_dim, 2) / rotary_dim)",
        "angles = positions[:, None] * float(base) ** (-np.arange(0, rotary_dim, 2) / dim)")),
    "partial_last_dimensions": ("ex04", _changed(
        "apply_partial_rotary", "first, second = x[..., :half], x[..., half:rotary_dim]\n"
        "    return np.concatenate([first * cos - second * sin, second * cos + first * sin,\n"
        "                           x[..., rotary_dim:].astype(dtype)], axis=-1)",
        "rest, first, second = x[..., :dim - rotary_dim], x[..., dim - rotary_dim:dim - half], x[..., dim - half:]\n"
        "    return np.concatenate([rest.astype(dtype), first * cos - second * sin, second * cos + first * sin],"
        " axis=-1)")),
    "partial_rotated_part_only": ("ex04", _changed(
        "apply_partial_rotary", "    return np.concatenate([first * cos - second * sin, second * cos + first * sin,\n"
        "                           x[..., rotary_dim:].astype(dtype)], axis=-1)",
        "    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)")),
    "partial_pairs_across_head": ("ex04", {"apply_partial_rotary": '''
def apply_partial_rotary(x, positions, partial_rotary_factor, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise ValueError("x must be (..., L, d)")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    if isinstance(partial_rotary_factor, bool) or not 0 < partial_rotary_factor <= 1:
        raise ValueError("the factor must be in (0, 1]")
    d = x.shape[-1]
    r = int(d * partial_rotary_factor)
    if r < 2 or r % 2:
        raise ValueError("int(d * p) must be even and >= 2")
    out = x.copy()
    theta = base ** (-np.arange(0, r, 2) / r)
    for t in range(r // 2):  # pairs (t, t + d/2), as the whole head's
        c, s = np.cos(positions * theta[t]), np.sin(positions * theta[t])
        a, b = x[..., t], x[..., t + d // 2]
        out[..., t], out[..., t + d // 2] = a * c - b * s, b * c + a * s
    return out
'''}),
    "partial_no_even_check": ("ex04", _changed(
        "apply_partial_rotary", "if rotary_dim < 2 or rotary_dim % 2:", "if rotary_dim < 1:")),
    "proportional_rotary_frequencies": ("ex04", _changed(
        "apply_proportional_rope", "theta[:turning] = float(base) ** (-np.arange(0, 2 * turning, 2) / dim)",
        "theta[:turning] = float(base) ** (-np.arange(0, 2 * turning, 2) / (2 * turning))")),
    "proportional_slowest_pairs": ("ex04", _changed(
        "apply_proportional_rope", "theta[:turning] = float(base) ** (-np.arange(0, 2 * turning, 2) / dim)",
        "theta[half - turning:] = float(base) ** (-np.arange(2 * (half - turning), dim, 2) / dim)")),
    "proportional_round": ("ex04", _changed(
        "apply_proportional_rope", "turning = int(partial_rotary_factor * dim // 2)",
        "turning = int(round(partial_rotary_factor * dim / 2))")),
    "proportional_first_dimensions": ("ex04", {"apply_proportional_rope": '''
def apply_proportional_rope(x, positions, partial_rotary_factor, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with d even")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    if isinstance(partial_rotary_factor, bool) or not 0 < partial_rotary_factor <= 1:
        raise ValueError("the factor must be in (0, 1]")
    d = x.shape[-1]
    n = int(partial_rotary_factor * d // 2)
    out = x.copy()
    for t in range(n):  # pairs (t, t + n), the first 2n dimensions
        angle = positions * base ** (-2 * t / d)
        a, b = x[..., t], x[..., t + n]
        out[..., t], out[..., t + n] = a * np.cos(angle) - b * np.sin(angle), b * np.cos(angle) + a * np.sin(angle)
    return out
'''}),
    # ---- ex05
    "mscale_natural_for_small": ("ex05", _changed(
        "yarn_mscale", "    if scale <= 1:\n        return 1.0\n", "")),
    "mscale_without_m": ("ex05", _changed(
        "yarn_mscale", "return 0.1 * mscale * math.log(scale) + 1.0", "return 0.1 * math.log(scale) + 1.0")),
    "scales_mu_not_squared": ("ex05", _changed(
        "deepseek_yarn_scales", "softmax_scale *= mu(mscale_all_dim) ** 2", "softmax_scale *= mu(mscale_all_dim)")),
    "scales_cos_sin_always_mu": ("ex05", _changed(
        "deepseek_yarn_scales", "cos_sin_factor = mu(mscale) / mu(mscale_all_dim)", "cos_sin_factor = mu(mscale)")),
    "scales_rotated_width": ("ex05", _changed(
        "deepseek_yarn_scales", "softmax_scale = qk_head_dim ** -0.5", "softmax_scale = (qk_head_dim / 3) ** -0.5")),
    "scales_zero_counts_as_set": ("ex05", _changed(
        "deepseek_yarn_scales", "if mscale and mscale_all_dim:",
        "if mscale is not None and mscale_all_dim is not None:")),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer cell grade_id: code})
    "divided_counts_kept": ("ex01", {"ex01_divided_pairs_answer": "ex01_divided_pairs = 15"}),
    "divided_counts_blended": ("ex01", {"ex01_divided_pairs_answer": "ex01_divided_pairs = 17"}),
    "switch_both_long": ("ex02", {"ex02_switch_answer": 'ex02_switch = "long, long"'}),
    "stale_none": ("ex03", {"ex03_stale_count_answer": "ex03_stale_count = 0"}),
    "stale_all": ("ex03", {"ex03_stale_count_answer": "ex03_stale_count = 3101"}),
    "last_rotated_first_dims": ("ex04", {"ex04_last_rotated_answer": "ex04_last_rotated = 127"}),
    "logit_factor_once": ("ex05", {"ex05_logit_factor_answer": "ex05_logit_factor = 1.369"}),
}

ALTERNATIVES = {  # function_name: code, correct and written another way
    "rope_parameters_from_config": '''
def rope_parameters_from_config(config):
    if type(config) is not dict:
        raise ValueError("config must be a dict")
    found = config["rope_scaling"] if config.get("rope_scaling") else config.get("rope_parameters") or {}
    if not isinstance(found, dict):
        raise ValueError("the rope settings must be a dict")
    out = {key: value for key, value in found.items()}
    if "rope_type" not in out:
        out["rope_type"] = out["type"] if "type" in out else "default"
    if out["rope_type"] not in {"default", "linear", "dynamic", "yarn", "longrope", "llama3"}:
        raise ValueError(f"unknown rope_type {out['rope_type']!r}")
    if "rope_theta" not in out:
        out["rope_theta"] = config["rope_theta"] if "rope_theta" in config else 10000.0
    if "partial_rotary_factor" not in out and "partial_rotary_factor" in config:
        out["partial_rotary_factor"] = config["partial_rotary_factor"]
    if out["rope_type"] in {"llama3", "yarn", "longrope"}:
        for source in (config, out, {"original_max_position_embeddings": config.get("max_position_embeddings")}):
            if source.get("original_max_position_embeddings") is not None:
                out["original_max_position_embeddings"] = source["original_max_position_embeddings"]
                break
        else:
            raise ValueError("no pretraining length")
    return out
''',
    "llama3_frequency_bands": '''
def llama3_frequency_bands(head_dim, base, low_freq_factor, high_freq_factor, original_max_position):
    if not isinstance(head_dim, (int, np.integer)) or isinstance(head_dim, bool) or head_dim < 2 or head_dim % 2:
        raise ValueError("head_dim must be an even integer >= 2")
    if base <= 0 or low_freq_factor <= 0 or high_freq_factor <= low_freq_factor or original_max_position <= 0:
        raise ValueError("bad llama3 settings")
    turns = original_max_position / (2 * math.pi * base ** (np.arange(head_dim // 2) * 2 / head_dim))
    # turns within L: more than high_freq_factor -> kept, fewer than low_freq_factor -> divided
    return np.where(turns > high_freq_factor, 0, np.where(turns < low_freq_factor, 2, 1)).astype(np.int64)
''',
    "longrope_attention_factor": '''
def longrope_attention_factor(factor, original_max_position):
    if factor <= 0 or original_max_position <= 1:
        raise ValueError("need factor > 0 and original_max_position > 1")
    return float(np.sqrt(1 + np.log(max(factor, 1.0)) / np.log(original_max_position)))
''',
    "longrope_inv_freq": '''
def longrope_inv_freq(head_dim, base, short_factor, long_factor, original_max_position, max_position,
                      seq_len, *, factor=None, attention_factor=None):
    if isinstance(head_dim, bool) or head_dim != int(head_dim) or head_dim < 2 or head_dim % 2 or base <= 0:
        raise ValueError("bad head_dim or base")
    short_factor, long_factor = np.array(short_factor, dtype=float), np.array(long_factor, dtype=float)
    for f in (short_factor, long_factor):
        if f.shape != (head_dim // 2,) or (f <= 0).any():
            raise ValueError("a factor list must have d/2 entries > 0")
    if isinstance(original_max_position, bool) or original_max_position != int(original_max_position) \\
            or original_max_position < 2:
        raise ValueError("bad original_max_position")
    if factor is None:
        if max_position is None or max_position < 1:
            raise ValueError("need max_position or factor")
        factor = max_position / original_max_position
    if factor <= 0 or (seq_len is not None and seq_len < 1) or (attention_factor is not None and attention_factor <= 0):
        raise ValueError("bad factor, seq_len or attention_factor")
    use_long = seq_len is not None and seq_len > original_max_position
    f = long_factor if use_long else short_factor
    inv = np.array([1 / (f[t] * base ** (2 * t / head_dim)) for t in range(head_dim // 2)])
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1 else (1 + math.log(factor) / math.log(original_max_position)) ** 0.5
    return inv, attention_factor
''',
    "rotation_lengths": '''
def rotation_lengths(num_tokens, prompt_len):
    for v in (num_tokens, prompt_len):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise ValueError("integers please")
    if prompt_len < 1 or prompt_len > num_tokens:
        raise ValueError("need 1 <= prompt_len <= num_tokens")
    return np.array([prompt_len] * prompt_len + list(range(prompt_len + 1, num_tokens + 1)), dtype=np.int64)
''',
    "cached_keys": '''
def cached_keys(keys, prompt_len, inv_freq_for_length):
    keys = np.asarray(keys)
    if keys.ndim < 2 or keys.shape[-1] % 2:
        raise ValueError("keys must be (..., N, d) with d even")
    n, d = keys.shape[-2:]
    if not isinstance(prompt_len, (int, np.integer)) or isinstance(prompt_len, bool) or not 1 <= prompt_len <= n:
        raise ValueError("prompt_len must be an integer in [1, N]")
    z = keys[..., : d // 2] + 1j * keys[..., d // 2:]   # pair j as the complex number k_j + i k_(j+d/2)
    out = np.empty_like(z)
    theta = np.asarray(inv_freq_for_length(prompt_len), dtype=float)
    if theta.shape != (d // 2,):
        raise ValueError("the frequencies must have shape (d // 2,)")
    out[..., :prompt_len, :] = z[..., :prompt_len, :] * np.exp(1j * np.arange(prompt_len)[:, None] * theta)
    for t in range(prompt_len, n):
        theta = np.asarray(inv_freq_for_length(t + 1), dtype=float)
        if theta.shape != (d // 2,):
            raise ValueError("the frequencies must have shape (d // 2,)")
        out[..., t, :] = z[..., t, :] * np.exp(1j * t * theta)
    return np.concatenate([out.real, out.imag], axis=-1)
''',
    "stale_keys": '''
def stale_keys(num_tokens, prompt_len, original_max_position):
    for v in (num_tokens, prompt_len, original_max_position):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise ValueError("integers please")
    if not 1 <= prompt_len <= num_tokens or original_max_position < 1:
        raise ValueError("need 1 <= prompt_len <= num_tokens and original_max_position >= 1")
    now = max(num_tokens, original_max_position)
    return np.array([max(prompt_len, t + 1, original_max_position) < now for t in range(num_tokens)], dtype=bool)
''',
    "apply_partial_rotary": '''
def apply_partial_rotary(x, positions, partial_rotary_factor, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise ValueError("x must be (..., L, d)")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    if isinstance(partial_rotary_factor, bool) or not 0 < partial_rotary_factor <= 1:
        raise ValueError("the factor must be in (0, 1]")
    r = int(x.shape[-1] * partial_rotary_factor)
    if r < 2 or r % 2:
        raise ValueError("int(d * p) must be even and >= 2")
    h = r // 2
    z = (x[..., :h] + 1j * x[..., h:r]) * np.exp(1j * positions[:, None] * base ** (-2 * np.arange(h) / r))
    return np.concatenate([z.real, z.imag, x[..., r:]], axis=-1)
''',
    "apply_proportional_rope": '''
def apply_proportional_rope(x, positions, partial_rotary_factor, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError("x must be (..., L, d) with d even")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    if isinstance(partial_rotary_factor, bool) or not 0 < partial_rotary_factor <= 1:
        raise ValueError("the factor must be in (0, 1]")
    d = x.shape[-1]
    n = int(partial_rotary_factor * d // 2)
    out = x.copy()
    for t in range(n):
        angle = positions * base ** (-2 * t / d)
        a, b = x[..., t], x[..., t + d // 2]
        out[..., t] = a * np.cos(angle) - b * np.sin(angle)
        out[..., t + d // 2] = b * np.cos(angle) + a * np.sin(angle)
    return out
''',
    "yarn_mscale": '''
def yarn_mscale(scale, mscale=1.0):
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    return 1.0 + 0.1 * mscale * max(math.log(scale), 0.0)
''',
    "deepseek_yarn_scales": '''
def deepseek_yarn_scales(factor, mscale, mscale_all_dim, qk_head_dim):
    if factor <= 0 or (mscale or 0) < 0 or (mscale_all_dim or 0) < 0:
        raise ValueError("bad factor or mscale")
    if isinstance(qk_head_dim, bool) or qk_head_dim != int(qk_head_dim) or qk_head_dim < 1:
        raise ValueError("bad qk_head_dim")
    log = math.log(factor) if factor > 1 else 0.0
    m, m_all = mscale or 0.0, mscale_all_dim or 0.0
    both = m > 0 and m_all > 0
    cos_sin = (1 + 0.1 * m * log) / (1 + 0.1 * m_all * log) if both else 1 + 0.1 * log
    return cos_sin, (1 + 0.1 * m_all * log) ** 2 / math.sqrt(qk_head_dim)
''',
}
