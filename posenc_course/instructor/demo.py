"""The instructor's workflow, end to end, on three demo students, in a course folder of its own.

``make demo`` makes ``demo/`` (git-ignored), a course directory of its own with this course's
``nbgrader_config.py`` and ``source/``, and works there only. The repository's own course (its
``release/`` and ``gradebook.db``) is not touched, so authoring (``make release``) works after the demo
as before it: nbgrader refuses to change an assignment's cells once its gradebook has submissions of
it, and the demo's submissions are in ``demo/gradebook.db``.

``demo/`` is made afresh on each run (it holds the demo's output only; a file ``.posenc-demo`` marks it).
In it, for each graded assignment, ``posenc`` (the core), ``posenc-advanced`` and ``posenc-current``:

1. ``nbgrader generate_assignment`` (and ``theory``, the ungraded companion): the student versions in
   ``demo/release/``;
2. three submissions in ``demo/submitted/``: the reference answers, the blank release, and one with
   two realistic mistakes;
3. ``nbgrader autograde``: graded notebooks in ``demo/autograded/``, scores in ``demo/gradebook.db``;
4. ``nbgrader generate_feedback`` (HTML in ``demo/feedback/``, its summary first, no hidden test shown);
5. a per-student, per-exercise score table, and the class report (``demo/reports/class_report*.html``:
   each exercise's score distribution and its most frequent failing checks).

Then ``nbgrader export`` writes every grade to ``demo/grades.csv``.
"""

import argparse
import shutil
import sys
import time
from pathlib import Path

from .. import class_report, report
from ..course import run_nbgrader
from ..layout import ADVANCED, ASSIGNMENT, CURRENT, GRADED, ROOT, release_notebook, source_notebook
from ..submissions import make_submission, reference_answers, write_submission

#: The demo's course directory, and the file that marks it as the demo's (so that it may be made afresh).
DEMO = ROOT / "demo"
MARK = ".posenc-demo"

STUDENTS = ("demo-reference", "demo-blank", "demo-mistakes")

#: Where ``make demo-record`` keeps the demo's whole output (by ``benchmarks/record.py``), its first line the commit and the machine:
#: the instructor's workflow page includes the core assignment's score table from it.
RECORDED = ROOT / "docs" / "measured" / "demo.txt"
#: The line above an assignment's score table, and the line that starts the next part, in the demo's output.
SCORES_HEADING = "Scores of {assignment} by exercise (from demo/gradebook.db):"
AFTER_SCORES = "The class report of {assignment} "

# Two mistakes students really make, each costing points in its own exercise only.
HALF_SPLIT_ROPE = '''
def apply_rope(x, positions, base=10000.0):
    """RoPE in HF's rotate_half layout: pairs (t, t + d/2) instead of (2t, 2t+1)."""
    x = np.asarray(x, dtype=float)
    positions = np.asarray(positions, dtype=float)
    if x.shape[-1] % 2 or len(positions) != x.shape[-2]:
        raise ValueError("bad shapes")
    half = x.shape[-1] // 2
    angles = positions[:, None] * rope_frequencies(x.shape[-1], base)
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)
'''

MASK_AFTER_SOFTMAX = '''
def masked_softmax(logits, mask):
    """Softmax over every entry, then zero the masked ones: rows no longer sum to 1."""
    logits = np.asarray(logits, dtype=float)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights * np.asarray(mask)
'''

# posenc-advanced: two more, each costing points in its own exercise only.
SWIN_HEIGHT_STRIDE = '''
def swin_relative_position_index(window_height, window_width):
    """Rows of the 2-D table strided by 2*Wh - 1 instead of 2*Ww - 1: right for square windows only."""
    for side in (window_height, window_width):
        if isinstance(side, bool) or not isinstance(side, (int, np.integer)) or side < 1:
            raise ValueError("window sides must be integers >= 1")
    tokens = np.arange(window_height * window_width)
    rows, cols = tokens // window_width, tokens % window_width
    row_offset = rows[:, None] - rows[None, :] + window_height - 1
    col_offset = cols[:, None] - cols[None, :] + window_width - 1
    return row_offset * (2 * window_height - 1) + col_offset
'''

SHAW_MASK_AFTER_SOFTMAX = '''
def shaw_attention(q, k, v, rel_keys, rel_values, causal=False):
    """Shaw's attention with the causal mask applied after the softmax: rows no longer sum to 1."""
    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    rel_keys, rel_values = np.asarray(rel_keys, dtype=float), np.asarray(rel_values, dtype=float)
    if q.ndim < 2 or q.shape != k.shape or v.ndim != k.ndim or v.shape[:-1] != k.shape[:-1]:
        raise ValueError("bad shapes")
    for table, width in ((rel_keys, q.shape[-1]), (rel_values, v.shape[-1])):
        if table.ndim != 2 or table.shape[0] % 2 == 0 or table.shape[1] != width:
            raise ValueError("a table must have shape (2K+1, width)")
    L = q.shape[-2]
    offsets = np.arange(L)[:, None] - np.arange(L)[None, :]
    K, Kv = rel_keys.shape[0] // 2, rel_values.shape[0] // 2
    a_k = rel_keys[np.clip(offsets, -K, K) + K]
    a_v = rel_values[np.clip(offsets, -Kv, Kv) + Kv]
    logits = (q @ np.swapaxes(k, -1, -2) + np.einsum("...id,ijd->...ij", q, a_k)) / math.sqrt(q.shape[-1])
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    if causal:
        weights = weights * (offsets >= 0)
    return weights @ v + np.einsum("...ij,ijd->...id", weights, a_v)
'''

ADVANCED_MISTAKES = {"swin_relative_position_index": SWIN_HEIGHT_STRIDE, "shaw_attention": SHAW_MASK_AFTER_SOFTMAX}

# posenc-current: LongRoPE switching to the long factors at L tokens already (>= for >), and the first-dimensions
# partial rotary with the whole head's frequencies b^(-2t/d) instead of the rotated part's b^(-2t/r).
LONGROPE_SWITCH_AT_L = '''
def longrope_inv_freq(head_dim, base, short_factor, long_factor, original_max_position, max_position,
                      seq_len, *, factor=None, attention_factor=None):
    if isinstance(head_dim, bool) or head_dim != int(head_dim) or head_dim < 2 or head_dim % 2 or base <= 0:
        raise ValueError("head_dim must be an even integer >= 2 and base > 0")
    short_factor, long_factor = np.asarray(short_factor, float), np.asarray(long_factor, float)
    for f in (short_factor, long_factor):
        if f.shape != (head_dim // 2,) or np.any(f <= 0):
            raise ValueError("each factor list must have head_dim // 2 entries > 0")
    if isinstance(original_max_position, bool) or original_max_position != int(original_max_position) \\
            or original_max_position < 2:
        raise ValueError("original_max_position must be an integer >= 2")
    if factor is None:
        if max_position is None or max_position < 1:
            raise ValueError("max_position must be >= 1, or factor given")
        factor = max_position / original_max_position
    if factor <= 0 or (seq_len is not None and seq_len < 1) or (attention_factor is not None and attention_factor <= 0):
        raise ValueError("factor and attention_factor must be > 0, seq_len >= 1")
    if attention_factor is None:
        attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max_position)) if factor > 1 else 1.0
    chosen = long_factor if seq_len is not None and seq_len >= original_max_position else short_factor
    return 1.0 / (chosen * base ** (np.arange(0, head_dim, 2) / head_dim)), float(attention_factor)
'''

PARTIAL_WITH_HEAD_FREQUENCIES = '''
def apply_partial_rotary(x, positions, partial_rotary_factor, base=10000.0):
    x = np.asarray(x, dtype=float)
    if x.ndim < 2:
        raise ValueError("x must have shape (..., L, d)")
    positions = np.asarray(positions, dtype=float)
    if positions.shape != (x.shape[-2],):
        raise ValueError("positions must have shape (L,)")
    if isinstance(partial_rotary_factor, bool) or not 0 < partial_rotary_factor <= 1:
        raise ValueError("partial_rotary_factor must be in (0, 1]")
    d = x.shape[-1]
    r = int(d * partial_rotary_factor)
    if r < 2 or r % 2:
        raise ValueError("int(d * p) must be even and >= 2")
    angles = positions[:, None] * base ** (-np.arange(0, r, 2) / d)
    a, b = x[..., :r // 2], x[..., r // 2:r]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles),
                           x[..., r:]], axis=-1)
'''

#: Per assignment: the demo-mistakes student's functions, and what they get wrong.
MISTAKES = {
    ASSIGNMENT: ({"apply_rope": HALF_SPLIT_ROPE, "masked_softmax": MASK_AFTER_SOFTMAX},
                 "apply_rope in the half-split layout (ex05), masked_softmax masking after the softmax (ex07)"),
    ADVANCED: (ADVANCED_MISTAKES, "shaw_attention masking after the softmax (ex01), Swin's index strided by "
                                  "the window's height instead of its width (ex05)"),
    CURRENT: ({"longrope_inv_freq": LONGROPE_SWITCH_AT_L, "apply_partial_rotary": PARTIAL_WITH_HEAD_FREQUENCIES},
              "LongRoPE's long factors from L tokens on instead of after L (ex02), partial rotary with the whole "
              "head's frequencies (ex04)"),
}


def make_course(course=DEMO, root=ROOT):
    """Make `course` afresh: `root`'s ``nbgrader_config.py`` and ``source/``, and nothing else; return it.

    A folder that exists without the demo's mark is not the demo's: it is left alone, and the demo stops.
    """
    course = Path(course)
    if course.exists():
        if not (course / MARK).exists():
            sys.exit(f"{course} exists and is not the demo's (no {MARK} in it): move it away, then run make demo again")
        shutil.rmtree(course)
    course.mkdir(parents=True)
    (course / MARK).write_text("made by make demo (posenc_course/instructor/demo.py): removed and made again by "
                               "each run\n")
    shutil.copy(Path(root) / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(Path(root) / "source", course / "source")
    return course


def nbgrader(course, *args, log_level="WARN"):
    """Run one nbgrader command in `course`, echoing it first; stop if it fails."""
    print(f"\n$ nbgrader {' '.join(args)}", flush=True)
    started = time.perf_counter()
    result = run_nbgrader(course, *args, f"--log-level={log_level}", capture=False)
    print(f"  ({time.perf_counter() - started:.1f} s, exit code {result.returncode})", flush=True)
    if result.returncode != 0:
        sys.exit(f"nbgrader {args[0]} failed with exit code {result.returncode}")


def make_demo_submissions(course, assignment):
    """The three demo students' submissions of `assignment`, in `course`'s ``submitted/``."""
    print(f"\nMaking the demo submissions of {assignment} in {course.name}/submitted/:", flush=True)
    answers = reference_answers(source_notebook(assignment, root=course))
    release = release_notebook(assignment, root=course)
    mistakes, described = MISTAKES[assignment]
    notebooks = {
        "demo-reference": make_submission(answers, release_notebook=release),
        "demo-blank": make_submission(release_notebook=release),
        "demo-mistakes": make_submission(answers, functions=mistakes, release_notebook=release),
    }
    for student, notebook in notebooks.items():
        path = write_submission(notebook, course / "submitted", student, assignment=assignment)
        print(f"  {path.relative_to(course.parent)}")
    print(f"  demo-mistakes: {described}")


def grade(course, assignment):
    """One assignment's part of the demo: release, submissions, autograde, feedback, scores, report."""
    print(f"\n=== {assignment} ===", flush=True)
    nbgrader(course, "generate_assignment", assignment, "--force")
    make_demo_submissions(course, assignment)
    # At WARN, autograde notes for every test cell with hidden tests that it differs from the
    # released one: that is expected, so the demo shows errors only.
    nbgrader(course, "autograde", assignment, "--force", log_level="ERROR")
    nbgrader(course, "generate_feedback", assignment, "--force")
    print("\n" + SCORES_HEADING.format(assignment=assignment) + "\n")
    scores = report.exercise_scores(course / "gradebook.db", assignment, by_hand=True)
    print(report.format_table({s: scores[s] for s in STUDENTS if s in scores}))
    print("\n" + AFTER_SCORES.format(assignment=assignment) + "(posenc_course/class_report.py):\n", flush=True)
    class_report.main([class_report.shown(course), f"--assignment={assignment}"])


def recorded_table(text, assignment=ASSIGNMENT):
    """The score table of `assignment` in the demo's output `text` (:data:`RECORDED`'s), without the blank lines
    around it; raise ``ValueError`` naming what is missing when the output has none."""
    heading, after = SCORES_HEADING.format(assignment=assignment), AFTER_SCORES.format(assignment=assignment)
    if heading not in text or after not in text.split(heading, 1)[1]:
        raise ValueError(f"the demo's output has no score table of {assignment} (no line {heading!r} followed by "
                         f"{after!r}): run make demo-record, which writes {RECORDED}")
    return text.split(heading, 1)[1].split(after, 1)[0].strip("\n")


def main(argv=None):
    """Run the demo (``make demo``, ``posenc demo``); it takes no argument but ``--help``."""
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    started = time.perf_counter()
    course = make_course()
    print(f"The demo's course folder: {class_report.shown(course)}/ (made afresh; the repository's release/ and "
          "gradebook.db are not touched)", flush=True)
    nbgrader(course, "generate_assignment", "theory", "--force")
    for assignment in GRADED:
        grade(course, assignment)
    nbgrader(course, "export", "--to=grades.csv")
    print(f"""
Where things are (A is posenc, the core, posenc-advanced or posenc-current), in the demo's own course folder:
  demo/release/A/exercises.ipynb                 the graded exercises, as this course's release/ has them
  demo/release/theory/theory.ipynb               the companion theory notebook, with figures
  demo/autograded/STUDENT/A/exercises.ipynb      the executed, graded notebooks
  demo/feedback/STUDENT/A/exercises.html         feedback for each student: a summary of each exercise's
                                                 points and failed checks first; no hidden test shown
  demo/gradebook.db, demo/grades.csv             the demo's gradebook, and every grade in it
  demo/reports/class_report.html                 each exercise's score distribution and most frequent
  demo/reports/class_report-A.html              failing checks, for posenc-advanced and posenc-current
The repository's own course (release/, gradebook.db) was not touched: make release works as before.
Done in {time.perf_counter() - started:.0f} s.""")


if __name__ == "__main__":
    sys.exit(main())
