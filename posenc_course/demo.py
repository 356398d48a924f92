"""The instructor's workflow, end to end, on three demo students.

Run from the course directory (the repository root), as ``make demo`` does:

1. ``nbgrader generate_assignment posenc`` (and ``theory``, the ungraded companion): the student
   versions in ``release/``;
2. three submissions in ``submitted/``: the reference answers, the blank release, and one with
   two realistic mistakes;
3. ``nbgrader autograde posenc``: graded notebooks in ``autograded/``, scores in ``gradebook.db``;
4. ``nbgrader generate_feedback posenc`` (HTML in ``feedback/``, its summary first, no hidden test
   shown) and ``nbgrader export`` (``grades.csv``);
5. a per-student, per-exercise score table, and the class report (``reports/class_report.html``: each
   exercise's score distribution and its most frequent failing checks).

Only the three ``demo-*`` students are written or regraded: other students' submissions and
grades in the gradebook are left alone.
"""

import shutil
import sys
import time

from . import class_report, report
from .course import run_nbgrader
from .layout import ASSIGNMENT, ROOT
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

MISTAKES = {"apply_rope": HALF_SPLIT_ROPE, "masked_softmax": MASK_AFTER_SOFTMAX}


def nbgrader(*args, log_level="WARN"):
    """Run one nbgrader command in the course directory, echoing it first; stop if it fails."""
    print(f"\n$ nbgrader {' '.join(args)}", flush=True)
    started = time.perf_counter()
    result = run_nbgrader(ROOT, *args, f"--log-level={log_level}", capture=False)
    print(f"  ({time.perf_counter() - started:.1f} s, exit code {result.returncode})", flush=True)
    if result.returncode != 0:
        sys.exit(f"nbgrader {args[0]} failed with exit code {result.returncode}")


def make_demo_submissions():
    print("\nMaking the demo submissions in submitted/:", flush=True)
    answers = reference_answers()
    notebooks = {
        "demo-reference": make_submission(answers),
        "demo-blank": make_submission(),
        "demo-mistakes": make_submission(answers, functions=MISTAKES),
    }
    for student, notebook in notebooks.items():
        shutil.rmtree(ROOT / "submitted" / student, ignore_errors=True)
        path = write_submission(notebook, ROOT / "submitted", student)
        print(f"  {path.relative_to(ROOT)}")
    print("  demo-mistakes: apply_rope in the half-split layout (ex05), "
          "masked_softmax masking after the softmax (ex07)")


def main():
    started = time.perf_counter()
    nbgrader("generate_assignment", ASSIGNMENT, "--force")
    nbgrader("generate_assignment", "theory", "--force")
    make_demo_submissions()
    # At WARN, autograde notes for every test cell with hidden tests that it differs from the
    # released one: that is expected, so the demo shows errors only.
    nbgrader("autograde", ASSIGNMENT, "--force", "--student=demo-*", log_level="ERROR")
    nbgrader("generate_feedback", ASSIGNMENT, "--force", "--student=demo-*")
    nbgrader("export", "--to=grades.csv")
    print("\nScores by exercise (from gradebook.db):\n")
    scores = report.exercise_scores(ROOT / "gradebook.db")
    print(report.format_table({s: scores[s] for s in STUDENTS if s in scores}))
    print("\nThe class report (posenc_course/class_report.py):\n", flush=True)
    class_report.main([str(ROOT), "--students=demo-*"])
    print(f"""
Where things are:
  release/posenc/exercises.ipynb            the graded exercises (give this out)
  release/theory/theory.ipynb               the companion theory notebook, with figures (give this out)
  autograded/STUDENT/posenc/exercises.ipynb the executed, graded notebooks
  feedback/STUDENT/posenc/exercises.html    feedback for each student: a summary of each exercise's points
                                            and failed checks first; no hidden test shown
  grades.csv                                every grade in the gradebook, for your spreadsheet
  reports/class_report.html                 each exercise's score distribution and most frequent failing checks
Done in {time.perf_counter() - started:.0f} s.""")


if __name__ == "__main__":
    main()
