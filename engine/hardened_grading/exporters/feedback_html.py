"""``SummaryFirstHTMLExporter``: the feedback page, with its summary first and its student content inert."""

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
    (:data:`FEEDBACK_CSP`); there is no MathJax: the markdown's math is MathML, made by ``markdown2html``
    (:mod:`hardened_grading.preprocessors.mathml`), which browsers render natively.
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
