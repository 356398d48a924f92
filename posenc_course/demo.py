"""The instructor's workflow, end to end, on three demo students.

Run from the course directory (the repository root), as ``make demo`` does:

For each graded assignment, ``posenc`` (the core) and ``posenc-advanced`` (the second one):

1. ``nbgrader generate_assignment`` (and ``theory``, the ungraded companion): the student versions in
   ``release/``;
2. three submissions in ``submitted/``: the reference answers, the blank release, and one with
   two realistic mistakes;
3. ``nbgrader autograde``: graded notebooks in ``autograded/``, scores in ``gradebook.db``;
4. ``nbgrader generate_feedback`` (HTML in ``feedback/``, its summary first, no hidden test shown);
5. a per-student, per-exercise score table, and the class report (``reports/class_report*.html``:
   each exercise's score distribution and its most frequent failing checks).

Then ``nbgrader export`` writes every grade to ``grades.csv``.

Only the three ``demo-*`` students are written or regraded: other students' submissions and
grades in the gradebook are left alone.
"""

import shutil
import sys
import time

from . import class_report, report
from .course import run_nbgrader
from .layout import ADVANCED, ASSIGNMENT, GRADED, ROOT, release_notebook, source_notebook
from .submissions import make_submission, reference_answers, write_submission
STUDENTS = ("demo-reference", "demo-blank", "demo-mistakes")

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

#: Per assignment: the demo-mistakes student's functions, and what they get wrong.
MISTAKES = {
    ASSIGNMENT: ({"apply_rope": HALF_SPLIT_ROPE, "masked_softmax": MASK_AFTER_SOFTMAX},
                 "apply_rope in the half-split layout (ex05), masked_softmax masking after the softmax (ex07)"),
    ADVANCED: (ADVANCED_MISTAKES, "shaw_attention masking after the softmax (ex01), Swin's index strided by "
                                  "the window's height instead of its width (ex05)"),
}


def nbgrader(*args, log_level="WARN"):
    """Run one nbgrader command in the course directory, echoing it first; stop if it fails."""
    print(f"\n$ nbgrader {' '.join(args)}", flush=True)
    started = time.perf_counter()
    result = run_nbgrader(ROOT, *args, f"--log-level={log_level}", capture=False)
    print(f"  ({time.perf_counter() - started:.1f} s, exit code {result.returncode})", flush=True)
    if result.returncode != 0:
        sys.exit(f"nbgrader {args[0]} failed with exit code {result.returncode}")


def make_demo_submissions(assignment):
    print(f"\nMaking the demo submissions of {assignment} in submitted/:", flush=True)
    answers = reference_answers(source_notebook(assignment))
    release = release_notebook(assignment)
    mistakes, described = MISTAKES[assignment]
    notebooks = {
        "demo-reference": make_submission(answers, release_notebook=release),
        "demo-blank": make_submission(release_notebook=release),
        "demo-mistakes": make_submission(answers, functions=mistakes, release_notebook=release),
    }
    for student, notebook in notebooks.items():
        shutil.rmtree(ROOT / "submitted" / student / assignment, ignore_errors=True)
        path = write_submission(notebook, ROOT / "submitted", student, assignment=assignment)
        print(f"  {path.relative_to(ROOT)}")
    print(f"  demo-mistakes: {described}")


def grade(assignment):
    """One assignment's part of the demo: release, submissions, autograde, feedback, scores, report."""
    print(f"\n=== {assignment} ===", flush=True)
    nbgrader("generate_assignment", assignment, "--force")
    make_demo_submissions(assignment)
    # At WARN, autograde notes for every test cell with hidden tests that it differs from the
    # released one: that is expected, so the demo shows errors only.
    nbgrader("autograde", assignment, "--force", "--student=demo-*", log_level="ERROR")
    nbgrader("generate_feedback", assignment, "--force", "--student=demo-*")
    print(f"\nScores of {assignment} by exercise (from gradebook.db):\n")
    scores = report.exercise_scores(ROOT / "gradebook.db", assignment)
    print(report.format_table({s: scores[s] for s in STUDENTS if s in scores}))
    print(f"\nThe class report of {assignment} (posenc_course/class_report.py):\n", flush=True)
    class_report.main([str(ROOT), "--students=demo-*", f"--assignment={assignment}"])


def main():
    started = time.perf_counter()
    nbgrader("generate_assignment", "theory", "--force")
    for assignment in GRADED:
        grade(assignment)
    nbgrader("export", "--to=grades.csv")
    print(f"""
Where things are (A is posenc, the core, or posenc-advanced, for students who finished it):
  release/A/exercises.ipynb                 the graded exercises (give this out)
  release/theory/theory.ipynb               the companion theory notebook, with figures (give this out)
  autograded/STUDENT/A/exercises.ipynb      the executed, graded notebooks
  feedback/STUDENT/A/exercises.html         feedback for each student: a summary of each exercise's points
                                            and failed checks first; no hidden test shown
  grades.csv                                every grade in the gradebook, for your spreadsheet
  reports/class_report.html                 each exercise's score distribution and most frequent failing
  reports/class_report-posenc-advanced.html checks, for posenc and for posenc-advanced
Done in {time.perf_counter() - started:.0f} s.""")


if __name__ == "__main__":
    main()
