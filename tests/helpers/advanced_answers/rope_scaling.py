"""Wrong and alternative answers for posenc-advanced exercise 6 (RoPE scaling for long context:
position interpolation, dynamic NTK, YaRN, Llama 3.1): each WRONG entry is a mistake students make
and must lose points in its own exercise only; each ALTERNATIVES entry is a differently written
correct answer and must pass."""


def _linear(op="/", checks="head_dim < 2 or head_dim % 2 or base <= 0 or factor < 1"):
    return f'''
def linear_scaled_inv_freq(head_dim, base, factor):
    if {checks}:
        raise ValueError("bad arguments")
    return base ** (-np.arange(0, head_dim, 2) / head_dim) {op} factor
'''


def _dynamic(length="max(seq_len, original_max_position)", exponent="head_dim / (head_dim - 2)",
             scale="factor * length / original_max_position - (factor - 1)",
             checks="head_dim < 4 or head_dim % 2"):
    return f'''
def dynamic_ntk_inv_freq(head_dim, base, factor, original_max_position, seq_len):
    if {checks}:
        raise ValueError("head_dim")
    if base <= 0 or factor < 1 or original_max_position < 1 or seq_len < 1:
        raise ValueError("bad arguments")
    length = {length}
    scale = {scale}
    new_base = base * scale ** ({exponent})
    return new_base ** (-np.arange(0, head_dim, 2) / head_dim)
'''


def _yarn(low="max(math.floor(pair_of(beta_fast)), 0)",
          high="min(math.ceil(pair_of(beta_slow)), head_dim - 1)", guard=True,
          blend="ramp * theta / factor + (1 - ramp) * theta",
          attention="0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0",
          beta_check="beta_slow <= 0 or beta_fast <= beta_slow"):
    guard_line = "    if low == high:\n        high += 0.001\n" if guard else ""
    return f'''
def yarn_inv_freq(head_dim, base, factor, original_max_position, beta_fast=32.0, beta_slow=1.0):
    if head_dim < 2 or head_dim % 2 or base <= 0 or base == 1 or factor < 1:
        raise ValueError("bad arguments")
    if original_max_position < 1 or {beta_check}:
        raise ValueError("bad arguments")

    def pair_of(turns):
        turns_in_l = original_max_position / (2 * math.pi * turns)
        return head_dim * math.log(turns_in_l) / (2 * math.log(base))

    low = {low}
    high = {high}
{guard_line}    t = np.arange(head_dim // 2)
    ramp = np.clip((t - low) / (high - low), 0, 1)
    theta = base ** (-2 * t / head_dim)
    return {blend}, {attention}
'''


def _llama3(wavelen="2 * math.pi / theta", long="wavelen > L / low_freq_factor",
            short="wavelen < L / high_freq_factor", blend="(1 - g) * theta / factor + g * theta",
            checks="low_freq_factor <= 0 or high_freq_factor <= low_freq_factor"):
    return f'''
def llama3_inv_freq(head_dim, base, factor, low_freq_factor, high_freq_factor,
                    original_max_position):
    if head_dim < 2 or head_dim % 2 or base <= 0 or factor < 1 or original_max_position < 1:
        raise ValueError("bad arguments")
    if {checks}:
        raise ValueError("bad frequency factors")
    L = original_max_position
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    wavelen = {wavelen}
    g = (L / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = {blend}
    return np.where({long}, theta / factor, np.where({short}, theta, blended))
'''


WRONG = {  # label: (exercise, {function_name: code})
    "linear_factor_multiplied": ("ex06", {"linear_scaled_inv_freq": _linear(op="*")}),
    "linear_factor_on_base": ("ex06", {"linear_scaled_inv_freq": '''
def linear_scaled_inv_freq(head_dim, base, factor):
    if head_dim < 2 or head_dim % 2 or base <= 0 or factor < 1:
        raise ValueError("bad arguments")
    return (base * factor) ** (-np.arange(0, head_dim, 2) / head_dim)
'''}),
    "linear_no_factor_check": ("ex06", {"linear_scaled_inv_freq": _linear(
        checks="head_dim < 2 or head_dim % 2 or base <= 0")}),
    "ntk_exponent_one": ("ex06", {"dynamic_ntk_inv_freq": _dynamic(exponent="1")}),
    "ntk_exponent_half_d": ("ex06", {"dynamic_ntk_inv_freq": _dynamic(exponent="head_dim / 2")}),
    "ntk_no_clamp": ("ex06", {"dynamic_ntk_inv_freq": _dynamic(length="seq_len")}),
    "ntk_static_factor": ("ex06", {"dynamic_ntk_inv_freq": _dynamic(scale="factor")}),
    "ntk_plain_ratio": ("ex06", {"dynamic_ntk_inv_freq": _dynamic(
        scale="length / original_max_position")}),
    "ntk_head_dim_2_accepted": ("ex06", {"dynamic_ntk_inv_freq": _dynamic(
        checks="head_dim < 2 or head_dim % 2")}),
    "yarn_ramp_reversed": ("ex06", {"yarn_inv_freq": _yarn(
        blend="(1 - ramp) * theta / factor + ramp * theta")}),
    "yarn_floor_ceil_swapped": ("ex06", {"yarn_inv_freq": _yarn(
        low="max(math.ceil(pair_of(beta_fast)), 0)",
        high="min(math.floor(pair_of(beta_slow)), head_dim - 1)")}),
    "yarn_not_truncated": ("ex06", {"yarn_inv_freq": _yarn(
        low="max(pair_of(beta_fast), 0)", high="min(pair_of(beta_slow), head_dim - 1)")}),
    "yarn_betas_swapped": ("ex06", {"yarn_inv_freq": _yarn(
        low="max(math.floor(pair_of(beta_slow)), 0)",
        high="min(math.ceil(pair_of(beta_fast)), head_dim - 1)")}),
    "yarn_clamp_to_last_pair": ("ex06", {"yarn_inv_freq": _yarn(
        high="min(math.ceil(pair_of(beta_slow)), head_dim // 2 - 1)")}),
    "yarn_no_guard": ("ex06", {"yarn_inv_freq": _yarn(guard=False)}),
    "yarn_attention_ln": ("ex06", {"yarn_inv_freq": _yarn(attention="math.log(factor)")}),
    "yarn_attention_missing": ("ex06", {"yarn_inv_freq": _yarn(attention="1.0")}),
    "yarn_no_beta_check": ("ex06", {"yarn_inv_freq": _yarn(beta_check="beta_slow <= 0")}),
    "llama3_factors_swapped": ("ex06", {"llama3_inv_freq": _llama3(
        long="wavelen > L / high_freq_factor", short="wavelen < L / low_freq_factor")}),
    "llama3_comparisons_inverted": ("ex06", {"llama3_inv_freq": _llama3(
        long="wavelen < L / high_freq_factor", short="wavelen > L / low_freq_factor")}),
    "llama3_frequency_not_wavelength": ("ex06", {"llama3_inv_freq": _llama3(wavelen="theta")}),
    "llama3_no_two_pi": ("ex06", {"llama3_inv_freq": _llama3(wavelen="1 / theta")}),
    "llama3_blend_reversed": ("ex06", {"llama3_inv_freq": _llama3(
        blend="g * theta / factor + (1 - g) * theta")}),
    "llama3_no_factor_checks": ("ex06", {"llama3_inv_freq": _llama3(checks="False")}),
}

WRONG_CONCEPTS = {  # label: (exercise, {answer_cell_grade_id: code})
    "unchanged_below_low_threshold": ("ex06", {
        "ex06_unchanged_pairs_answer": "ex06_unchanged_pairs = 35"}),
    "unchanged_off_by_one": ("ex06", {"ex06_unchanged_pairs_answer": "ex06_unchanged_pairs = 28"}),
}

ALTERNATIVES = {  # function_name: code, each written differently from the reference
    "linear_scaled_inv_freq": '''
def linear_scaled_inv_freq(head_dim, base, factor):
    if head_dim != int(head_dim) or head_dim < 2 or int(head_dim) % 2 == 1:
        raise ValueError("head_dim must be an even integer >= 2")
    if base <= 0 or factor < 1:
        raise ValueError("base must be > 0 and factor >= 1")
    log_base = math.log(base)
    return np.array([math.exp(-2 * t * log_base / head_dim) / factor
                     for t in range(int(head_dim) // 2)])
''',
    "dynamic_ntk_inv_freq": '''
def dynamic_ntk_inv_freq(head_dim, base, factor, original_max_position, seq_len):
    if head_dim != int(head_dim) or head_dim < 4 or int(head_dim) % 2 == 1:
        raise ValueError("head_dim must be an even integer >= 4")
    if base <= 0 or factor < 1 or original_max_position < 1 or seq_len < 1:
        raise ValueError("bad arguments")
    d = int(head_dim)
    ratio = seq_len / original_max_position if seq_len > original_max_position else 1.0
    kappa = 1 + factor * (ratio - 1)           # the effective factor
    t = np.arange(d // 2)
    # b'^(-2t/d) = b^(-2t/d) kappa^(-2t/(d-2)): the static NTK form with kappa for s
    return np.exp(-2 * t / d * np.log(base)) * kappa ** (-2 * t / (d - 2))
''',
    "yarn_inv_freq": '''
def yarn_inv_freq(head_dim, base, factor, original_max_position, beta_fast=32.0, beta_slow=1.0):
    if head_dim != int(head_dim) or head_dim < 2 or int(head_dim) % 2:
        raise ValueError("head_dim must be an even integer >= 2")
    if not (base > 0 and base != 1):
        raise ValueError("base must be > 0 and != 1")
    if factor < 1 or original_max_position < 1:
        raise ValueError("factor and original_max_position")
    if not 0 < beta_slow < beta_fast:
        raise ValueError("need 0 < beta_slow < beta_fast")
    d = int(head_dim)
    # pair index at which a pair turns r times within the trained length
    index = lambda r: d / 2 * np.log(original_max_position / (2 * np.pi * r)) / np.log(base)
    low = int(np.floor(index(beta_fast)))
    high = int(np.ceil(index(beta_slow)))
    low, high = max(low, 0), min(high, d - 1)
    width = high - low if high != low else 0.001
    freqs = []
    for t in range(d // 2):
        theta = base ** (-2.0 * t / d)
        gamma = (t - low) / width
        gamma = 0.0 if gamma < 0 else (1.0 if gamma > 1 else gamma)
        freqs.append(theta * (1 - gamma * (1 - 1 / factor)))
    scale = 1.0 if factor <= 1 else 1 + math.log(factor) / 10
    return np.array(freqs), scale
''',
    "llama3_inv_freq": '''
def llama3_inv_freq(head_dim, base, factor, low_freq_factor, high_freq_factor,
                    original_max_position):
    if head_dim != int(head_dim) or head_dim < 2 or int(head_dim) % 2:
        raise ValueError("head_dim must be an even integer >= 2")
    if base <= 0 or factor < 1 or original_max_position < 1:
        raise ValueError("base, factor or original_max_position")
    if not 0 < low_freq_factor < high_freq_factor:
        raise ValueError("need 0 < low_freq_factor < high_freq_factor")
    out = []
    for t in range(int(head_dim) // 2):
        theta = base ** (-2 * t / head_dim)
        turns = original_max_position * theta / (2 * math.pi)   # L / wavelength
        if turns <= low_freq_factor:
            out.append(theta / factor)
        elif turns >= high_freq_factor:
            out.append(theta)
        else:
            g = (turns - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append(theta / factor + g * (theta - theta / factor))
    return np.array(out)
''',
}
