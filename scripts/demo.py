"""A tour of the reference solutions: one worked example per exercise."""

import numpy as np

import posenc_solutions as ps

np.set_printoptions(precision=4, suppress=True)


def show(title, value):
    print(f"\n{title}\n{value}")


def main():
    show("ex01 sinusoidal_row(1, d_model=4)", ps.sinusoidal_row(1, 4))
    show("ex02 add_positions: zeros + rows 2..4 of a 6-row table",
         ps.add_positions(np.zeros((3, 2)), np.arange(12.0).reshape(6, 2), start=2))
    show("ex03 relative_position_matrix([0..3], [0..3])", ps.relative_position_matrix(range(4), range(4)))
    show("ex04 T5 buckets, bidirectional, for offsets -16, -8, 0, 1, 91",
         ps.t5_relative_position_bucket([-16, -8, 0, 1, 91]))
    x = np.random.default_rng(0).normal(size=(4, 8))
    show("ex05 RoPE keeps pair norms: max change",
         np.abs(ps.pair_norms(ps.apply_rope(x, np.arange(4))) - ps.pair_norms(x)).max())
    q, k = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    show("ex06 RoPE score at (m, n) = (3, 7) and from offset 4",
         (ps.rope_score_2d(q, k, 3, 7, 0.3), ps.rope_score_from_offset(q, k, 4, 0.3)))
    show("ex07 ALiBi slopes for 12 heads", ps.alibi_slopes(12))
    show("ex08 GPT-2's learned table: parameters", ps.learned_table_parameters(1024, 768))
    show("ex09 position ids for a left-padded batch, then 3 decode steps",
         (ps.position_ids_from_attention_mask([[0, 0, 1, 1], [1, 1, 1, 1]]),
          ps.decode_position_ids([[0, 0, 1, 1], [1, 1, 1, 1]], 3)))
    slopes = ps.alibi_slopes(4)
    show("ex10 needle weight by depth 0, 0.5, 1 under ALiBi (4 heads)",
         ps.needle_attention_by_depth(lambda qp, kp: ps.alibi_bias(slopes, qp, kp), 64, [0.0, 0.5, 1.0]))


if __name__ == "__main__":
    main()
