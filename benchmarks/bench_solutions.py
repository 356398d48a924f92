"""Benchmark the heavy reference functions against the plainest numpy of the same memory traffic.

Each function is timed next to its baseline in the same run, and reported as a
ratio, because this machine is shared and noisy: absolute times mean little.

    python benchmarks/bench_solutions.py            # the sizes of docs/measured/bench_solutions.txt
    python benchmarks/bench_solutions.py --quick    # small sizes, a smoke run
"""

import argparse
import time

import numpy as np

import posenc_solutions as ps

FULL = {"rope": (32, 4096, 128), "alibi": (16, 2048, 2048), "t5": (12, 2048, 2048)}
QUICK = {"rope": (4, 256, 64), "alibi": (4, 128, 128), "t5": (4, 128, 128)}


def paired_best_times(fn, baseline, repeats):
    """Best wall times of `fn` and `baseline`, called in turn so that both see the same machine load."""
    times = {fn: [], baseline: []}
    for _ in range(repeats):
        for f in (baseline, fn):
            start = time.perf_counter()
            f()
            times[f].append(time.perf_counter() - start)
    return min(times[fn]), min(times[baseline])


def rope_case(heads, length, head_dim, rng):
    x = rng.standard_normal((heads, length, head_dim))
    y = rng.standard_normal((heads, length, head_dim))
    c = rng.standard_normal((length, head_dim))
    s = rng.standard_normal((length, head_dim))
    positions = np.arange(length)
    return (
        f"apply_rope        x: ({heads}, {length}, {head_dim})",
        lambda: ps.apply_rope(x, positions),
        "x*c + y*s",
        lambda: x * c + y * s,
    )


def alibi_case(heads, lq, lk, rng):
    scores = rng.standard_normal((heads, lq, lk))
    slopes = ps.alibi_slopes(heads)
    positions = np.arange(lk)

    def plain_softmax():
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return (
        f"alibi_attention   scores: ({heads}, {lq}, {lk})",
        lambda: ps.alibi_attention(scores, slopes, positions[-lq:], positions),
        "plain softmax of scores",
        plain_softmax,
    )


def t5_case(heads, lq, lk, rng):
    table = rng.standard_normal((heads, 32))
    positions = np.arange(lk)
    buckets = rng.integers(0, 32, size=(lq, lk))
    return (
        f"t5_relative_bias  ({heads} heads) x {lq} x {lk}",
        lambda: ps.t5_relative_bias(table, positions[-lq:], positions),
        "table[:, buckets] with buckets given",
        lambda: table[:, buckets],
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--repeats", type=int, default=None, help="timed calls per function (default 5, quick 3)")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    repeats = args.repeats or (3 if args.quick else 5)
    rng = np.random.default_rng(0)
    cases = [rope_case(*sizes["rope"], rng), alibi_case(*sizes["alibi"], rng), t5_case(*sizes["t5"], rng)]
    from bench_class import machine

    print(machine(), flush=True)
    print(f"numpy {np.__version__}; best of {repeats} calls each; ratio = function / baseline", flush=True)
    print(f"{'function':45} {'time':>9} {'baseline':>9} {'ratio':>6}   baseline", flush=True)
    for label, fn, base_label, base_fn in cases:
        fn(), base_fn()  # warm up: page in the arrays
        took, base = paired_best_times(fn, base_fn, repeats)
        print(f"{label:45} {took * 1e3:7.1f}ms {base * 1e3:7.1f}ms {took / base:5.2f}x   {base_label}", flush=True)


if __name__ == "__main__":
    main()
