"""Per-student, per-exercise scores from an nbgrader gradebook.

    python -m posenc_course.report [gradebook.db]
"""

import argparse
from collections import defaultdict

from nbgrader.api import Gradebook, MissingEntry

from hardened_grading.incidents import STOPPED  # noqa: F401  (what a stopped cell's error means)
from hardened_grading.incidents import incidents as engine_incidents

from .layout import ASSIGNMENT, NOTEBOOK_ID, exercise_of

def incidents(notebook):
    """:func:`hardened_grading.incidents.incidents` of a graded notebook, each cell's place with its exercise."""
    return engine_incidents(notebook, part_of=exercise_of)


def exercise_scores(gradebook, assignment=ASSIGNMENT, notebook=NOTEBOOK_ID):
    """``{student: {exercise: (score, max_score)}}`` for every graded submission in `gradebook`: the
    path of a SQLite file, or a database URL (``postgresql://...``).

    Students without a submitted notebook are left out.
    """
    scores = {}
    url = str(gradebook) if "://" in str(gradebook) else f"sqlite:///{gradebook}"
    with Gradebook(url) as gradebook:
        for student in gradebook.students:
            try:
                submitted = gradebook.find_submission_notebook(notebook, assignment, student.id)
            except MissingEntry:
                continue
            per_exercise = defaultdict(lambda: [0.0, 0.0])
            for grade in submitted.grades:
                per_exercise[exercise_of(grade.name)][0] += grade.score
                per_exercise[exercise_of(grade.name)][1] += grade.max_score
            # to 2 decimals, as partial credit is given: 2.7 + 3 + 2 is 7.7, not 7.700000000000001
            scores[student.id] = {ex: (round(score, 2), maximum) for ex, (score, maximum) in sorted(per_exercise.items())}
    return scores


def format_table(scores):
    """A plain-text table: one row per student, one column per exercise, then the total."""
    if not scores:
        return "(no graded submissions)"
    exercises = sorted({ex for row in scores.values() for ex in row})
    maxima = {ex: max(row[ex][1] for row in scores.values() if ex in row) for ex in exercises}
    width = max(len("student"), *(len(s) for s in scores))
    header = f"{'student':<{width}} " + " ".join(f"{ex:>5}" for ex in exercises) + "   total"
    lines = [header, f"{'(max)':<{width}} " + " ".join(f"{maxima[ex]:>5g}" for ex in exercises)
             + f"   {sum(maxima.values()):g}", "-" * len(header)]
    for student, row in sorted(scores.items()):
        cells = " ".join(f"{row[ex][0]:>5g}" if ex in row else f"{'-':>5}" for ex in exercises)
        total = sum(score for score, _ in row.values())
        lines.append(f"{student:<{width}} {cells}   {total:g}/{sum(m for _, m in row.values()):g}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gradebook", nargs="?", default="gradebook.db")
    args = parser.parse_args(argv)
    print(format_table(exercise_scores(args.gradebook)))


if __name__ == "__main__":
    main()
