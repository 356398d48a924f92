"""Qwen2-VL's multimodal RoPE, M-RoPE (Wang et al. 2024, "Qwen2-VL: Enhancing Vision-Language
Model's Perception of the World at Any Resolution"): three position ids per token (temporal,
height, width) and a RoPE whose frequency pairs are split into three sections, one per id.

As Hugging Face transformers' ``models/qwen2_vl/modeling_qwen2_vl.py``: the ids of
``Qwen2VLModel.get_rope_index`` and the rotation of ``Qwen2VLRotaryEmbedding`` (its
``recomposition_frequencies``) with ``apply_rotary_pos_emb``, which is what
``apply_multimodal_rotary_pos_emb`` computed in transformers 4.x (checked against transformers
5.24.0).
"""

import numpy as np


def mrope_position_ids(segments):
    r"""M-RoPE's position ids (temporal, height, width) for a sequence of text and images.

    The segments follow one another. A segment starts at

    .. math::
        s = \begin{cases} 0 & \text{first segment} \\
                          1 + \max(\text{all ids so far}) & \text{otherwise.} \end{cases}

    Text token ``i`` of a segment (``i = 0 .. n-1``) gets ``s + i`` in all three rows, as 1-D
    RoPE would. An image (or video) whose grid on the LLM side is ``t x h x w`` tokens
    (Qwen2-VL's ``image_grid_thw`` divided by ``[1, merge, merge]``) gives its tokens in the order
    ``t``, ``h``, ``w`` (``t`` slowest, ``w`` fastest), and token ``(a, b, c)`` gets the ids

    .. math::
        (s + a,\; s + b,\; s + c), \qquad 0 \le a < t,\; 0 \le b < h,\; 0 \le c < w,

    so the next segment starts at ``s + max(t, h, w)``. This is Hugging Face's
    ``Qwen2VLModel.get_rope_index`` for one sequence; its vision start and end tokens are ordinary
    ``("text", n)`` tokens here. (Transformers 4.x starts every segment at ``max + 1`` as here;
    5.24 advances past a vision segment by ``max(h, w)`` only, which is the same unless a video
    has more frames than ``max(h, w)``: then its following text reuses the video's temporal ids.)

    Parameters
    ----------
    segments : list of tuple
        ``("text", n)`` for ``n`` text tokens or ``("image", t, h, w)`` for an image or video of
        ``t * h * w`` tokens; every count an integer >= 1.

    Returns
    -------
    ndarray of int64, shape (3, L)
        Rows temporal, height, width; ``L`` is the total number of tokens.

    Raises
    ------
    ValueError
        If `segments` is not a non-empty list (or tuple), or a segment is not a tuple (or list)
        ``("text", n)`` or ``("image", t, h, w)`` with every count an integer >= 1 (bools and
        floats such as 2.0 are not integers).

    Examples
    --------
    >>> print(mrope_position_ids([("text", 2), ("image", 1, 2, 2), ("text", 1)]))
    [[0 1 2 2 2 2 4]
     [0 1 2 2 3 3 4]
     [0 1 2 3 2 3 4]]
    """
    if not isinstance(segments, (list, tuple)) or len(segments) == 0:
        raise ValueError(f"segments must be a non-empty list of segments, got {segments!r}")
    number_of_counts = {"text": 1, "image": 3}
    columns = []
    start = 0
    for number, segment in enumerate(segments):
        if not isinstance(segment, (tuple, list)) or len(segment) == 0:
            raise ValueError(f"segment {number} must be a tuple ('text', n) or "
                             f"('image', t, h, w), got {segment!r}")
        kind = segment[0]
        if not isinstance(kind, str) or kind not in number_of_counts:
            raise ValueError(f"segment {number} {segment!r}: unknown kind {kind!r}, expected "
                             f"'text' or 'image'")
        if len(segment) - 1 != number_of_counts[kind]:
            raise ValueError(f"segment {number} {segment!r}: a {kind!r} segment has "
                             f"{number_of_counts[kind]} count(s), got {len(segment) - 1}")
        for count in segment[1:]:
            if (isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer))
                    or count < 1):
                raise ValueError(f"segment {number} {segment!r}: counts must be integers >= 1, "
                                 f"got {count!r}")
        if kind == "text":
            ids = np.broadcast_to(np.arange(int(segment[1]), dtype=np.int64), (3, int(segment[1])))
        else:
            grid = np.meshgrid(*(np.arange(int(count), dtype=np.int64) for count in segment[1:]),
                               indexing="ij")
            ids = np.stack([axis.reshape(-1) for axis in grid])
        columns.append(ids + start)
        start += int(ids.max()) + 1
    return np.concatenate(columns, axis=1)


def apply_mrope(x, position_ids, mrope_section, base=10000.0):
    r"""Rotate `x` with M-RoPE: half-split RoPE whose pairs read three rows of position ids.

    Pair ``t`` is the dimensions ``(t, t + d/2)`` (Hugging Face's ``rotate_half`` layout) with
    :math:`\theta_t = b^{-2t/d}`. With ``mrope_section = (m_0, m_1, m_2)``,
    ``m_0 + m_1 + m_2 = d/2``, the first ``m_0`` pairs take their position from row 0 (temporal),
    the next ``m_1`` from row 1 (height) and the last ``m_2`` from row 2 (width):

    .. math::
        r(t) = \begin{cases} 0 & t < m_0 \\ 1 & m_0 \le t < m_0 + m_1 \\ 2 & \text{otherwise,}
        \end{cases} \qquad p_t = P[r(t), \ell],

    and token ``l`` turns pair ``t`` counter-clockwise by :math:`p_t \theta_t`:

    .. math::
        x'_t = x_t \cos p_t\theta_t - x_{t + d/2} \sin p_t\theta_t, \qquad
        x'_{t + d/2} = x_{t + d/2} \cos p_t\theta_t + x_t \sin p_t\theta_t

    When the three rows are equal (text only) this is plain half-split RoPE. Qwen2-VL uses
    ``d = 128`` and ``mrope_section = (16, 24, 24)``.

    Parameters
    ----------
    x : array_like, shape (..., L, d)
        Queries or keys of one or more heads; ``d`` is the head dimension.
    position_ids : array_like, shape (3, L)
        Rows temporal, height, width (:func:`mrope_position_ids`).
    mrope_section : sequence of int
        Three integers ``(m_0, m_1, m_2)`` >= 0 with ``m_0 + m_1 + m_2 = d/2``.
    base : float, optional
        The base ``b`` (``rope_theta``), > 0; default 10000.

    Returns
    -------
    ndarray of float64, shape (..., L, d)
        A new array; `x` is not modified.

    Raises
    ------
    ValueError
        If ``x.ndim < 2``, ``d`` is odd, `position_ids` does not have shape ``(3, L)``,
        `mrope_section` is not three integers >= 0 adding up to ``d/2``, or ``base <= 0``.

    Examples
    --------
    >>> x = np.array([[1.0, 1.0, 0.0, 0.0]])  # one token, d = 4: pairs (0, 2) and (1, 3)
    >>> ids = [[np.pi / 2], [0.0], [0.0]]  # temporal pi/2, height and width 0
    >>> print(np.round(apply_mrope(x, ids, (1, 1, 0)), 4))  # pair 0 reads the temporal row
    [[0. 1. 1. 0.]]
    >>> print(np.round(apply_mrope(x, ids, (0, 1, 1)), 4))  # pair 0 reads the height row
    [[1. 1. 0. 0.]]
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., L, d), got shape {x.shape}")
    length, dim = x.shape[-2], x.shape[-1]
    if dim % 2:
        raise ValueError(f"the head dimension d must be even, got {dim}")
    position_ids = np.asarray(position_ids, dtype=np.float64)
    if position_ids.shape != (3, length):
        raise ValueError(f"position_ids must have shape (3, L) = (3, {length}), got "
                         f"{position_ids.shape}")
    try:
        section = list(mrope_section)
    except TypeError:
        raise ValueError(f"mrope_section must be three integers >= 0, got {mrope_section!r}")
    if len(section) != 3 or not all(
            not isinstance(m, (bool, np.bool_)) and isinstance(m, (int, np.integer)) and m >= 0
            for m in section):
        raise ValueError(f"mrope_section must be three integers >= 0, got {mrope_section!r}")
    half = dim // 2
    if sum(int(m) for m in section) != half:
        raise ValueError(f"mrope_section {mrope_section!r} must add up to d/2 = {half}, got "
                         f"{sum(int(m) for m in section)}")
    if not base > 0:
        raise ValueError(f"base must be > 0, got {base!r}")
    theta = float(base) ** (-2.0 * np.arange(half) / dim)
    rows = np.repeat(np.arange(3), [int(m) for m in section])
    angles = position_ids[rows].T * theta  # (L, d/2): token l, pair t
    cos, sin = np.cos(angles), np.sin(angles)
    x = x.astype(np.float64)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)
