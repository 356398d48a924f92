"""``grades.csv`` of the engine's export (:mod:`hardened_grading.exporters.grades_csv`), from a gradebook in a
temporary SQLite file: its rows, in order."""

import csv

from nbgrader.api import Gradebook

from hardened_grading.exporters.grades_csv import RoundedCsvExportPlugin


def exported(tmp_path, students, assignments):
    """The rows of ``grades.csv`` exported from a gradebook with `students` and `assignments` added in the order
    given (as ``nbgrader autograde`` adds them: without names)."""
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        for name in assignments:
            gradebook.add_assignment(name)
        for student in students:
            gradebook.add_student(student)
        RoundedCsvExportPlugin(to=str(tmp_path / "grades.csv")).export(gradebook)
    with open(tmp_path / "grades.csv", newline="") as stream:
        return list(csv.DictReader(stream))


def test_rows_are_sorted_by_student_then_assignment(tmp_path):
    rows = exported(tmp_path, ["s3", "s10", "s1", "s2"], ["ps2", "ps1"])
    assert [(row["student_id"], row["assignment"]) for row in rows] == [
        ("s1", "ps1"), ("s1", "ps2"), ("s10", "ps1"), ("s10", "ps2"),
        ("s2", "ps1"), ("s2", "ps2"), ("s3", "ps1"), ("s3", "ps2")]


def test_a_student_who_submitted_nothing_scores_0_without_a_timestamp(tmp_path):
    [row] = exported(tmp_path, ["s1"], ["ps1"])
    assert (row["timestamp"], row["raw_score"], row["score"], row["max_score"]) == ("", "0.0", "0.0", "0.0")
