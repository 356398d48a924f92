"""Model answers in the feedback, after the due date, on a course nobody here wrote: nbgrader's documentation course.

The course (``USER_GUIDE`` of :mod:`tests.helpers.foreign_courses`) is graded once with the engine's adoption lines
(docs/engine.md), then given feedback by a real ``nbgrader generate_feedback`` with a due date in the gradebook that
is still to come, and again with one that has passed. Its ``problem2.ipynb`` has two answers graded by hand,
``part-a`` and ``part-b``, written as nbgrader's docs write them: the whole cell is the model answer. The text of a
model answer is read here from nbgrader's own source notebook, never from the engine.
"""

import re
import shutil

import nbformat
import pytest

from ..helpers.foreign_courses import USER_GUIDE, nbgrader, user_guide_with_engine

ASSIGNMENT, NOTEBOOK = USER_GUIDE.assignment, "problem2"


def model_sentences():
    """``{grade id: its model answer's first sentence}`` of problem2's hand-graded answers, from nbgrader's files."""
    source = nbformat.read(USER_GUIDE.folder / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    found = {cell.metadata["nbgrader"]["grade_id"]: cell.source.split(". ")[0] for cell in source.cells
             if cell.metadata.get("nbgrader", {}).get("grade") and cell.metadata["nbgrader"].get("solution")
             and cell.cell_type == "markdown"}
    assert sorted(found) == ["part-a", "part-b"], found
    return found


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """nbgrader's documentation course, graded with the engine."""
    folder = user_guide_with_engine(tmp_path_factory.mktemp("user_guide"))
    done = nbgrader(folder, "autograde", ASSIGNMENT)
    assert done.returncode == 0, done.stdout[-3000:]
    return folder


def feedback_text(course, tmp_path, due):
    """The visible text of hacker's problem2 feedback, made in a copy of `course` whose assignment is due at `due`."""
    copy = tmp_path / "course"
    shutil.copytree(course, copy, symlinks=True)
    for step in (("db", "assignment", "add", ASSIGNMENT, f"--duedate={due}"), ("generate_feedback", ASSIGNMENT)):
        done = nbgrader(copy, *step)
        assert done.returncode == 0, done.stdout[-3000:]
    page = (copy / "feedback" / "hacker" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_before_the_due_date_the_feedback_has_no_model_answer(course, tmp_path):
    text = feedback_text(course, tmp_path, "2999-01-01 00:00:00 UTC")
    assert "It computes the fibonacci sequence using recursion" in text
    assert "Model answer" not in text
    for grade_id, sentence in model_sentences().items():
        assert sentence not in text, f"{grade_id}'s model answer is in the feedback before the due date"


def test_after_the_due_date_each_model_answer_follows_the_students_answer(course, tmp_path):
    text = feedback_text(course, tmp_path, "2020-01-01 00:00:00 UTC")
    sentences = model_sentences()
    assert text.count("Model answer") == len(sentences)
    for grade_id, sentence in sentences.items():
        assert sentence in text, f"{grade_id}'s model answer is not in the feedback after the due date"
    # hacker answers part-a and part-b with the same words: each model answer comes right after one of them
    own = [found.start() for found in re.finditer("It computes the fibonacci sequence using recursion", text)]
    assert len(own) == 2
    assert own[0] < text.index(sentences["part-a"]) < own[1] < text.index(sentences["part-b"])
