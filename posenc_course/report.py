"""Per-student, per-exercise scores from an nbgrader gradebook.

    python -m posenc_course.report [gradebook.db]

The engine's grade table (:mod:`hardened_grading.class_grading.grade_table`, ``hardened-scores``) with this
course's parts, its exercises (:func:`posenc_course.layout.exercise_of`), its first assignment and its one notebook.
"""

import argparse

from hardened_grading.class_grading import grade_table
from hardened_grading.incidents import STOPPED  # noqa: F401  (what a stopped cell's error means)
from hardened_grading.incidents import incidents as engine_incidents

from .layout import ASSIGNMENT, NOTEBOOK_ID, exercise_of


def incidents(notebook):
    """:func:`hardened_grading.incidents.incidents` of a graded notebook, each cell's place with its exercise."""
    return engine_incidents(notebook, part_of=exercise_of)


#: The column of the points given by hand (the written reflections), in :func:`exercise_scores` with ``by_hand=True``.
BY_HAND = "by hand"


def exercise_scores(gradebook, assignment=ASSIGNMENT, notebook=NOTEBOOK_ID, by_hand=False):
    """``{student: {exercise: (score, max_score)}}`` of the automatic points, for every graded submission in
    `gradebook`: the path of a SQLite file, or a database URL (``postgresql://...``). With `by_hand`, the points
    given by hand (the reflections, nbgrader's manually graded answers) too, apart, as the part :data:`BY_HAND`.

    Students without a submitted notebook are left out.
    """
    return grade_table.part_scores(gradebook, assignment, notebook, part_of=exercise_of,
                                   by_hand=BY_HAND if by_hand else False)


def format_table(scores):
    """A plain-text table: one row per student, one column per exercise, then the points given by hand (when
    `scores` has them), then the total."""
    table = grade_table.format_table(scores, last=(BY_HAND,))
    if any(BY_HAND in row for row in scores.values()):
        table += (f"\n({BY_HAND}: the written reflections, graded in formgrader; 0 until a grader scores them, so that "
                  "the totals are of the automatic points until then)")
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gradebook", nargs="?", default="gradebook.db")
    args = parser.parse_args(argv)
    print(format_table(exercise_scores(args.gradebook, by_hand=True)))


if __name__ == "__main__":
    main()
