"""What the tests of inert pages share (tests/unit/test_inert.py, tests/unit/test_feedback_math.py): what in HTML
could run, and the feedback page's configuration as ``generate_feedback`` sets it."""

import re
from pathlib import Path

import nbgrader
from bs4 import BeautifulSoup
from traitlets.config import Config

FORMGRADER = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"

#: What may not be left, as a browser would read the cleaned HTML.
ACTIVE_TAGS = {"script", "iframe", "frame", "object", "embed", "applet", "form", "input", "button", "textarea",
               "select", "meta", "base", "link", "style", "svg", "math", "template", "body", "noscript"}


def active_parts(text, mathml=False):
    """What in HTML `text` could run, load, navigate or ask for input: tags, event handlers, URLs that are not
    a web page, a mail address, a place on the page or an embedded image, inline styles that fetch or move.
    With `mathml`, a ``<math>`` element (the engine's MathML of a formula) is not one; what it holds still counts."""
    found = []
    for element in BeautifulSoup(text, "html.parser").find_all(True):
        if element.name in ACTIVE_TAGS and not (mathml and element.name == "math"):
            found.append(element.name)
        for name, value in element.attrs.items():
            value = " ".join(value) if isinstance(value, list) else str(value)
            if name.startswith("on") or name in ("id", "target", "formaction", "action", "srcdoc", "data"):
                found.append(f"{element.name} {name}")
            if name == "href" and not re.match(r"^(https?:|mailto:|#)", value.strip(), re.I):
                found.append(f"{element.name} href={value}")
            if name == "src" and not value.startswith("data:image/"):
                found.append(f"{element.name} src={value}")
            if name == "style" and re.search(r"url|position|expression", value, re.I):
                found.append(f"{element.name} style={value}")
            if name == "class" and re.search(r"fixed|modal|navbar", value):
                found.append(f"{element.name} class={value}")
    return found


def feedback_config():
    """nbgrader's configuration of the feedback page, as generate_feedback sets it."""
    config = Config()
    config.HTMLExporter.extra_template_paths = [str(FORMGRADER / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
    return config


NBGRADER_RESOURCES = {"nbgrader": {"notebook": "exercises", "score": 1, "max_score": 2, "late_penalty": 0}}


def student_parts(page):
    """The HTML of what a page shows of the student's: outputs and rendered markdown."""
    soup = BeautifulSoup(page, "html.parser")
    return "".join(element.decode_contents() for element in soup.select(".output_subarea, .text_cell_render"))
