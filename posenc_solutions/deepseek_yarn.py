"""DeepSeek's YaRN: ``mscale`` and ``mscale_all_dim`` move YaRN's attention temperature from the
rotated dimensions to the whole logit.

YaRN multiplies cos and sin by ``0.1 ln s + 1``: the rotated parts of a query and a key each grow by
that, so their dot product by its square, and the logits get sharper for a context ``s`` times
longer. DeepSeek-V2 and V3 rotate only 64 of each head's 192 query-key dimensions (their "decoupled"
RoPE), so that temperature would miss two thirds of the logit. Their config sets
``mscale = mscale_all_dim``: the factor on cos and sin becomes 1, and the softmax scale
``1/sqrt(d_qk)`` is multiplied by the square of ``0.1 * mscale_all_dim * ln s + 1`` instead, for
every dimension.

Hugging Face transformers: ``modeling_rope_utils._compute_yarn_parameters`` (the factor on cos and
sin) and ``models/deepseek_v3/modeling_deepseek_v3.py``, ``yarn_get_mscale`` and
``yarn_apply_mscale`` (the softmax scale). Checked against transformers 5.24.0 in
``tests/system/test_hf_agreement.py``.
"""

import math

import numpy as np


def yarn_mscale(scale, mscale=1.0):
    r"""YaRN's temperature for a context extended ``s`` times: 
    ``0.1 m ln s + 1``, and 1 if ``s <= 1``.

    .. math::
        \mu(s, m) = \begin{cases} 0.1\, m \ln s + 1 & s > 1 \\ 1 & s \le 1 \end{cases}

    Parameters
    ----------
    scale : float
        ``s`` > 0, the extension factor.
    mscale : float, optional
        ``m``, default 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``scale <= 0``.

    Examples
    --------
    >>> round(yarn_mscale(40.0), 6)  # DeepSeek-V3: 0.1 ln 40 + 1
    1.368888
    >>> yarn_mscale(1.0, 0.707)
    1.0
    """
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def deepseek_yarn_scales(factor, mscale, mscale_all_dim, qk_head_dim):
    r"""DeepSeek's two YaRN temperatures: the factor on cos and sin, and the softmax scale.

    As Hugging Face transformers computes them (``mscale`` and ``mscale_all_dim`` absent or 0 count
    as unset):

    .. math::
        a = \begin{cases} \mu(s, m) / \mu(s, m_{all}) & m \text{ and } m_{all} \text{ set} \\
                          \mu(s, 1) & \text{otherwise} \end{cases}
        \qquad
        \text{softmax\_scale} = \frac{1}{\sqrt{d_{qk}}} \cdot
            \begin{cases} \mu(s, m_{all})^2 & m_{all} \text{ set} \\
                          1 & \text{otherwise} \end{cases}

    with :math:`\mu` = :func:`yarn_mscale`. DeepSeek's own code divides by :math:`\mu(s, m_{all})`
    whenever ``m`` is set; HF falls back to :math:`\mu(s, 1)` when ``m_all`` is unset. The two
    differ only for ``m`` set and ``m_all`` unset, which no released checkpoint uses.

    Parameters
    ----------
    factor : float
        ``s`` > 0 (``rope_parameters["factor"]``).
    mscale, mscale_all_dim : float or None
        ``m`` and ``m_all`` (>= 0 or None).
    qk_head_dim : int
        ``d_qk`` >= 1: all the query-key dimensions of a head, rotated and not (192 in DeepSeek-V3).

    Returns
    -------
    cos_sin_factor : float
        ``a``: multiplies cos and sin of the rotated dimensions.
    softmax_scale : float
        Multiplies every logit ``q . k``.

    Raises
    ------
    ValueError
        If ``factor <= 0``, `mscale` or `mscale_all_dim` is negative, or `qk_head_dim` is not an
        integer >= 1.

    Examples
    --------
    DeepSeek-V3 (``factor`` 40, ``mscale = mscale_all_dim = 1``, ``d_qk = 128 + 64``):

    >>> a, scale = deepseek_yarn_scales(40.0, 1.0, 1.0, 192)
    >>> a, round(scale * math.sqrt(192), 6)  # 1.368888 ** 2
    (1.0, 1.873854)
    """
    if not factor > 0:
        raise ValueError(f"factor must be > 0, got {factor!r}")
    for name, value in (("mscale", mscale), ("mscale_all_dim", mscale_all_dim)):
        if value is not None and not value >= 0:
            raise ValueError(f"{name} must be >= 0 or None, got {value!r}")
    if (isinstance(qk_head_dim, (bool, np.bool_))
            or not isinstance(qk_head_dim, (int, float, np.integer, np.floating))
            or qk_head_dim % 1 != 0 or qk_head_dim < 1):
        raise ValueError(f"qk_head_dim must be an integer >= 1, got {qk_head_dim!r}")
    def mu(m):  # yarn_mscale(factor, m)
        return 0.1 * m * math.log(factor) + 1.0 if factor > 1 else 1.0

    if mscale and mscale_all_dim:
        cos_sin_factor = mu(mscale) / mu(mscale_all_dim)
    else:
        cos_sin_factor = mu(1.0)
    softmax_scale = qk_head_dim ** -0.5
    if mscale_all_dim:
        softmax_scale *= mu(mscale_all_dim) ** 2
    return float(cos_sin_factor), float(softmax_scale)
