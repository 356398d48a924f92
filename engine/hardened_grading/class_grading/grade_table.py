"""``hardened-scores``: each student's score in each part of a notebook, from nbgrader's gradebook, as a plain table.

    hardened-scores                                  # in the course directory: its only assignment and notebook
    hardened-scores --assignment ps1 --notebook problem1 --part-pattern '(sum_of_squares|squares)'
    hardened-scores /srv/course --db-url postgresql://grader@db/course

A part is a group of grade cells: the first group of ``--part-pattern`` (a regular expression, searched in each
grade id, as :func:`hardened_grading.summary.part_by_pattern` reads it), or the whole grade id where it does not
match. Without one, the course's ``c.FeedbackSummary.part_pattern``, the feedback's own parts; when that is empty,
each grade cell is a part of its own. A part's score is the sum of its cells' scores in the gradebook (an
instructor's manual score where there is one, else the automatic one; a cell not graded yet counts 0), and its
maximum the sum of their points.
"""

import argparse
import sys
from collections import defaultdict

from ..errors import UsageError
from ..summary import each_test_cell
from .course import (configured_parts, course_folder, default_assignment, default_notebook, gradebook_of,
                     part_function)
from .gradebook import safe_url

PROGRAM = "hardened-scores"
COLUMN = 5  #: the narrowest column of a part, in characters


def as_gradebook_url(gradebook):
    """`gradebook` as SQLAlchemy's URL: a URL as it is (``postgresql://...``, ``sqlite:///...``), a path as a SQLite
    file's."""
    return str(gradebook) if "://" in str(gradebook) else f"sqlite:///{gradebook}"


def graded_by_hand(notebook):
    """The names of the grade cells of `notebook` (nbgrader's gradebook Notebook) that a person grades: its manually
    graded answers (grade cells that are solution cells too) and its tasks."""
    answers = {cell.name for cell in notebook.solution_cells}
    return {cell.name for cell in notebook.grade_cells if cell.name in answers} | {cell.name for cell in notebook.task_cells}


def part_scores(gradebook, assignment, notebook, *, part_of=each_test_cell, by_hand=None):
    """``{student: {part: (score, max_score)}}`` for every graded submission of `notebook` (nbgrader's notebook id)
    of `assignment` in `gradebook` (a SQLite file's path, or a database URL).

    Parameters
    ----------
    part_of : callable
        ``part_of(grade id)``: the part a grade cell belongs to (:func:`hardened_grading.summary.part_by_pattern`);
        by default each is a part of its own.
    by_hand : None, False or str
        The grades of the cells graded by hand (nbgrader's manually graded answers and tasks): None, in the part
        `part_of` gives them, as any other; False, left out (the automatic points alone); a name, in one part of
        that name (the automatic points and those given by hand apart).

    Returns
    -------
    dict
        Students without that notebook submitted are left out. Scores are rounded to 2 decimals, as partial credit
        is given (2.7 + 3 + 2 is 7.7, not 7.700000000000001); parts are sorted by name.
    """
    from nbgrader.api import Gradebook, MissingEntry

    scores = {}
    with Gradebook(as_gradebook_url(gradebook)) as book:
        for student in book.students:
            try:
                submitted = book.find_submission_notebook(notebook, assignment, student.id)
            except MissingEntry:
                continue
            per_part = defaultdict(lambda: [0.0, 0.0])
            hand = graded_by_hand(submitted.notebook) if by_hand is not None else set()
            for grade in submitted.grades:
                if grade.name in hand and by_hand is False:
                    continue
                part = by_hand if grade.name in hand else part_of(grade.name)
                per_part[part][0] += grade.score or 0.0
                per_part[part][1] += grade.max_score or 0.0
            scores[student.id] = {part: (round(score, 2), maximum) for part, (score, maximum) in sorted(per_part.items())}
    return scores


def format_table(scores, last=()):
    """A plain-text table of :func:`part_scores`: one row per student, one column per part (as wide as its name, and
    at least COLUMN), in order of their names but those in `last` (such as the part of the points given by hand),
    then the total; ``(max)`` first, each part's points."""
    if not scores:
        return "(no graded submissions)"
    parts = sorted({part for row in scores.values() for part in row}, key=lambda part: (part in last, part))
    widths = {part: max(COLUMN, len(part)) for part in parts}
    maxima = {part: max(row[part][1] for row in scores.values() if part in row) for part in parts}
    width = max(len("student"), *(len(s) for s in scores))
    header = f"{'student':<{width}} " + " ".join(f"{part:>{widths[part]}}" for part in parts) + "   total"
    lines = [header, f"{'(max)':<{width}} " + " ".join(f"{maxima[part]:>{widths[part]}g}" for part in parts)
             + f"   {sum(maxima.values()):g}", "-" * len(header)]
    for student, row in sorted(scores.items()):
        cells = " ".join(f"{row[part][0]:>{widths[part]}g}" if part in row else f"{'-':>{widths[part]}}"
                         for part in parts)
        total = sum(score for score, _ in row.values())
        lines.append(f"{student:<{width}} {cells}   {total:g}/{sum(m for _, m in row.values()):g}")
    return "\n".join(lines)


def table(*, course=None, assignment=None, notebook=None, part_pattern=None, db_url=None):
    """The grade table of a course (:func:`format_table`), each argument defaulting to what the course says
    (:mod:`.course`): its only assignment and notebook, its feedback's part pattern, its gradebook."""
    course = course_folder(course)
    assignment = assignment or default_assignment(course)
    notebook = notebook or default_notebook(course, assignment)
    pattern = configured_parts(course)[0] if part_pattern is None else part_pattern
    url = gradebook_of(course, db_url)
    scores = part_scores(url, assignment, notebook, part_of=part_function(pattern))
    if not scores:
        raise UsageError(f"no graded submission of {notebook} of {assignment} in {safe_url(url)}: grade the class "
                         f"first (nbgrader autograde {assignment}, or hardened-grade {assignment})")
    return format_table(scores)


def parser(program=PROGRAM):
    p = argparse.ArgumentParser(prog=program, description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("course", nargs="?", default=None, help="the course directory (default: the one you are in)")
    p.add_argument("--assignment", default=None, help="the assignment (default: the only one in source/)")
    p.add_argument("--notebook", default=None, help="the notebook, as nbgrader names it: problem1 for problem1.ipynb "
                                                    "(default: the assignment's only one)")
    p.add_argument("--part-pattern", default=None, metavar="REGEX",
                   help="its first group, in a grade id, names the cell's part (default: the course's "
                        "c.FeedbackSummary.part_pattern; '': each grade cell is a part)")
    p.add_argument("--db-url", default=None, help="the gradebook's URL, in place of the course's "
                                                  "CourseDirectory.db_url (postgresql://...)")
    return p


def main(argv=None, program=PROGRAM):
    args = parser(program).parse_args(argv)
    try:
        print(table(course=args.course, assignment=args.assignment, notebook=args.notebook,
                    part_pattern=args.part_pattern, db_url=args.db_url))
    except UsageError as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
