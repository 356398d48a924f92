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


def exercise_scores(gradebook, assignment=ASSIGNMENT, notebook=NOTEBOOK_ID):
    """``{student: {exercise: (score, max_score)}}`` for every graded submission in `gradebook`: the
    path of a SQLite file, or a database URL (``postgresql://...``).

    Students without a submitted notebook are left out.
    """
    return grade_table.part_scores(gradebook, assignment, notebook, part_of=exercise_of)


def format_table(scores):
    """A plain-text table: one row per student, one column per exercise, then the total."""
    return grade_table.format_table(scores)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gradebook", nargs="?", default="gradebook.db")
    args = parser.parse_args(argv)
    print(format_table(exercise_scores(args.gradebook)))


if __name__ == "__main__":
    main()
