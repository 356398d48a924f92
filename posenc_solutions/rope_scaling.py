"""RoPE scaling for long context: position interpolation, dynamic NTK-aware base scaling, YaRN and
Llama 3.1's rope_type="llama3", as inverse frequencies (and YaRN's attention factor).

Every rule starts from the plain RoPE inverse frequencies ``base ** (-2t / head_dim)``,
``t = 0 .. head_dim/2 - 1`` (pair ``t`` turns by ``m * theta_t`` radians at position ``m``) and
returns new ones, as Hugging Face transformers' ``modeling_rope_utils.py`` does (checked against
transformers 5.23.0 in ``tests/unit/test_advanced_rope_scaling.py``).
"""

import math

import numpy as np


def linear_scaled_inv_freq(head_dim, base, factor):
    r"""RoPE inverse frequencies with position interpolation (linear scaling).

    Position interpolation (Chen et al. 2023, "Extending Context Window of Large Language Models via
    Positional Interpolation") feeds position ``m`` as ``m / s``, so ``s`` times the trained length
    fits into the trained range of positions. The angle of pair ``t`` is ``m * theta_t``, so this
    is the same as dividing every inverse frequency by ``s``:

    .. math::
        \theta'_t = \frac{b^{-2t/d}}{s}, \qquad t = 0 \ldots d/2 - 1

    Hugging Face transformers: ``rope_type="linear"``,
    ``modeling_rope_utils._compute_linear_scaling_rope_parameters``.

    Parameters
    ----------
    head_dim : int
        Size ``d`` of one attention head: an even integer >= 2.
    base : float
        RoPE base ``b`` (``rope_theta``), > 0.
    factor : float
        Scaling factor ``s`` >= 1; ``s = 1`` gives plain RoPE.

    Returns
    -------
    ndarray, shape (head_dim // 2,)
        ``theta'_t`` for ``t = 0 .. d/2 - 1``, float64.

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 2, ``base <= 0``, or ``factor < 1``.

    Examples
    --------
    >>> print(linear_scaled_inv_freq(4, 10000.0, 2.0))  # plain RoPE: [1, 0.01]
    [0.5   0.005]
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 2 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    if not base > 0:
        raise ValueError(f"base must be > 0, got {base!r}")
    if not factor >= 1:
        raise ValueError(f"factor must be >= 1, got {factor!r}")
    inv_freq = float(base) ** (-np.arange(0, int(head_dim), 2) / head_dim)
    return inv_freq / factor


def dynamic_ntk_inv_freq(head_dim, base, factor, original_max_position, seq_len):
    r"""RoPE inverse frequencies with dynamic NTK-aware scaling (a larger base).

    NTK-aware scaling (bloc97, 2023) keeps the fast pairs and slows the slow ones by raising the
    base; its dynamic form (emozilla, 2023) picks the raise from the current length. Following
    Hugging Face transformers (``rope_type="dynamic"``,
    ``modeling_rope_utils._compute_dynamic_ntk_parameters``), with ``L`` the trained length
    (HF's ``config.max_position_embeddings``) and ``L' = max(seq_len, L)``:

    .. math::
        b' = b \left(\frac{s L'}{L} - (s - 1)\right)^{d / (d - 2)}, \qquad
        \theta'_t = b'^{-2t/d}, \qquad t = 0 \ldots d/2 - 1

    Up to the trained length (``seq_len <= L``) this is plain RoPE.

    Parameters
    ----------
    head_dim : int
        Size ``d`` of one attention head: an even integer >= 4 (``d = 2`` makes the exponent
        ``d / (d - 2)`` undefined).
    base : float
        RoPE base ``b`` (``rope_theta``), > 0.
    factor : float
        Scaling factor ``s`` >= 1.
    original_max_position : int
        Trained context length ``L`` >= 1.
    seq_len : int
        Current sequence length >= 1; lengths below ``L`` count as ``L``.

    Returns
    -------
    ndarray, shape (head_dim // 2,)
        ``theta'_t`` for ``t = 0 .. d/2 - 1``, float64.

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 4, ``base <= 0``, ``factor < 1``,
        `original_max_position` or `seq_len` is not a finite number >= 1.

    Examples
    --------
    >>> print(np.round(dynamic_ntk_inv_freq(4, 10000.0, 2.0, 8, 16), 4))  # b' = 10000 * 3^2
    [1.     0.0033]
    >>> print(dynamic_ntk_inv_freq(4, 10000.0, 2.0, 8, 5))  # shorter than L: plain RoPE
    [1.   0.01]
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 4 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 4, got {head_dim!r}")
    if not base > 0:
        raise ValueError(f"base must be > 0, got {base!r}")
    if not factor >= 1:
        raise ValueError(f"factor must be >= 1, got {factor!r}")
    if isinstance(original_max_position, (bool, np.bool_)) or not 1 <= original_max_position < math.inf:
        raise ValueError(f"original_max_position must be a finite number >= 1, got {original_max_position!r}")
    if isinstance(seq_len, (bool, np.bool_)) or not 1 <= seq_len < math.inf:
        raise ValueError(f"seq_len must be a finite number >= 1, got {seq_len!r}")
    length = max(seq_len, original_max_position)
    scale = factor * length / original_max_position - (factor - 1)
    new_base = base * scale ** (head_dim / (head_dim - 2))
    return float(new_base) ** (-np.arange(0, int(head_dim), 2) / head_dim)


def yarn_inv_freq(head_dim, base, factor, original_max_position, beta_fast=32.0, beta_slow=1.0):
    r"""YaRN: RoPE inverse frequencies ramped per pair, and the attention factor.

    YaRN (Peng et al. 2023, "YaRN: Efficient Context Window Extension of Large Language Models")
    keeps the pairs that turn many times within the trained length ``L``, interpolates (divides by
    ``s``) those that turn less than once, and ramps linearly in between. As in Hugging Face
    transformers (``rope_type="yarn"``, ``modeling_rope_utils._compute_yarn_parameters`` with
    ``mscale``/``mscale_all_dim`` unset and ``truncate=True``): the pair index at which a pair
    makes ``r`` turns in ``L`` tokens is

    .. math::
        c(r) = \frac{d \ln\!\big(L / (2\pi r)\big)}{2 \ln b},

    ``low = max(floor(c(beta_fast)), 0)``, ``high = min(ceil(c(beta_slow)), d - 1)`` (if
    ``low == high``, ``high`` becomes ``high + 0.001``), and with
    ``gamma_t = clip((t - low) / (high - low), 0, 1)``:

    .. math::
        \theta'_t = \gamma_t \frac{b^{-2t/d}}{s} + (1 - \gamma_t)\, b^{-2t/d}, \qquad
        \text{attention\_factor} = 0.1 \ln s + 1 \;(1 \text{ if } s \le 1)

    The attention factor multiplies cos and sin (so the logits by its square).

    Parameters
    ----------
    head_dim : int
        Size ``d`` of one attention head: an even integer >= 2.
    base : float
        RoPE base ``b`` (``rope_theta``), > 0 and != 1.
    factor : float
        Scaling factor ``s`` >= 1.
    original_max_position : int
        Trained context length ``L`` >= 1 (``original_max_position_embeddings``).
    beta_fast : float, optional
        Pairs making at least this many turns in ``L`` tokens are kept. Default 32.
    beta_slow : float, optional
        Pairs making at most this many turns are interpolated; ``0 < beta_slow < beta_fast``.
        Default 1.

    Returns
    -------
    inv_freq : ndarray, shape (head_dim // 2,)
        ``theta'_t`` for ``t = 0 .. d/2 - 1``, float64.
    attention_factor : float

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 2, ``base <= 0`` or ``base == 1``, ``factor < 1``,
        `original_max_position` is not a finite number >= 1, ``beta_slow <= 0`` or
        ``beta_fast <= beta_slow``.

    Examples
    --------
    >>> inv_freq, attention_factor = yarn_inv_freq(8, 10000.0, 4.0, 600)
    >>> inv_freq.tolist()  # low = 0, high = 2: ramp [0, 0.5, 1, 1] over [1, 0.1, 0.01, 0.001]
    [1.0, 0.0625, 0.0025, 0.00025]
    >>> round(attention_factor, 6)  # 0.1 ln 4 + 1
    1.138629
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 2 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    if not base > 0 or base == 1:
        raise ValueError(f"base must be > 0 and != 1, got {base!r}")
    if not factor >= 1:
        raise ValueError(f"factor must be >= 1, got {factor!r}")
    if isinstance(original_max_position, (bool, np.bool_)) or not 1 <= original_max_position < math.inf:
        raise ValueError(f"original_max_position must be a finite number >= 1, got {original_max_position!r}")
    if not beta_slow > 0:
        raise ValueError(f"beta_slow must be > 0, got {beta_slow!r}")
    if not beta_fast > beta_slow:
        raise ValueError(f"beta_fast must be > beta_slow, got {beta_fast!r} <= {beta_slow!r}")

    def correction_dim(rotations):
        turns = original_max_position / (rotations * 2 * math.pi)
        return head_dim * math.log(turns) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), head_dim - 1)
    if low == high:
        high += 0.001
    pairs = np.arange(head_dim // 2)
    ramp = np.clip((pairs - low) / (high - low), 0.0, 1.0)
    inv_freq = float(base) ** (-2.0 * pairs / head_dim)
    inv_freq = ramp * (inv_freq / factor) + (1 - ramp) * inv_freq
    attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return inv_freq, attention_factor


def llama3_inv_freq(head_dim, base, factor, low_freq_factor, high_freq_factor,
                    original_max_position):
    r"""Llama 3.1's RoPE inverse frequencies (rope_type="llama3"): a ramp in the wavelength.

    Pair ``t`` has wavelength ``lambda_t = 2 pi / theta_t`` tokens (one full turn). With the trained
    length ``L``, pairs whose wavelength is longer than ``L / low_freq_factor`` are divided by
    ``s``, those shorter than ``L / high_freq_factor`` are kept, and those in between are blended.
    As in Hugging Face transformers (``modeling_rope_utils._compute_llama3_parameters``):

    .. math::
        \theta'_t = \begin{cases}
            \theta_t / s & \lambda_t > L / \alpha \\
            \theta_t & \lambda_t < L / \beta \\
            (1 - g_t)\, \theta_t / s + g_t\, \theta_t & \text{otherwise,}
        \end{cases}
        \qquad g_t = \frac{L / \lambda_t - \alpha}{\beta - \alpha},

    with ``theta_t = b^(-2t/d)``, ``alpha = low_freq_factor`` and ``beta = high_freq_factor``. The
    blend equals the neighbouring rule at both thresholds (``g = 0`` and ``g = 1``), so the result
    is continuous in the wavelength.

    Parameters
    ----------
    head_dim : int
        Size ``d`` of one attention head: an even integer >= 2.
    base : float
        RoPE base ``b`` (``rope_theta``), > 0.
    factor : float
        Scaling factor ``s`` >= 1 (8 in Llama 3.1).
    low_freq_factor : float
        ``alpha`` > 0 (1 in Llama 3.1).
    high_freq_factor : float
        ``beta`` > ``alpha`` (4 in Llama 3.1).
    original_max_position : int
        Trained context length ``L`` >= 1 (8192 in Llama 3.1).

    Returns
    -------
    ndarray, shape (head_dim // 2,)
        ``theta'_t`` for ``t = 0 .. d/2 - 1``, float64.

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 2, ``base <= 0``, ``factor < 1``,
        ``low_freq_factor <= 0``, ``high_freq_factor <= low_freq_factor`` or
        `original_max_position` is not a finite number >= 1.

    Examples
    --------
    >>> print(np.round(llama3_inv_freq(4, 10000.0, 8.0, 1.0, 4.0, 1000), 4))  # wavelengths 6.3, 628
    [1.    0.003]
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 2 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    if not base > 0:
        raise ValueError(f"base must be > 0, got {base!r}")
    if not factor >= 1:
        raise ValueError(f"factor must be >= 1, got {factor!r}")
    if not low_freq_factor > 0:
        raise ValueError(f"low_freq_factor must be > 0, got {low_freq_factor!r}")
    if not high_freq_factor > low_freq_factor:
        raise ValueError(f"high_freq_factor must be > low_freq_factor, got {high_freq_factor!r} "
                         f"<= {low_freq_factor!r}")
    if isinstance(original_max_position, (bool, np.bool_)) or not 1 <= original_max_position < math.inf:
        raise ValueError(f"original_max_position must be a finite number >= 1, got {original_max_position!r}")
    inv_freq = float(base) ** (-np.arange(0, int(head_dim), 2) / head_dim)
    wavelen = 2 * math.pi / inv_freq
    gap = high_freq_factor - low_freq_factor
    smooth = (original_max_position / wavelen - low_freq_factor) / gap
    blended = (1 - smooth) * inv_freq / factor + smooth * inv_freq
    out = np.where(wavelen < original_max_position / high_freq_factor, inv_freq, blended)
    return np.where(wavelen > original_max_position / low_freq_factor, inv_freq / factor, out)
