"""A file that could not be read: its feedback leads with that fact and what to do, once.

Unit tests on in-memory notebooks (milliseconds): the graded notebook of an unreadable file is the blank
release with a first cell that says why (:class:`hardened_grading.exporters.notebook.TolerantNotebookExporter`, proven
with real ``nbgrader autograde`` runs in ``tests/grading/test_grading.py``); here, what its feedback makes of it.
"""

import html
import re

import nbformat

from hardened_grading.preprocessors.feedback_summary import FeedbackSummary
from hardened_grading.exporters.notebook import UNREADABLE_WHAT_TO_DO, _reason_cell
from posenc_course.layout import RELEASE_NOTEBOOK, unreadable_reason

REASON = "The file exercises.ipynb is not a readable Jupyter notebook (NotJSONError: Notebook does not appear to be JSON)."


def graded_as_blank():
    notebook = nbformat.read(RELEASE_NOTEBOOK, as_version=4)
    notebook.cells.insert(0, _reason_cell(REASON))
    return notebook


def feedback_of(notebook):
    notebook, resources = FeedbackSummary().preprocess(notebook, {})
    return notebook, resources["hardened_grading"]["summary_html"]


def text(markup):
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def test_the_reason_is_found_only_on_the_notebook_of_an_unreadable_file():
    assert unreadable_reason(graded_as_blank()) == REASON
    assert unreadable_reason(nbformat.read(RELEASE_NOTEBOOK, as_version=4)) is None
    assert unreadable_reason(nbformat.v4.new_notebook()) is None


def test_the_feedback_leads_with_the_reason_and_what_to_do_and_lists_no_unanswered_check():
    _, summary = feedback_of(graded_as_blank())
    shown = text(summary)
    assert shown.startswith("Your submission could not be graded as sent: 0 of")
    assert REASON in shown and " ".join(UNREADABLE_WHAT_TO_DO.split()) in shown
    assert "not answered yet" not in shown and "NotImplementedError" not in shown


def test_the_reason_is_said_once():
    notebook, summary = feedback_of(graded_as_blank())
    body = "\n".join(cell.source for cell in notebook.cells)
    assert text(summary).count(REASON) == 1 and REASON not in body


def test_a_readable_submissions_feedback_is_the_usual_summary():
    notebook, summary = feedback_of(nbformat.read(RELEASE_NOTEBOOK, as_version=4))
    assert text(summary).startswith("Summary:") and len(notebook.cells) == len(nbformat.read(RELEASE_NOTEBOOK, as_version=4).cells)
