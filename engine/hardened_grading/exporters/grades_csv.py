"""``nbgrader export`` with every score to 2 decimals (``c.ExportApp.plugin_class`` in nbgrader_config.py).

nbgrader's own ``CsvExportPlugin`` writes the gradebook's floats as Python prints them, so a sum of partial
credits reads ``74.24000000000001``. This plugin writes the same file (the same columns, rows and order,
``grades.csv`` unless ``--to``), with the scores rounded to 2 decimals, as every other place of the course
shows them, and with proper CSV quoting of names.
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


class RoundedCsvExportPlugin(CsvExportPlugin):
    """nbgrader's CSV export, its scores to 2 decimals."""

    def export(self, gradebook):
        dest = self.to or "grades.csv"
        students = {str(s) for s in self.student}
        assignments = {str(a) for a in self.assignment}
        self.log.info("Exporting grades to %s", dest)
        with open(dest, "w", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\n")
            writer.writeheader()
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    row = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
                           "last_name": student.last_name, "first_name": student.first_name,
                           "email": student.email, "max_score": assignment.max_score}
                    try:
                        submission = gradebook.find_submission(assignment.name, student.id)
                    except MissingEntry:  # nothing submitted: 0, as nbgrader's own export says
                        row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
                    else:
                        penalty = submission.late_submission_penalty or 0.0
                        row.update(timestamp=submission.timestamp, raw_score=submission.score,
                                   late_submission_penalty=penalty, score=max(0.0, submission.score - penalty))
                    for key in SCORES:
                        row[key] = two_decimals(row[key] or 0.0)
                    writer.writerow({key: "" if value is None else str(value) for key, value in row.items()})
