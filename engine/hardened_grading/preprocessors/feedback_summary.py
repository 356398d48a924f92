"""``FeedbackSummary``: the feedback's summary, and the hidden tests hidden, before the due date or always."""

import datetime

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Enum, Unicode

from ..cells import META, is_test_cell, nbgrader_meta, unreadable_reason
from ..summary import HIDDEN_MESSAGES, hide_hidden_tests, part_by_pattern, summary, summary_html, unreadable_html


def utc_now():
    """Now, as nbgrader's gradebook keeps times: UTC, without a time zone."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def due_date(resources):
    """The due date of the student's assignment in nbgrader's gradebook (``nbgrader db assignment add
    --duedate``), with the student's extension if any, as naive UTC; None without one, or without a
    gradebook (`resources` is what ``nbgrader generate_feedback`` gives a preprocessor)."""
    info = (resources or {}).get("nbgrader", {})
    if not info.get("db_url") or not info.get("assignment"):
        return None
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(info["db_url"]) as gradebook:
        try:
            return gradebook.find_submission(info["assignment"], info.get("student")).duedate
        except MissingEntry:
            try:
                return gradebook.find_assignment(info["assignment"]).duedate
            except MissingEntry:
                return None


def full_messages(setting, due, now=None):
    """Whether a failed hidden check's full message may be shown: `setting` is a value of
    FeedbackSummary.hidden_messages; with "auto", once the due date `due` (naive UTC) has passed; never
    without a due date."""
    if setting not in HIDDEN_MESSAGES:
        raise ValueError(f"FeedbackSummary.hidden_messages is {setting!r}: use one of {', '.join(HIDDEN_MESSAGES)}")
    if setting != "auto":
        return setting == "after-due"
    return due is not None and (now or utc_now()) >= due


def points_by_hand(notebook):
    """The points of the notebook's cells that are graded by hand: graded answers (an nbgrader solution that is also
    a grade cell) and tasks."""
    return sum(float(nbgrader_meta(cell).get("points", 0)) for cell in notebook.cells
               if nbgrader_meta(cell).get("task") or (nbgrader_meta(cell).get("grade") and nbgrader_meta(cell).get("solution")))


class FeedbackSummary(Preprocessor):
    """Put the summary in the feedback's resources, and hide the hidden tests (unless told not to)."""

    show_hidden_tests = Bool(False, help=(
        "Show the full test cells, hidden tests included, in the feedback (nbgrader's own behaviour); "
        "they hold the expected values, concept answers included, so only after the due date. "
        "Off: each test cell shows its visible part and, in place of its hidden tests, how many of their "
        "checks passed and the messages of those that failed (as hidden_messages says), so feedback can go "
        "out before the deadline.")).tag(config=True)
    hidden_messages = Enum(list(HIDDEN_MESSAGES), default_value="auto", help=(
        "How much a failed hidden check's message says, in the summary and the test cells. "
        "'before-due': what it tried and that it was wrong, with no expected value and no got-versus-"
        "expected detail (what a course's own checker may show a learner); 'after-due': the full message (a concept question's "
        "answer is never in it); 'auto': 'after-due' once the assignment's due date in nbgrader's gradebook "
        "(with the student's extension) has passed, 'before-due' before it and when there is no due "
        "date.")).tag(config=True)
    part_pattern = Unicode("", help=(
        "A regular expression whose first group, found in a test cell's grade id, names the part of the "
        "assignment it belongs to: the summary has one row per part (r'^(ex\\d+)_': one row per "
        "ex01, ex02, ...). Empty (the default): one row per test cell.")).tag(config=True)
    part_name = Unicode("test", help=(
        "What the summary calls a row (part_pattern's parts): 'test' (the default, a row per test cell), "
        "'exercise', 'problem'.")).tag(config=True)
    enabled = Bool(True)

    def preprocess(self, nb, resources):
        due = None
        if self.hidden_messages == "auto":
            try:
                due = due_date(resources)
            except Exception as error:  # a gradebook that cannot be read gives nothing away
                self.log.warning("hardened_grading feedback: could not read the due date from the gradebook (%s: %s); "
                                 "failed hidden checks say only what they tried. Set "
                                 "c.FeedbackSummary.hidden_messages to 'after-due' to show them in full.",
                                 type(error).__name__, error)
        full = full_messages(self.hidden_messages, due)
        part_of = part_by_pattern(self.part_pattern)
        rows, reason = summary(nb, full, part_of), unreadable_reason(nb)
        resources.setdefault(META, {})["summary_html"] = (unreadable_html(reason, rows) if reason
                                                              else summary_html(rows, full, points_by_hand(nb), self.part_name))
        if reason:  # said once, at the top
            nb.cells = nb.cells[1:]
        if not self.show_hidden_tests:
            for cell in nb.cells:
                if is_test_cell(cell):
                    hide_hidden_tests(cell, full, part_of)
        return nb, resources
