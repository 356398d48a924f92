"""posenc third assignment: Qwen2-VL's multimodal RoPE (M-RoPE), position ids and rotation.

Sources:
- Wang et al. 2024, "Qwen2-VL: Enhancing Vision-Language Model's Perception of the World at Any
  Resolution", section 2.1: text tokens share one id in the three rows; an image's tokens get
  (temporal, height, width) ids; every modality starts at the previous maximum id + 1.
- Hugging Face transformers, src/transformers/models/qwen2_vl/modeling_qwen2_vl.py:
  ``Qwen2VLModel.get_rope_index`` (4.x: ``st_idx = llm_pos_ids_list[-1].max() + 1``; its
  docstring's example is ``test_hf_docstring_example``), ``Qwen2VLRotaryEmbedding`` (pair t of
  ``rotate_half``'s layout takes row ``i % 3`` of chunk ``i`` of ``split(mrope_section)``) and
  ``apply_rotary_pos_emb``. The numerical comparison with transformers itself is kept out of this
  file (no torch here).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from posenc_solutions.mrope import apply_mrope, mrope_position_ids
from posenc_solutions.rope_layouts import apply_rope_half_split


# ---- naive implementations, written from the formulas with plain loops

def ids_by_loop(segments):
    rows = [[], [], []]
    start = 0
    for segment in segments:
        if segment[0] == "text":
            for i in range(segment[1]):
                for row in rows:
                    row.append(start + i)
        else:
            _, t, h, w = segment
            for a in range(t):
                for b in range(h):
                    for c in range(w):
                        rows[0].append(start + a)
                        rows[1].append(start + b)
                        rows[2].append(start + c)
        start = max(max(row) for row in rows) + 1
    return np.array(rows, dtype=np.int64)


def mrope_by_loop(x, position_ids, section, base):
    """One 2-D rotation per (token, pair), the pair's row picked by counting through the section."""
    x = np.asarray(x, dtype=float)
    dim = x.shape[-1]
    half = dim // 2
    out = x.copy()
    for ell in range(x.shape[-2]):
        for t in range(half):
            row = 0 if t < section[0] else 1 if t < section[0] + section[1] else 2
            angle = position_ids[row][ell] * base ** (-2.0 * t / dim)
            c, s = math.cos(angle), math.sin(angle)
            a, b = x[..., ell, t], x[..., ell, t + half]
            out[..., ell, t] = a * c - b * s
            out[..., ell, t + half] = b * c + a * s
    return out


text_segments = st.tuples(st.just("text"), st.integers(1, 5))
image_segments = st.tuples(st.just("image"), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4))
segment_lists = st.lists(st.one_of(text_segments, image_segments), min_size=1, max_size=6)


@st.composite
def sections(draw, max_half=8):
    half = draw(st.integers(1, max_half))
    first = draw(st.integers(0, half))
    second = draw(st.integers(0, half - first))
    return (first, second, half - first - second)


# ---- mrope_position_ids: literal values

def test_docstring_example_by_hand():
    got = mrope_position_ids([("text", 2), ("image", 1, 2, 2), ("text", 1)])
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[0, 1, 2, 2, 2, 2, 4],
                                        [0, 1, 2, 2, 3, 3, 4],
                                        [0, 1, 2, 3, 2, 3, 4]])


def test_hf_docstring_example():
    # get_rope_index's docstring (transformers 4.x, Qwen2-VL): 3 temporal patches, 2 x 2 grid,
    # then 5 text tokens starting at the vision maximum + 1.
    got = mrope_position_ids([("image", 3, 2, 2), ("text", 5)])
    np.testing.assert_array_equal(got[0], [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(got[1], [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(got[2], [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 3, 4, 5, 6, 7])


def test_a_wide_image_between_texts_by_hand():
    # <vision_start> is a text token: 3 text, a 1 x 1 x 3 image from 3, then text at 3 + 3 = 6.
    got = mrope_position_ids([("text", 3), ("image", 1, 1, 3), ("text", 2)])
    np.testing.assert_array_equal(got, [[0, 1, 2, 3, 3, 3, 6, 7],
                                        [0, 1, 2, 3, 3, 3, 6, 7],
                                        [0, 1, 2, 3, 4, 5, 6, 7]])


def test_two_adjacent_images():
    # The second image starts at the first's maximum + 1 (2 + 1 = 3), its text after at 3 + 2.
    got = mrope_position_ids([("image", 1, 2, 3), ("image", 1, 2, 1), ("text", 1)])
    np.testing.assert_array_equal(got, [[0, 0, 0, 0, 0, 0, 3, 3, 5],
                                        [0, 0, 0, 1, 1, 1, 3, 4, 5],
                                        [0, 1, 2, 0, 1, 2, 3, 3, 5]])


def test_text_only_is_arange_in_every_row():
    got = mrope_position_ids([("text", 4), ("text", 3)])
    np.testing.assert_array_equal(got, np.tile(np.arange(7), (3, 1)))


def test_numpy_integer_counts_and_lists_are_accepted():
    expected = mrope_position_ids([("text", 2), ("image", 1, 2, 2)])
    got = mrope_position_ids([["text", np.int64(2)], ("image", np.int32(1), 2, np.uint8(2))])
    np.testing.assert_array_equal(got, expected)


# ---- mrope_position_ids: against a loop, and properties

@settings(max_examples=80, deadline=None)
@given(segments=segment_lists)
def test_ids_match_a_loop(segments):
    got = mrope_position_ids(segments)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, ids_by_loop(segments))


@settings(max_examples=60, deadline=None)
@given(segments=segment_lists)
def test_ids_segment_by_segment(segments):
    got = mrope_position_ids(segments)
    lengths = [s[1] if s[0] == "text" else s[1] * s[2] * s[3] for s in segments]
    assert got.shape == (3, sum(lengths))
    edges = np.cumsum([0] + lengths)
    for number, segment in enumerate(segments):
        block = got[:, edges[number]:edges[number + 1]]
        start = 0 if number == 0 else got[:, :edges[number]].max() + 1
        if segment[0] == "text":
            # equal rows, consecutive from the start
            np.testing.assert_array_equal(block, np.tile(start + np.arange(segment[1]), (3, 1)))
        else:
            _, t, h, w = segment
            # every segment starts at the maximum so far + 1, in all three rows at once
            np.testing.assert_array_equal(block[:, 0], [start] * 3)
            # t slowest, w fastest; each row counts its own axis
            grid = block.reshape(3, t, h, w) - start
            np.testing.assert_array_equal(grid[0], np.broadcast_to(np.arange(t)[:, None, None], (t, h, w)))
            np.testing.assert_array_equal(grid[1], np.broadcast_to(np.arange(h)[None, :, None], (t, h, w)))
            np.testing.assert_array_equal(grid[2], np.broadcast_to(np.arange(w)[None, None, :], (t, h, w)))
            assert block.max() == start + max(t, h, w) - 1


@settings(max_examples=60, deadline=None)
@given(segments=segment_lists, prefix=st.integers(1, 6))
def test_a_text_prefix_shifts_every_id(segments, prefix):
    # Relative offsets do not depend on where the sequence starts.
    plain = mrope_position_ids(segments)
    shifted = mrope_position_ids([("text", prefix)] + list(segments))
    np.testing.assert_array_equal(shifted[:, prefix:], plain + prefix)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), t=st.integers(1, 3), h=st.integers(1, 4), w=st.integers(1, 4),
       after=st.integers(1, 4))
def test_image_after_text_starts_at_max_plus_one(n, t, h, w, after):
    got = mrope_position_ids([("text", n), ("image", t, h, w), ("text", after)])
    np.testing.assert_array_equal(got[:, n], [n, n, n])  # the text's max is n - 1
    text_after = got[:, n + t * h * w:]
    np.testing.assert_array_equal(text_after, np.tile(n + max(t, h, w) + np.arange(after), (3, 1)))
    # relative offsets inside the image are the grid offsets
    image = got[:, n:n + t * h * w].reshape(3, t, h, w)
    np.testing.assert_array_equal(image[:, -1, -1, -1] - image[:, 0, 0, 0], [t - 1, h - 1, w - 1])


def test_input_unchanged():
    segments = [("text", 2), ["image", 1, 2, 2]]
    before = [tuple(s) for s in segments]
    mrope_position_ids(segments)
    assert [tuple(s) for s in segments] == before and isinstance(segments[1], list)


# ---- apply_mrope: literal values

def test_apply_docstring_example_by_hand():
    x = np.array([[1.0, 1.0, 0.0, 0.0]])
    ids = [[np.pi / 2], [0.0], [0.0]]
    np.testing.assert_allclose(apply_mrope(x, ids, (1, 1, 0)), [[0.0, 1.0, 1.0, 0.0]], atol=1e-15)
    np.testing.assert_allclose(apply_mrope(x, ids, (0, 1, 1)), [[1.0, 1.0, 0.0, 0.0]], atol=1e-15)


def test_one_pair_per_row_by_hand():
    # d = 6, base 64: theta = [1, 1/4, 1/16]; section (1, 1, 1) gives pair t the row t.
    # Ids (pi/2, 2 pi, 8 pi) turn the three pairs by pi/2, pi/2 and pi/2.
    x = np.array([[1.0, 2.0, 3.0, 0.0, 0.0, 0.0]])
    ids = [[np.pi / 2], [2 * np.pi], [8 * np.pi]]
    got = apply_mrope(x, ids, (1, 1, 1), base=64.0)
    np.testing.assert_allclose(got, [[0.0, 0.0, 0.0, 1.0, 2.0, 3.0]], atol=1e-14)
    # the same ids with section (0, 0, 3): every pair reads 8 pi -> 8 pi, 2 pi, pi/2
    got = apply_mrope(x, ids, (0, 0, 3), base=64.0)
    np.testing.assert_allclose(got, [[1.0, 2.0, 0.0, 0.0, 0.0, 3.0]], atol=1e-13)


def test_qwen2_vl_7b_shapes():
    # Qwen2-VL-7B: head_dim 128, mrope_section [16, 24, 24], rope_theta 1e6.
    ids = mrope_position_ids([("text", 3), ("image", 1, 4, 6), ("text", 2)])
    x = np.random.default_rng(0).normal(size=(2, 28, ids.shape[1], 128))
    got = apply_mrope(x, ids, [16, 24, 24], base=1000000.0)
    assert got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)


# ---- apply_mrope: against a loop, and properties

@settings(max_examples=60, deadline=None)
@given(segments=segment_lists, section=sections(), base=st.sampled_from([10.0, 10000.0, 1e6]),
       shift=st.integers(0, 3000), seed=st.integers(0, 2**31 - 1))
def test_apply_matches_a_loop(segments, section, base, shift, seed):
    ids = mrope_position_ids(segments) + shift
    x = np.random.default_rng(seed).normal(size=(2, ids.shape[1], 2 * sum(section)))
    got = apply_mrope(x, ids, section, base)
    assert got.dtype == np.float64 and got.shape == x.shape
    np.testing.assert_allclose(got, mrope_by_loop(x, ids, section, base), rtol=1e-10, atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), section=sections(), base=st.sampled_from([10.0, 10000.0]),
       seed=st.integers(0, 2**31 - 1))
def test_text_only_is_half_split_rope(n, section, base, seed):
    ids = mrope_position_ids([("text", n)])
    x = np.random.default_rng(seed).normal(size=(3, n, 2 * sum(section)))
    np.testing.assert_allclose(apply_mrope(x, ids, section, base),
                               apply_rope_half_split(x, np.arange(n), base), rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(segments=segment_lists, half=st.integers(1, 6), row=st.integers(0, 2), seed=st.integers(0, 2**31 - 1))
def test_a_section_in_one_row_is_half_split_rope_on_that_row(segments, half, row, seed):
    ids = mrope_position_ids(segments)
    section = [0, 0, 0]
    section[row] = half
    x = np.random.default_rng(seed).normal(size=(ids.shape[1], 2 * half))
    np.testing.assert_allclose(apply_mrope(x, ids, section), apply_rope_half_split(x, ids[row]),
                               rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(segments=segment_lists, section=sections(), offsets=st.tuples(*[st.integers(-50, 50)] * 3),
       seed=st.integers(0, 2**31 - 1))
def test_scores_depend_on_id_differences_only(segments, section, offsets, seed):
    # Each pair reads one row, so shifting each row by its own constant leaves q.k unchanged.
    ids = mrope_position_ids(segments)
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, ids.shape[1], 2 * sum(section)))
    scores = apply_mrope(q, ids, section) @ apply_mrope(k, ids, section).T
    moved = ids + np.array(offsets)[:, None]
    moved_scores = apply_mrope(q, moved, section) @ apply_mrope(k, moved, section).T
    np.testing.assert_allclose(moved_scores, scores, rtol=1e-9, atol=1e-9)


def test_base_one_turns_every_pair_by_its_id():
    # base 1 (> 0): theta_t = 1 for every pair, so pair t turns by the id of its row
    ids = np.array([[0.5, 2.0], [1.0, -3.0], [7.0, 0.25]])
    x = np.random.default_rng(5).normal(size=(2, 6))
    np.testing.assert_allclose(apply_mrope(x, ids, (1, 1, 1), base=1.0), mrope_by_loop(x, ids, (1, 1, 1), 1.0),
                               rtol=1e-13, atol=1e-13)


def test_batch_dimensions_are_independent():
    ids = mrope_position_ids([("text", 2), ("image", 2, 2, 1)])
    x = np.random.default_rng(1).normal(size=(2, 3, 6, 8))
    got = apply_mrope(x, ids, (2, 1, 1))
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(got[i, j], apply_mrope(x[i, j], ids, (2, 1, 1)))


def test_float64_from_other_dtypes_and_input_unchanged():
    ids = mrope_position_ids([("image", 1, 2, 2)])
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    before = x.copy()
    got = apply_mrope(x, ids, np.array([1, 0, 1]))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(x, before)
    got[...] = 0.0
    np.testing.assert_array_equal(x, before)
    assert apply_mrope(np.ones((4, 4), dtype=int), ids, (1, 0, 1)).dtype == np.float64


# ---- errors, each with an input numpy would accept

ID_ERRORS = [
    ([], "non-empty"),
    ((), "non-empty"),
    ("text", "non-empty"),
    (5, "non-empty"),
    ([("text", 2), "text"], "segment 1"),
    ([("video", 2, 2, 2)], "segment 0.*'video'"),
    ([("Text", 2)], "segment 0.*'Text'"),
    ([(3, 2)], "segment 0"),
    ([("text", 1), ("text", 1, 2)], "segment 1.*'text', 1, 2"),
    ([("image", 1, 2)], "segment 0.*'image', 1, 2"),
    ([("image", 1, 2, 2, 1)], "segment 0"),
    ([("text",)], "segment 0"),
    ([()], "segment 0"),
    ([("text", 0)], "segment 0.*got 0"),
    ([("text", 2), ("image", 1, -2, 2)], "segment 1.*got -2"),
    ([("text", 2.5)], "segment 0.*got 2.5"),
    ([("text", 2.0)], "segment 0.*got 2.0"),
    ([("text", True)], "segment 0.*got True"),
    ([("image", 1, np.True_, 2)], "segment 0.*True"),
    ([("image", 1, 2, np.float64(2))], "segment 0"),
    ([("text", "3")], "segment 0.*'3'"),
]


@pytest.mark.parametrize("segments, message", ID_ERRORS)
def test_ids_value_errors(segments, message):
    with pytest.raises(ValueError, match=message):
        mrope_position_ids(segments)


X4 = np.ones((3, 4))
IDS3 = np.zeros((3, 3), dtype=np.int64)
APPLY_ERRORS = [
    ((np.ones(4), np.zeros((3, 1)), (1, 1, 0)), "shape"),
    ((np.float64(1.0), np.zeros((3, 1)), (0, 0, 0)), "shape"),
    ((np.ones((3, 5)), IDS3, (1, 1, 0)), "5"),
    ((X4, np.zeros(3), (1, 1, 0)), r"\(3,\)"),
    ((X4, np.zeros((1, 3)), (1, 1, 0)), r"\(1, 3\)"),
    ((X4, np.zeros((3, 1)), (1, 1, 0)), r"\(3, 1\)"),  # would broadcast
    ((X4, np.zeros((3, 4)), (1, 1, 0)), r"\(3, 4\)"),
    ((X4, np.zeros((3, 3, 1)), (1, 1, 0)), r"\(3, 3, 1\)"),
    ((X4, IDS3, (1, 1)), r"\(1, 1\)"),
    ((X4, IDS3, (1, 1, 0, 0)), r"\(1, 1, 0, 0\)"),
    ((X4, IDS3, 2), "2"),
    ((X4, IDS3, (1.0, 1, 0)), r"1\.0"),
    ((X4, IDS3, (True, 1, 0)), "True"),
    ((X4, IDS3, (-1, 2, 1)), "-1"),  # adds up to 2 = d/2
    ((X4, IDS3, (1, 1, 1)), "add up to d/2 = 2"),
    ((X4, IDS3, (2, 1, 0)), "add up to d/2 = 2"),
    ((X4, IDS3, (1, 1, 0), 0.0), "base"),
    ((X4, IDS3, (1, 1, 0), -10.0), "base"),
]


@pytest.mark.parametrize("args, message", APPLY_ERRORS)
def test_apply_value_errors(args, message):
    with pytest.raises(ValueError, match=message):
        apply_mrope(*args)
