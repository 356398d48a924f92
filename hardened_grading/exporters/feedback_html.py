"""Feedback a student learns from: a summary at the top, and no hidden test shown.

``nbgrader generate_feedback`` runs :class:`FeedbackSummary` after nbgrader's ``GetGrades``
(``GenerateFeedback.preprocessors`` in ``nbgrader_config.py``), and renders the course's template
``hardened_grading/templates/summary_first``, which puts the summary first.

- :func:`summary` is one row per exercise with its points and, for each exercise that lost points,
  the failing checks with their messages (the function, the input, what was expected, what came back).
  ``posenc-check`` prints the same summary.
- Unless ``FeedbackSummary.show_hidden_tests`` is set, each test cell shows its visible part and, in
  place of its hidden tests, a line such as ``# hidden tests: 7 checks, 5 passed`` followed by the
  messages of the failed ones; tracebacks that would quote the tests are cut to their last line.
- ``FeedbackSummary.hidden_messages`` says how much of a failed hidden check's message a student reads
  (:func:`check_message`, which ``posenc-check`` uses too): before the due date, what was tried and that
  it was wrong; after it, the full message, which still never holds a concept question's answer (the
  ``check_answer`` helper of ``authoring/check_helpers.py`` never shows it).
"""

from pathlib import Path

import nbgrader
from nbconvert.exporters import HTMLExporter

from ..preprocessors.inert import FEEDBACK_CSP, InertContent, markdown2html


class SummaryFirstHTMLExporter(HTMLExporter):
    """nbgrader's feedback page with the course's summary first (``templates/summary_first``).

    ``GenerateFeedback.exporter_class`` in ``nbgrader_config.py``: a class of its own, so that the
    template applies to the feedback and not to formgrader's pages, which also export HTML.

    The page runs no script (:mod:`hardened_grading.preprocessors.inert`): its outputs are made inert (:class:`InertContent`,
    first of its preprocessors, whatever the configuration says), its markdown is rendered by the inert
    ``markdown2html``, and its ``<head>`` starts with a content security policy that forbids every script
    (:data:`FEEDBACK_CSP`); there is no MathJax, so math is shown as its TeX.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # set after the configuration, which names nbgrader's own template for every HTMLExporter
        self.extra_template_basedirs = [
            str(Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"),
            str(Path(__file__).resolve().parents[1] / "templates")]
        self.template_name = "summary_first"
        self.template_file = "summary_first.html.j2"
        self.template_paths = self._template_paths()  # its default was found with the old names

    def _init_preprocessors(self):
        super()._init_preprocessors()
        if not any(isinstance(each, InertContent) for each in self._preprocessors):
            self._preprocessors.insert(0, InertContent(parent=self))

    def default_filters(self):
        yield from super().default_filters()
        yield ("markdown2html", markdown2html)

    def _init_resources(self, resources):
        resources = super()._init_resources(resources)
        resources["content_security_policy"] = FEEDBACK_CSP
        return resources
