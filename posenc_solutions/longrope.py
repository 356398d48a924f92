"""LongRoPE (Ding et al. 2024, "LongRoPE: Extending LLM Context Window Beyond 2 Million Tokens"), as
Phi-3 and later ship it: a searched factor per frequency, one set for short sequences and one for
long, chosen by the current length, and an attention factor from the extension ratio.

Hugging Face transformers: ``rope_type="longrope"``,
``modeling_rope_utils._compute_longrope_parameters`` (the factors and the attention factor) and
``dynamic_rope_update``'s ``longrope_frequency_update`` (the switch at run time). Checked against
transformers 5.24.0 in ``tests/system/test_hf_agreement.py``.
"""

import math

import numpy as np


def longrope_attention_factor(factor, original_max_position):
    r"""LongRoPE's default attention factor: what cos and sin are multiplied by.

    With the extension ratio ``s`` (``max_position_embeddings / original_max_position_embeddings``)
    and the pretraining length ``L``:

    .. math::
        a = \sqrt{1 + \frac{\ln s}{\ln L}} \quad (s > 1), \qquad a = 1 \quad (s \le 1)

    The logits, products of a rotated query and key, are multiplied by ``a^2``: attention stays as
    sharp over ``s L`` tokens as it was over ``L``.

    Parameters
    ----------
    factor : float
        ``s`` > 0.
    original_max_position : float
        ``L`` > 1 (``ln L`` divides).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``factor <= 0`` or ``original_max_position <= 1``.

    Examples
    --------
    Phi-3-mini-128k: 131072 / 4096 = 32, so ``a = sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12)``.

    >>> round(longrope_attention_factor(32.0, 4096), 6)
    1.190238
    >>> longrope_attention_factor(1.0, 4096)
    1.0
    """
    if not factor > 0:
        raise ValueError(f"factor must be > 0, got {factor!r}")
    if not original_max_position > 1:
        raise ValueError(f"original_max_position must be > 1, got {original_max_position!r}")
    if factor <= 1:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(original_max_position))


def longrope_inv_freq(head_dim, base, short_factor, long_factor, original_max_position,
                      max_position, seq_len, *, factor=None, attention_factor=None):
    r"""LongRoPE's inverse frequencies for a sequence of `seq_len` tokens, and its attention factor.

    Pair ``t`` of the plain RoPE frequencies ``b^(-2t/d)`` is divided by its own factor ``f_t``:
    from `long_factor` once the sequence is longer than the pretraining length ``L``, from
    `short_factor` up to ``L`` (and when no length is given, as at a model's start):

    .. math::
        \theta'_t = \frac{1}{f_t\, b^{2t/d}}, \qquad
        f = \begin{cases} \text{long\_factor} & \text{seq\_len} > L \\
                          \text{short\_factor} & \text{otherwise} \end{cases}

    The attention factor is :func:`longrope_attention_factor` of ``s = max_position / L`` (`factor`,
    if given, replaces ``s``; `attention_factor`, if given, replaces the result), whatever the
    length.

    Parameters
    ----------
    head_dim : int
        ``d``: the rotated dimensions, an even integer >= 2.
    base : float
        ``b`` (``rope_theta``), > 0.
    short_factor, long_factor : array_like, shape (head_dim // 2,)
        One factor > 0 per pair.
    original_max_position : int
        ``L`` >= 2, the pretraining length (``original_max_position_embeddings``).
    max_position : int or None
        The extended length (``max_position_embeddings``), >= 1; may be None only if `factor` is
        given.
    seq_len : int or None
        The current sequence length (>= 1), or None.
    factor : float, optional
        The extension ratio ``s`` > 0, if the config states it.
    attention_factor : float, optional
        The attention factor > 0, if the config states it.

    Returns
    -------
    inv_freq : ndarray, shape (head_dim // 2,)
        float64.
    attention_factor : float

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 2, ``base <= 0``, a factor list does not have shape
        ``(head_dim // 2,)`` or has an entry <= 0, ``original_max_position`` is not an integer >= 2,
        `factor` is not given and `max_position` is None or not a finite number >= 1,
        `seq_len` is not None and not a finite number >= 1,
        or a given `factor` or `attention_factor` is not > 0.

    Examples
    --------
    >>> short, long = [1.0, 2.0], [4.0, 8.0]
    >>> inv_freq, a = longrope_inv_freq(4, 10000.0, short, long, 4096, 131072, 4096)
    >>> inv_freq.tolist()  # 4096 tokens is not longer than L: the short factors
    [1.0, 0.005]
    >>> longrope_inv_freq(4, 10000.0, short, long, 4096, 131072, 4097)[0].tolist()
    [0.25, 0.00125]
    >>> round(a, 6)
    1.190238
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 2 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    if not base > 0:
        raise ValueError(f"base must be > 0, got {base!r}")
    pairs = int(head_dim) // 2
    factors = {}
    for name, value in (("short_factor", short_factor), ("long_factor", long_factor)):
        value = np.asarray(value, dtype=np.float64)
        if value.shape != (pairs,):
            raise ValueError(f"{name} must have shape (head_dim // 2,) = ({pairs},), got {value.shape}")
        if not np.all(value > 0):
            raise ValueError(f"{name} must be > 0 everywhere, got {value.tolist()}")
        factors[name] = value
    if (isinstance(original_max_position, (bool, np.bool_))
            or not isinstance(original_max_position, (int, float, np.integer, np.floating))
            or original_max_position % 1 != 0 or original_max_position < 2):
        raise ValueError(f"original_max_position must be an integer >= 2, got {original_max_position!r}")
    if factor is None:
        if (max_position is None or isinstance(max_position, (bool, np.bool_))
                or not 1 <= max_position < math.inf):
            raise ValueError(f"max_position must be a finite number >= 1 (or factor given), "
                             f"got {max_position!r}")
        factor = max_position / original_max_position
    elif not factor > 0:
        raise ValueError(f"factor must be > 0, got {factor!r}")
    if seq_len is not None and (isinstance(seq_len, (bool, np.bool_)) or not 1 <= seq_len < math.inf):
        raise ValueError(f"seq_len must be None or a finite number >= 1, got {seq_len!r}")
    if attention_factor is None:  # as longrope_attention_factor
        attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max_position)) if factor > 1 else 1.0
    elif not attention_factor > 0:
        raise ValueError(f"attention_factor must be > 0, got {attention_factor!r}")
    chosen = factors["long_factor" if seq_len is not None and seq_len > original_max_position else "short_factor"]
    inv_freq = 1.0 / (chosen * float(base) ** (np.arange(0, int(head_dim), 2) / head_dim))
    return inv_freq, float(attention_factor)
