"""The course's overview figure, ``docs/_static/overview.svg``: four schemes drawn by the reference solutions.

The README and the site's landing page show it. It is made by this module, never by hand:
``python -m posenc_course.authoring.overview`` writes it again, and ``tests/system/test_docs.py`` checks that the committed
file is what this module draws (the SVG is made byte-stable: matplotlib's defaults, a fixed hash salt, no date).
"""

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import posenc_solutions as ps  # noqa: E402

from ..layout import ROOT  # noqa: E402

FIGURE = ROOT / "docs" / "_static" / "overview.svg"


def draw():
    """The figure: a sinusoidal table, RoPE's angles, T5's buckets and ALiBi's bias, 32 positions each."""
    positions = np.arange(32)
    fig, axes = plt.subplots(1, 4, figsize=(12, 3), layout="constrained")
    panels = [
        ("sinusoidal: 32 positions × 64 dims", ps.sinusoidal_table(32, 64), "RdBu_r", "dimension", "position"),
        ("RoPE: angle of each pair (mod 2π)", np.mod(np.outer(positions, ps.rope_frequencies(64)), 2 * np.pi),
         "twilight", "pair", "position"),
        ("T5: bucket of each offset", ps.t5_relative_position_bucket(ps.relative_position_matrix(positions, positions),
                                                                     num_buckets=16, max_distance=32),
         "viridis", "key", "query"),
        ("ALiBi: bias of head 1 of 8", np.where(np.tril(np.ones((32, 32), bool)),
                                                ps.alibi_bias(ps.alibi_slopes(8), positions, positions)[0], np.nan),
         "magma", "key", "query"),
    ]
    for ax, (title, image, cmap, xlabel, ylabel) in zip(axes, panels):
        shown = ax.imshow(image, cmap=cmap, aspect="auto", interpolation="nearest")
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        fig.colorbar(shown, ax=ax, shrink=0.8)
    return fig


def write(path=FIGURE):
    """Draw the figure into `path` (SVG, no date: the same bytes each time); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # matplotlib's defaults, whatever the process set before (a notebook's dpi would change the embedded images)
    with plt.style.context("default"), plt.rc_context({"svg.hashsalt": "posenc", "font.size": 9}):
        fig = draw()
        fig.savefig(path, format="svg", metadata={"Date": None}, dpi=100)
        plt.close(fig)
    return path


def main(argv=None):
    """Draw the figure into the path `argv` names, or :data:`FIGURE` without one; print the path written.

    Parameters
    ----------
    argv : list of str, optional
        The arguments: at most a path (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0].replace("``", ""))
    parser.add_argument("path", nargs="?", default=FIGURE, help=f"the SVG to write (default: {FIGURE})")
    print(write(parser.parse_args(argv).path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
