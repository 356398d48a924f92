"""``nbgrader export`` with every score to 2 decimals (``c.ExportApp.plugin_class`` in nbgrader_config.py).

nbgrader's own ``CsvExportPlugin`` writes the gradebook's floats as Python prints them, so a sum of partial
credits reads ``74.24000000000001``, and its rows in the gradebook's order of students (by last name, then first
name: in no order at all when the gradebook has no names, as ``nbgrader autograde`` adds students). This plugin
writes the same file (the same columns, ``grades.csv`` unless ``--to``), with the scores rounded to 2 decimals, as
every other place of the course shows them, proper CSV quoting of names, and its rows sorted by student id, then
assignment: the same gradebook always gives the same file.
"""

import csv

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
           "raw_score", "late_submission_penalty", "score", "max_score")
SCORES = ("raw_score", "late_submission_penalty", "score", "max_score")


def two_decimals(value):
    """A score as it is shown: 74.24000000000001 -> 74.24, 79 -> 79.0 (as nbgrader writes a whole one)."""
    return round(float(value), 2)


def grade_row(gradebook, assignment, student):
    """The row of `student` in `assignment` (nbgrader's gradebook records), as the CSV file writes it.

    Returns
    -------
    dict
        ``{column: text}`` of :data:`COLUMNS`; a student who submitted nothing scores 0, as nbgrader's own export
        says, with no timestamp.
    """
    row = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
           "last_name": student.last_name, "first_name": student.first_name,
           "email": student.email, "max_score": assignment.max_score}
    try:
        submission = gradebook.find_submission(assignment.name, student.id)
    except MissingEntry:
        row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
    else:
        penalty = submission.late_submission_penalty or 0.0
        row.update(timestamp=submission.timestamp, raw_score=submission.score,
                   late_submission_penalty=penalty, score=max(0.0, submission.score - penalty))
    for key in SCORES:
        row[key] = two_decimals(row[key] or 0.0)
    return {key: "" if value is None else str(value) for key, value in row.items()}


def sorted_rows(gradebook, assignments=(), students=()):
    """The rows of every student in every assignment of `gradebook` (only those named, when `assignments` or
    `students` names some), sorted by student id, then assignment."""
    rows = [grade_row(gradebook, assignment, student)
            for assignment in gradebook.assignments if not assignments or assignment.name in assignments
            for student in gradebook.students if not students or student.id in students]
    return sorted(rows, key=lambda row: (row["student_id"], row["assignment"]))


class RoundedCsvExportPlugin(CsvExportPlugin):
    """nbgrader's CSV export, its scores to 2 decimals, its rows sorted by student id, then assignment."""

    def export(self, gradebook):
        dest = self.to or "grades.csv"
        self.log.info("Exporting grades to %s", dest)
        rows = sorted_rows(gradebook, {str(a) for a in self.assignment}, {str(s) for s in self.student})
        with open(dest, "w", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
