"""Reading a model's ``config.json``: which RoPE it uses, and Llama 3.1's three frequency bands.

A checkpoint states its position scheme in a few keys of ``config.json``, spelled three ways over
the years: ``"rope_scaling": {"type": ...}`` (2023), ``"rope_scaling": {"rope_type": ...}`` (2024)
and ``"rope_parameters": {...}`` with ``rope_theta`` inside (transformers 5). Hugging Face
transformers reads all three into one dict, ``config.rope_parameters``
(``modeling_rope_utils.RotaryEmbeddingConfigMixin``: ``convert_rope_params_to_dict`` and
``standardize_rope_params``), then picks the function of its ``rope_type`` from
``ROPE_INIT_FUNCTIONS``. This module does the same for a flat (not per-layer) config, and is checked
against transformers 5.24.0 in ``tests/system/test_hf_agreement.py``.
"""

import math

import numpy as np

from .longrope import longrope_inv_freq
from .rope_scaling import dynamic_ntk_inv_freq, linear_scaled_inv_freq, llama3_inv_freq, yarn_inv_freq

#: The ``rope_type`` values this module reads, and the keys each needs in ``rope_parameters``
#: beyond the pretraining length, which :func:`rope_parameters_from_config` always finds for the
#: types that need it, or refuses.
ROPE_TYPES = {
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor",),
    "yarn": (),  # factor: the settings', else max_position_embeddings / the pretraining length
    "longrope": ("short_factor", "long_factor"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor"),
}


def rope_parameters_from_config(config):
    r"""The RoPE settings of a ``config.json``, in transformers 5's one spelling.

    The rules, in order (those of HF's ``convert_rope_params_to_dict`` and
    ``standardize_rope_params`` for a flat config):

    1. The settings dict is ``config["rope_scaling"]`` if present and not empty (the older key),
       else ``config["rope_parameters"]``, else ``{}``. It is copied: `config` is not modified.
    2. ``rope_type`` is the dict's ``rope_type``, else its older ``type``, else ``"default"``.
    3. ``rope_theta`` is the dict's, else ``config["rope_theta"]``, else ``10000.0``.
    4. ``partial_rotary_factor``: the dict's, else ``config["partial_rotary_factor"]`` if present
       (absent means 1: every dimension rotates).
    5. For ``llama3``, ``yarn`` and ``longrope``, ``original_max_position_embeddings`` (the
       pretraining length) is ``config["original_max_position_embeddings"]`` if the config has that
       key at top level (Phi-3 keeps it there; it wins over the dict's), else the dict's, else
       ``config["max_position_embeddings"]``.

    Every other key of the dict is kept as it is.

    Parameters
    ----------
    config : dict
        A model's ``config.json``, as ``json.load`` reads it.

    Returns
    -------
    dict
        A new dict with at least ``rope_type`` and ``rope_theta``.

    Raises
    ------
    ValueError
        If `config` is not a dict, if its settings are not a dict, if ``rope_type`` is not one of
        ``ROPE_TYPES`` (``"default"``, ``"linear"``, ``"dynamic"``, ``"yarn"``, ``"longrope"``,
        ``"llama3"``), or if a length the type needs is missing from the settings and from `config`.

    Examples
    --------
    Llama 3.1 8B's ``config.json`` (transformers 4 spelling):

    >>> llama31 = {"rope_theta": 500000.0, "max_position_embeddings": 131072,
    ...            "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    ...                             "original_max_position_embeddings": 8192,
    ...                             "rope_type": "llama3"}}
    >>> settings = rope_parameters_from_config(llama31)
    >>> settings["rope_type"], settings["rope_theta"], settings["original_max_position_embeddings"]
    ('llama3', 500000.0, 8192)
    >>> rope_parameters_from_config({"rope_scaling": {"type": "linear", "factor": 2.0}})
    {'type': 'linear', 'factor': 2.0, 'rope_type': 'linear', 'rope_theta': 10000.0}
    """
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict (a config.json as json.load reads it), got {type(config).__name__}")
    settings = config.get("rope_scaling") or config.get("rope_parameters") or {}
    if not isinstance(settings, dict):
        raise ValueError(f"the config's rope_scaling or rope_parameters must be a dict, got {settings!r}")
    settings = dict(settings)
    settings.setdefault("rope_type", settings.get("type", "default"))
    known = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
    if settings["rope_type"] not in known:
        raise ValueError(f"rope_type must be one of {', '.join(known)}; got {settings['rope_type']!r}")
    settings.setdefault("rope_theta", config.get("rope_theta", 10000.0))
    if "partial_rotary_factor" in config:
        settings.setdefault("partial_rotary_factor", config["partial_rotary_factor"])
    if settings["rope_type"] in ("llama3", "yarn", "longrope"):  # they need the pretraining length
        if "original_max_position_embeddings" in config:
            settings["original_max_position_embeddings"] = config["original_max_position_embeddings"]
        elif "original_max_position_embeddings" not in settings:
            if "max_position_embeddings" not in config:
                raise ValueError(f"rope_type {settings['rope_type']!r} needs original_max_position_embeddings "
                                 "(or max_position_embeddings), and the config has neither")
            settings["original_max_position_embeddings"] = config["max_position_embeddings"]
    return settings


def head_dim_from_config(config):
    r"""The head dimension of a ``config.json``: ``head_dim``, else
    ``hidden_size // num_attention_heads``.

    Parameters
    ----------
    config : dict
        A model's ``config.json``.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If `config` has no (non-null) ``head_dim`` and lacks ``hidden_size`` or
        ``num_attention_heads``.

    Examples
    --------
    >>> head_dim_from_config({"hidden_size": 4096, "num_attention_heads": 32})
    128
    >>> head_dim_from_config({"hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256})
    256
    """
    if config.get("head_dim"):
        return int(config["head_dim"])
    if "hidden_size" not in config or "num_attention_heads" not in config:
        raise ValueError("the config has no head_dim, and no hidden_size and num_attention_heads to divide")
    return int(config["hidden_size"]) // int(config["num_attention_heads"])


def inv_freq_from_config(config, seq_len=None):
    r"""The RoPE inverse frequencies and attention factor a ``config.json`` asks for.

    Reads the settings with :func:`rope_parameters_from_config`, rotates the first
    ``rotary_dim = int(head_dim * partial_rotary_factor)`` dimensions, and calls the rule of its
    ``rope_type``, as ``ROPE_INIT_FUNCTIONS[rope_type](config, device, seq_len)`` does in
    transformers 5:

    - ``default``: ``b^(-2t/rotary_dim)``; attention factor 1;
    - ``linear``: :func:`~posenc_solutions.rope_scaling.linear_scaled_inv_freq`;
    - ``dynamic``: :func:`~posenc_solutions.rope_scaling.dynamic_ntk_inv_freq`, with the config's
      ``max_position_embeddings`` as the trained length and `seq_len` (``None``: that length);
    - ``yarn``: :func:`~posenc_solutions.rope_scaling.yarn_inv_freq` (no ``mscale`` keys),
      ``factor`` defaulting to ``max_position_embeddings / original_max_position_embeddings``, and
      an ``attention_factor`` key, if given, replacing the computed one;
    - ``longrope``: :func:`~posenc_solutions.longrope.longrope_inv_freq`;
    - ``llama3``: :func:`~posenc_solutions.rope_scaling.llama3_inv_freq`; attention factor 1.

    Parameters
    ----------
    config : dict
        A model's ``config.json``.
    seq_len : int, optional
        The current sequence length, for ``dynamic`` and ``longrope``.

    Returns
    -------
    inv_freq : ndarray, shape (rotary_dim // 2,)
        float64.
    attention_factor : float
        What cos and sin are multiplied by.

    Raises
    ------
    ValueError
        As :func:`rope_parameters_from_config` and :func:`head_dim_from_config`, if a key the type
        needs is missing from `config`, if the ``yarn`` settings have ``mscale`` (DeepSeek's variant:
        :mod:`posenc_solutions.deepseek_yarn`), and as the rule of the type.

    Examples
    --------
    >>> inv_freq, factor = inv_freq_from_config({"hidden_size": 8, "num_attention_heads": 2,
    ...     "rope_scaling": {"rope_type": "linear", "factor": 4.0}})
    >>> inv_freq.tolist(), factor
    ([0.25, 0.0025], 1.0)
    """
    settings = rope_parameters_from_config(config)
    rope_type = settings["rope_type"]
    missing = [key for key in ROPE_TYPES[rope_type] if key not in settings]
    if missing:
        raise ValueError(f"rope_type {rope_type!r} needs {', '.join(missing)} in the config's rope settings")
    head_dim = head_dim_from_config(config)
    rotary_dim = int(head_dim * settings.get("partial_rotary_factor", 1.0))
    base = settings["rope_theta"]
    if rope_type == "default":
        if rotary_dim < 2 or rotary_dim % 2:
            raise ValueError(f"the rotary dimension must be an even integer >= 2, got {rotary_dim}")
        return float(base) ** (-np.arange(0, rotary_dim, 2) / rotary_dim), 1.0
    if rope_type == "linear":
        return linear_scaled_inv_freq(rotary_dim, base, settings["factor"]), 1.0
    if rope_type == "dynamic":
        trained = config.get("max_position_embeddings")
        if trained is None:
            raise ValueError("rope_type 'dynamic' needs max_position_embeddings in the config")
        return dynamic_ntk_inv_freq(rotary_dim, base, settings["factor"], trained,
                                    trained if seq_len is None else seq_len), 1.0
    if rope_type == "yarn":
        if settings.get("mscale") or settings.get("mscale_all_dim"):
            raise ValueError("yarn with mscale or mscale_all_dim is DeepSeek's variant: use "
                             "posenc_solutions.deepseek_yarn")
        original = settings["original_max_position_embeddings"]
        factor = settings.get("factor")
        if factor is None:
            if "max_position_embeddings" not in config:
                raise ValueError("rope_type 'yarn' needs factor in the config's rope settings, or "
                                 "max_position_embeddings to compute it")
            factor = config["max_position_embeddings"] / original
        inv_freq, attention_factor = yarn_inv_freq(rotary_dim, base, factor, original,
                                                   settings.get("beta_fast") or 32.0,
                                                   settings.get("beta_slow") or 1.0)
        if settings.get("attention_factor") is not None:
            attention_factor = float(settings["attention_factor"])
        return inv_freq, attention_factor
    if rope_type == "longrope":
        return longrope_inv_freq(rotary_dim, base, settings["short_factor"], settings["long_factor"],
                                 settings["original_max_position_embeddings"],
                                 config.get("max_position_embeddings"), seq_len,
                                 factor=settings.get("factor"),
                                 attention_factor=settings.get("attention_factor"))
    return llama3_inv_freq(rotary_dim, base, settings["factor"], settings["low_freq_factor"],
                           settings["high_freq_factor"], settings["original_max_position_embeddings"]), 1.0


def llama3_frequency_bands(head_dim, base, low_freq_factor, high_freq_factor,
                           original_max_position):
    r"""Which of Llama 3.1's three rules each RoPE pair follows: 0 kept, 1 blended, 2 divided.

    Pair ``t`` turns once every ``lambda_t = 2 pi / theta_t`` tokens, ``theta_t = b^(-2t/d)``. With
    the pretraining length ``L``, ``rope_type="llama3"`` (HF ``_compute_llama3_parameters``) keeps
    the pairs with ``lambda_t < L / high_freq_factor`` (band 0: they turn many times within ``L``),
    divides by ``factor`` those with ``lambda_t > L / low_freq_factor`` (band 2: less than
    ``low_freq_factor`` turns), and blends the rest (band 1), including both thresholds:

    .. math::
        \text{band}_t = \begin{cases}
            0 & \lambda_t < L / \beta \\
            2 & \lambda_t > L / \alpha \\
            1 & \text{otherwise}
        \end{cases}

    Parameters
    ----------
    head_dim : int
        ``d``, an even integer >= 2.
    base : float
        ``b`` (``rope_theta``), > 0.
    low_freq_factor : float
        ``alpha`` > 0.
    high_freq_factor : float
        ``beta`` > ``alpha``.
    original_max_position : float
        ``L`` > 0.

    Returns
    -------
    ndarray of int64, shape (head_dim // 2,)
        Non-decreasing in ``t`` when ``base > 1`` (the wavelengths grow with ``t``).

    Raises
    ------
    ValueError
        If `head_dim` is not an even integer >= 2, ``base <= 0``, ``low_freq_factor <= 0``,
        ``high_freq_factor <= low_freq_factor`` or ``original_max_position <= 0``.

    Examples
    --------
    Llama 3.1 (d = 128, b = 500000, alpha = 1, beta = 4, L = 8192): the wavelength passes 2048
    tokens after pair 28, and 8192 after pair 34.

    >>> bands = llama3_frequency_bands(128, 500000.0, 1.0, 4.0, 8192)
    >>> np.bincount(bands).tolist()
    [29, 6, 29]
    >>> llama3_frequency_bands(4, 100.0, 1.0, 2.0, 20 * math.pi).tolist()  # wavelengths 2 pi, 20 pi
    [0, 1]
    """
    if (isinstance(head_dim, (bool, np.bool_))
            or not isinstance(head_dim, (int, float, np.integer, np.floating)) or head_dim % 1 != 0
            or head_dim < 2 or head_dim % 2):
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    if not base > 0:
        raise ValueError(f"base must be > 0, got {base!r}")
    if not low_freq_factor > 0:
        raise ValueError(f"low_freq_factor must be > 0, got {low_freq_factor!r}")
    if not high_freq_factor > low_freq_factor:
        raise ValueError(f"high_freq_factor must be > low_freq_factor, got {high_freq_factor!r} "
                         f"<= {low_freq_factor!r}")
    if not original_max_position > 0:
        raise ValueError(f"original_max_position must be > 0, got {original_max_position!r}")
    inv_freq = float(base) ** (-np.arange(0, int(head_dim), 2) / head_dim)
    wavelength = 2 * math.pi / inv_freq
    bands = np.ones(inv_freq.shape, dtype=np.int64)
    bands[wavelength < original_max_position / high_freq_factor] = 0
    bands[wavelength > original_max_position / low_freq_factor] = 2
    return bands
