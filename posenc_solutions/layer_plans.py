"""Per-layer position schemes of 2025 models: Gemma 3's sliding and full attention layers, each with
its own RoPE (Gemma Team 2025, "Gemma 3 Technical Report"), and Llama 4's iRoPE: RoPE layers with
chunked attention interleaved with NoPE layers whose queries are scaled with the position (Meta
2025, "The Llama 4 herd"; the scaling is Nakanishi 2025, "Scalable-Softmax Is Superior for
Attention").

As Hugging Face transformers 5.24.0 builds them: ``Gemma3TextConfig.__post_init__``
(``layer_types``), ``Gemma3TextConfig.convert_rope_params_to_dict`` and ``Gemma3RotaryEmbedding``
(one set of inverse frequencies per layer type, ``rope_parameters["sliding_attention"]`` and
``rope_parameters["full_attention"]``), ``Llama4TextConfig.__post_init__`` (``no_rope_layers``),
``masking_utils.chunked_causal_mask_function`` and ``Llama4TextAttention.forward`` (temperature
tuning); checked against them in a scratch venv with torch 2.13.
"""

import math

import numpy as np


def gemma3_layer_types(num_layers, sliding_window_pattern):
    """Gemma 3's attention type of each layer: every ``pattern``-th layer is full attention.

    Layer ``i`` (from 0) is ``"full_attention"`` when ``(i + 1) % pattern == 0`` and
    ``"sliding_attention"`` (a local window, 1024 tokens in Gemma 3) otherwise, as
    ``Gemma3TextConfig`` builds ``layer_types`` from the legacy ``sliding_window_pattern`` (6 in
    Gemma 3: five local layers, then one global). A pattern of 1 makes every layer global; a
    pattern larger than `num_layers` none.

    Parameters
    ----------
    num_layers : int
        Number of decoder layers, >= 1.
    sliding_window_pattern : int
        Period of the pattern, >= 1.

    Returns
    -------
    list of str, length num_layers

    Raises
    ------
    ValueError
        If `num_layers` or `sliding_window_pattern` is not an integer >= 1.

    Examples
    --------
    >>> gemma3_layer_types(4, 2)
    ['sliding_attention', 'full_attention', 'sliding_attention', 'full_attention']
    >>> gemma3_layer_types(7, 6).count("full_attention")
    1
    """
    for name, value in (("num_layers", num_layers),
                        ("sliding_window_pattern", sliding_window_pattern)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    pattern = int(sliding_window_pattern)
    return ["full_attention" if (layer + 1) % pattern == 0 else "sliding_attention"
            for layer in range(int(num_layers))]


def gemma3_layer_inv_freq(layer_type, head_dim, local_base, global_base, global_factor=1.0):
    r"""The RoPE inverse frequencies of one Gemma 3 layer, by its attention type.

    Sliding layers use plain RoPE with the local base (``rope_local_base_freq``, 10 000); full
    layers use the global base (``rope_theta``, 1 000 000) with linear scaling (position
    interpolation) by ``s`` (8 in Gemma 3 4B, 12B and 27B; 1 in 1B):

    .. math::
        \theta_t = \begin{cases}
            b_{\text{local}}^{-2t/d} & \text{sliding\_attention} \\
            b_{\text{global}}^{-2t/d} / s & \text{full\_attention}
        \end{cases} \qquad t = 0 \ldots d/2 - 1

    In Hugging Face transformers the two sets are ``config.rope_parameters["sliding_attention"]``
    (``rope_type="default"``) and ``config.rope_parameters["full_attention"]``
    (``rope_type="linear"``, ``factor=s``); a legacy ``rope_scaling`` goes to the full layers only.

    Parameters
    ----------
    layer_type : str
        ``"sliding_attention"`` or ``"full_attention"``.
    head_dim : int
        Size ``d`` of one attention head: an even integer >= 2.
    local_base : float
        ``b_local`` > 0.
    global_base : float
        ``b_global`` > 0.
    global_factor : float, optional
        Linear scaling factor ``s`` >= 1 of the full layers. Default 1.

    Returns
    -------
    ndarray, shape (head_dim // 2,)
        ``theta_t``, float64.

    Raises
    ------
    ValueError
        If `layer_type` is neither of the two, `head_dim` is not an even integer >= 2, a base is
        not a finite number > 0, or `global_factor` is not a finite number >= 1.

    Examples
    --------
    >>> gemma3_layer_inv_freq("sliding_attention", 4, 10000.0, 1e6, 8.0).tolist()
    [1.0, 0.01]
    >>> gemma3_layer_inv_freq("full_attention", 4, 10000.0, 1e6, 8.0).tolist()  # [1, 0.001] / 8
    [0.125, 0.000125]
    """
    if not isinstance(layer_type, str) or layer_type not in ("sliding_attention", "full_attention"):
        raise ValueError(f"layer_type must be 'sliding_attention' or 'full_attention', got "
                         f"{layer_type!r}")
    if isinstance(head_dim, (bool, np.bool_)) or not isinstance(head_dim, (int, np.integer)) \
            or head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    for name, value in (("local_base", local_base), ("global_base", global_base)):
        if isinstance(value, (bool, np.bool_)) \
                or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not value > 0 or not math.isfinite(value):
            raise ValueError(f"{name} must be a number > 0, got {value!r}")
    if isinstance(global_factor, (bool, np.bool_)) \
            or not isinstance(global_factor, (int, float, np.integer, np.floating)) \
            or not global_factor >= 1 or not math.isfinite(global_factor):
        raise ValueError(f"global_factor must be a number >= 1, got {global_factor!r}")
    if layer_type == "sliding_attention":
        base, factor = float(local_base), 1.0
    else:
        base, factor = float(global_base), float(global_factor)
    return base ** (-np.arange(0, int(head_dim), 2) / int(head_dim)) / factor


def irope_uses_rope(num_layers, no_rope_layer_interval):
    """Llama 4's iRoPE plan: which layers apply RoPE (True) and which are NoPE layers (False).

    Layer ``i`` (from 0) is a NoPE layer when ``(i + 1) % interval == 0``: every
    ``interval``-th layer (4 in Llama 4), the last of each group. This is Hugging Face's
    ``Llama4TextConfig.no_rope_layers`` (despite its name, 1 there means "uses RoPE"); the RoPE
    layers are the ``"chunked_attention"`` layers of its ``layer_types``, the NoPE layers attend to
    the whole context (``"full_attention"``).

    Parameters
    ----------
    num_layers : int
        Number of decoder layers, >= 1.
    no_rope_layer_interval : int
        >= 1; 1 makes every layer NoPE.

    Returns
    -------
    ndarray of bool, shape (num_layers,)

    Raises
    ------
    ValueError
        If `num_layers` or `no_rope_layer_interval` is not an integer >= 1.

    Examples
    --------
    >>> print(irope_uses_rope(8, 4))
    [ True  True  True False  True  True  True False]
    """
    for name, value in (("num_layers", num_layers),
                        ("no_rope_layer_interval", no_rope_layer_interval)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    return (np.arange(int(num_layers)) + 1) % int(no_rope_layer_interval) != 0


def chunked_causal_mask(query_positions, key_positions, chunk_size):
    r"""Llama 4's chunked attention mask (its RoPE layers): causal, and only within the chunk.

    .. math::
        M_{ij} = [\, k_j \le q_i \,] \wedge
                 [\, \lfloor q_i / c \rfloor = \lfloor k_j / c \rfloor \,]

    Unlike a sliding window, the first query of a chunk sees only itself, however near the keys
    just before it (Hugging Face's ``chunked_causal_mask_function``: ``causal_mask_function`` and
    ``chunked_overlay``, 8192 in Llama 4).

    Parameters
    ----------
    query_positions : array_like of int, shape (Lq,)
        Positions ``q_i`` of the queries (integer values; floats such as ``3.0`` are accepted).
    key_positions : array_like of int, shape (Lk,)
        Positions ``k_j`` of the keys.
    chunk_size : int
        ``c`` >= 1: chunk ``n`` holds the positions ``n c ... (n + 1) c - 1``.

    Returns
    -------
    ndarray of bool, shape (Lq, Lk)
        True where the query may attend to the key.

    Raises
    ------
    ValueError
        If a position array is not 1-D or holds a non-integer, or `chunk_size` is not an integer
        >= 1.

    Examples
    --------
    >>> print(chunked_causal_mask([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], 3).astype(int))
    [[1 0 0 0 0]
     [1 1 0 0 0]
     [1 1 1 0 0]
     [0 0 0 1 0]
     [0 0 0 1 1]]
    """
    if isinstance(chunk_size, (bool, np.bool_)) or not isinstance(chunk_size, (int, np.integer)):
        raise ValueError(f"chunk_size must be an integer, got {chunk_size!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    checked = []
    for name, value in (("query_positions", query_positions), ("key_positions", key_positions)):
        positions = np.asarray(value)
        if positions.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {positions.shape}")
        if positions.dtype.kind not in "iuf" or not np.all(np.isfinite(positions)) \
                or np.any(positions != np.round(positions)):
            raise ValueError(f"{name} must hold integers, got {value!r}")
        checked.append(positions.astype(np.int64))
    queries, keys = checked
    causal = keys[None, :] <= queries[:, None]
    same_chunk = keys[None, :] // int(chunk_size) == queries[:, None] // int(chunk_size)
    return causal & same_chunk


def nope_attention_scale(positions, floor_scale, attn_scale):
    r"""Llama 4's attention temperature tuning: the factor its NoPE layers multiply queries by.

    .. math::
        \tau(p) = \ln\!\Big(1 + \Big\lfloor \frac{p + 1}{f} \Big\rfloor\Big)\, \alpha + 1

    with ``f = floor_scale`` (8192) and ``alpha = attn_scale`` (0.1) in Llama 4
    (``Llama4TextAttention.forward`` with ``attn_temperature_tuning``). It is 1 for the first
    ``f - 1`` positions and grows like ``log`` of the position, so the logits of a long context stay
    sharp. HF takes the positions as ``arange(q_len) + past_seen_tokens`` (the cache length), not
    from ``position_ids``: with left padding they count the pad tokens too.

    Parameters
    ----------
    positions : array_like of int, any shape
        Positions ``p`` >= 0 (integer values; floats such as ``3.0`` are accepted).
    floor_scale : float
        ``f`` > 0, a finite number: the scale grows by one step every ``f`` positions.
    attn_scale : float
        ``alpha``, a finite number: the weight of the logarithm.

    Returns
    -------
    ndarray of float64, the shape of `positions`

    Raises
    ------
    ValueError
        If `positions` holds a non-integer or a negative value, ``floor_scale <= 0``, or a scale is
        not a finite number.

    Examples
    --------
    >>> np.round(nope_attention_scale([0, 2, 3, 7], 4, 0.1), 6).tolist()  # ln(1 + [0, 0, 1, 2])
    [1.0, 1.0, 1.069315, 1.109861]
    """
    for name, value in (("floor_scale", floor_scale), ("attn_scale", attn_scale)):
        if isinstance(value, (bool, np.bool_)) \
                or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not floor_scale > 0:
        raise ValueError(f"floor_scale must be > 0, got {floor_scale!r}")
    array = np.asarray(positions)
    if array.dtype.kind not in "iuf" or not np.all(np.isfinite(array)) \
            or np.any(array != np.round(array)):
        raise ValueError(f"positions must hold integers, got {positions!r}")
    if np.any(array < 0):
        raise ValueError(f"positions must be >= 0, got {positions!r}")
    array = array.astype(np.float64)
    return np.log1p(np.floor((array + 1.0) / float(floor_scale))) * float(attn_scale) + 1.0
