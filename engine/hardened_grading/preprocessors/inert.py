"""Student content that never runs where a person views it: outputs and markdown made inert.

A graded notebook is shown to people twice: as the feedback page (``nbgrader generate_feedback``), which the
student and the instructor open in a browser, and by nbgrader's formgrader, on the Jupyter server's own
origin, with the instructor's token. Whatever the student's code displayed (``text/html``, SVG,
``application/javascript``, widget views, markdown) and whatever the student wrote in a markdown cell (raw
HTML: ``<script>``, ``onerror=``, ``javascript:`` links, ``<iframe srcdoc>``, ``<meta http-equiv=refresh>``,
``<base>``, forms) is untrusted. This module keeps what honest work shows, and drops what could run:

- :func:`clean_html`: HTML made inert with `bleach <https://bleach.readthedocs.io>`_ (the sanitizer nbconvert
  itself ships), after the elements whose content is never text (``script``, ``style``, ``iframe``, ``svg``,
  ``math``, ...) are removed, with BeautifulSoup. Tables, text formatting, headings, lists, code and
  ``data:`` images stay; every attribute that could run or load something (``on*``, ``href`` to anything but
  http(s), mailto or a fragment, ``style`` beyond plain colours and alignment, ``id``, ``target``, a class of
  the page's own layout) is dropped. A removed element leaves a note such as ``[script removed]``; so does an
  image that is not embedded as a ``data:`` URL (it would be fetched from somewhere). Tags bleach does not
  know (``<form>``, ``<input>``) are shown as text, not obeyed.
- :func:`inert_svg`: an SVG image is kept as it is when it holds nothing active (no script, no ``on*``
  attribute, no ``foreignObject``, no link or reference outside itself), else dropped.
- :class:`InertContent`: a preprocessor that applies these to a notebook's outputs. Only passive types are
  kept (plain text, PNG, JPEG, GIF, LaTeX), with ``text/html`` cleaned, ``text/markdown`` rendered and
  cleaned into ``text/html``, an SVG kept only when inert; every other type (``application/javascript``,
  widget views, plotly, ...) is removed, with a line that says so when nothing else is left to show. A
  display's metadata keeps its size and alt text only (no ``isolated`` frame, no file name), an execution
  count is a number or nothing, and the notebook's widget state goes. It
  runs in ``Autograde.autograde_preprocessors`` after ``ResilientExecute`` (the graded notebook on disk, which
  formgrader and JupyterLab open, holds nothing active), and in ``HTMLExporter.preprocessors`` (every HTML
  page nbgrader makes from a notebook with this configuration: the feedback and formgrader's view, even of a
  notebook graded before).
- :func:`markdown2html`: nbconvert's markdown filter, its HTML cleaned, its formulas (``$...$``, ``$$...$$``,
  ``\\(...\\)``, ``\\[...\\]``, ``\\begin{cases}...``) made MathML (:mod:`hardened_grading.preprocessors.mathml`) and
  put back once the rest is cleaned. ``HTMLExporter.filters`` puts it in place of nbconvert's own, for markdown
  cells and comments, in the feedback and in formgrader (whose templates render markdown cells without
  nbconvert's own ``sanitize_html``). ``text/markdown`` outputs are rendered the same, their math left as TeX.

Cleaning takes time (bleach parses HTML as a browser does), so its cost is bounded: HTML nested more than
:data:`MAX_DEPTH` deep, and markdown beyond :data:`MAX_MARKDOWN_CHARS` (a cell) or :data:`MAX_PAGE_MARKDOWN_CHARS`
(a page), are shown as their source, escaped; ``InertContent.max_html_kb`` caps the HTML outputs cleaned per notebook.

The feedback page also carries a content security policy that forbids every script (:data:`FEEDBACK_CSP`,
put first in its ``<head>`` by the template ``summary_first``). MathJax is a script, and the page runs none: its
markdown's math is MathML, made when the page is (browsers render MathML Core natively); a formula the converter
cannot make MathML of stays as its TeX, escaped. Formulas beyond :data:`MAX_PAGE_FORMULAS` on one page stay as TeX too.
"""

import html
import re
import secrets
import xml.etree.ElementTree as ElementTree

import bleach
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, CSSSanitizer
from bs4 import BeautifulSoup
from jinja2 import pass_context
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Int, List, Unicode

from .mathml import tex_to_mathml

#: The feedback page's content security policy: no script of any origin, inline or not; no frame, object,
#: form, base URL or connection; images and fonts only from ``data:`` URLs; inline styles (the page's own).
FEEDBACK_CSP = ("default-src 'none'; script-src 'none'; object-src 'none'; frame-src 'none'; child-src 'none'; "
                "worker-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'; "
                "style-src 'unsafe-inline'; img-src data:; font-src data:; media-src data:")

#: Elements whose content is never text to show: removed with their content before bleach sees the rest.
#: ``style`` goes silently (pandas puts one before every table); the others leave a note.
REMOVED = ("script", "style", "template", "noscript", "iframe", "frame", "frameset", "object", "embed", "applet",
           "svg", "math", "head", "title", "meta", "link", "base", "textarea", "select", "xmp", "noembed",
           "noframes", "plaintext", "portal", "audio", "video", "canvas")
SILENT = ("style",)

#: The tags student HTML keeps; any other is shown as text (``&lt;form&gt;``), not obeyed.
TAGS = frozenset({
    "a", "abbr", "acronym", "b", "bdi", "bdo", "blockquote", "br", "caption", "center", "cite", "code", "col",
    "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "rp", "rt", "ruby", "s",
    "samp", "small", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
    "thead", "time", "tr", "tt", "u", "ul", "var", "wbr"})
#: Attributes by tag ("*": any tag), besides those :func:`_allowed_attribute` looks at more closely.
ATTRIBUTES = {
    "*": {"title", "lang", "dir", "align", "valign", "style", "class"},
    "a": {"href"}, "img": {"src", "alt", "width", "height"}, "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"}, "col": {"span"}, "colgroup": {"span"}, "ol": {"start", "type"},
    "table": {"border"}, "details": {"open"}, "time": {"datetime"}, "abbr": {"title"}, "q": {"cite"},
}
#: CSS properties an inline style keeps: bleach's list without ``cursor`` (which may load a URL).
CSS_PROPERTIES = frozenset(ALLOWED_CSS_PROPERTIES) - {"cursor"}
#: A class a student's HTML may set: pygments' token classes (``k``, ``nf``, ``s1``), a highlighted block's
#: (``highlight``, ``hl-python``), pandas' ``dataframe``; never the page's own layout classes (bootstrap's
#: ``navbar-fixed-top``), which could lay a student's box over the page.
CLASS_NAME = re.compile(r"^(highlight|hl-[\w+-]+|dataframe|anchor-link|[a-z]{1,3}[0-9]?)$")
#: ``data:`` URLs an image may have as its source.
DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.I)
LINK_SCHEMES = ("http", "https", "mailto")

_cleaner = bleach.Cleaner(
    tags=TAGS, attributes=lambda tag, name, value: _allowed_attribute(tag, name, value),
    protocols=[*LINK_SCHEMES, "data"], strip=False, strip_comments=True,
    css_sanitizer=CSSSanitizer(allowed_css_properties=CSS_PROPERTIES))


def _allowed_attribute(tag, name, value):
    """Whether attribute `name` of `tag` may keep `value` (bleach then also checks URLs' schemes)."""
    if name not in ATTRIBUTES["*"] and name not in ATTRIBUTES.get(tag, ()):
        return False
    value = value.strip()
    if name == "class":
        return all(CLASS_NAME.match(token) for token in value.split())
    if name == "src":  # an image only from the page itself: nothing is fetched
        return bool(DATA_IMAGE.match(value))
    if name == "href":  # a link a person may follow: the web, mail, or a place on the page
        scheme = value.split(":", 1)[0].lower() if ":" in value else ""
        return value.startswith("#") or scheme in LINK_SCHEMES
    if name == "cite":
        return value.lower().startswith(("http://", "https://"))
    return True


#: HTML nested deeper than this many elements is shown as its source: bleach's parser (html5lib) takes time that grows
#: with the square of the depth (50,000 nested divs, half a MiB: 85 s), and no honest output nests that deep.
MAX_DEPTH = 100
#: Markdown longer than this many characters is shown as its source, not rendered: in one cell, and in all the
#: cells of one page.
MAX_MARKDOWN_CHARS = 200_000
MAX_PAGE_MARKDOWN_CHARS = 1_000_000
#: Formulas made MathML on one page, at most; the rest stay as their TeX. A formula costs about a quarter of a
#: millisecond (converted, then cleaned by bleach), so a page's math costs at most a second or two; the course's
#: longest notebook has some 640 formulas.
MAX_PAGE_FORMULAS = 5_000


def as_source(text, why):
    """`text` shown as its source, escaped, under a line that says `why`: inert, in time linear in its length."""
    return f"<p>[{why}: shown as its source]</p><pre>{html.escape(str(text), quote=False)}</pre>"


def _too_deep(soup):
    """Whether an element of the parsed `soup` is nested more than MAX_DEPTH deep (one pass, no recursion)."""
    depth = {id(soup): 0}
    for element in soup.descendants:
        if element.name is not None:
            depth[id(element)] = depth.get(id(element.parent), 0) + 1
            if depth[id(element)] > MAX_DEPTH:
                return True
    return False


def clean_html(text):
    """`text`, HTML from a student, made inert: see the module's description. Idempotent."""
    text = str(text)
    if "<" not in text and "&" not in text:
        return text
    soup = BeautifulSoup(text, "html.parser")
    if _too_deep(soup):
        return as_source(text, f"HTML nested more than {MAX_DEPTH} elements deep")
    for element in soup.find_all(REMOVED):
        if element.parent is None:  # inside one removed already
            continue
        element.replace_with("" if element.name in SILENT else f"[{element.name} removed]")
    for image in soup.find_all("img"):  # an image that would be fetched from anywhere: not shown, said so
        if not DATA_IMAGE.match(str(image.get("src", "")).strip()):
            image.replace_with("[image removed: not embedded in the notebook]")
    return _cleaner.clean(str(soup))


SVG_NAMESPACE = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
#: SVG elements that run, embed or animate something: an SVG holding one is not shown.
ACTIVE_SVG = frozenset({"script", "foreignObject", "iframe", "object", "embed", "animate", "set", "animateMotion",
                        "animateTransform", "handler", "listener", "discard"})

URL_REFERENCE = re.compile(r"url\(\s*['\"]?\s*([^)'\"\s]*)", re.I)


def _refers_outside(text):
    """Whether CSS or an attribute's `text` refers to anything but a fragment of its own document."""
    return "@import" in text.lower() or any(not ref.startswith("#") for ref in URL_REFERENCE.findall(text))


def inert_svg(text):
    """`text` when it is an SVG image that holds nothing active, else None: it parses as XML with an ``<svg>``
    root and no entity declarations, has no element of :data:`ACTIVE_SVG`, no ``on*`` attribute, no ``href`` but
    to a place in itself or, for an ``<image>``, a ``data:`` picture, and no CSS ``url()`` or ``@import`` of
    anything outside itself. (An SVG is shown as an ``<img>``, where no script
    runs anyway; this keeps one that is not from ever being rendered in a live page.)"""
    text = "".join(text) if isinstance(text, list) else str(text)
    if "<!ENTITY" in text.upper():
        return None
    try:
        root = ElementTree.fromstring(text.encode())
    except (ElementTree.ParseError, ValueError):
        return None
    if root.tag not in ("svg", f"{SVG_NAMESPACE}svg"):
        return None
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag.rpartition("}")[2] in ACTIVE_SVG:
            return None
        for name, value in element.attrib.items():
            local = name.rpartition("}")[2].lower()
            if local.startswith("on"):
                return None
            if local == "href" or name == XLINK_HREF:  # a place in itself; an <image> may embed a picture
                embedded = element.tag.rpartition("}")[2] == "image" and DATA_IMAGE.match(value.strip())
                if not (value.strip().startswith("#") or embedded):
                    return None
            if _refers_outside(value):
                return None
        if element.tag.rpartition("}")[2] == "style" and _refers_outside(element.text or ""):
            return None
    return text


class _MathAside(IPythonRenderer):
    """nbconvert's markdown renderer that puts each formula aside, in :attr:`formulas`, and leaves in its place a
    word no one can write beforehand (:meth:`placeholder`): the formula goes back, as MathML, once the rest of the
    HTML is clean (:func:`_put_back`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.nonce = secrets.token_hex(8)
        #: Each formula as (its TeX, whether it is displayed, what nbconvert's own renderer writes of it).
        self.formulas = []

    def placeholder(self, index):
        """The word left in place of formula `index`: letters and digits, which markdown and bleach keep."""
        return f"hgmath{self.nonce}n{index}x"

    def _aside(self, tex, display, stock):
        self.formulas.append((tex, display, stock))
        return self.placeholder(len(self.formulas) - 1)

    def block_math(self, body):
        return self._aside(body, True, super().block_math(body))

    def inline_math(self, body):
        return self._aside(body, False, super().inline_math(body))

    def latex_environment(self, name, body):
        return self._aside(f"\\begin{{{name}}}{body}\\end{{{name}}}", True, super().latex_environment(name, body))


def _renderer(context, renderer=IPythonRenderer):
    """nbconvert's own markdown renderer (or `renderer`, a subclass), with the cell's attachments and the notebook's
    folder."""
    cell = context.get("cell", {}) if context is not None else {}
    resources = context.get("resources", {}) if context is not None else {}
    return renderer(escape=False, attachments=cell.get("attachments", {}) if hasattr(cell, "get") else {},
                    path=(resources or {}).get("metadata", {}).get("path", ""))


def _formula_html(formula, as_mathml):
    """Formula (TeX, displayed, nbconvert's text of it) as HTML: MathML when `as_mathml` and the converter can,
    else nbconvert's text (the TeX with its delimiters, escaped)."""
    tex, display, stock = formula
    mathml = tex_to_mathml(tex, display) if as_mathml else None
    return mathml if mathml is not None else stock


def _put_back(cleaned, renderer, mathml_left):
    """`cleaned` (the HTML of the markdown, made inert) with each placeholder of `renderer` in a text replaced by
    its formula, MathML while `mathml_left` (a number of formulas) lasts; in an attribute (an image's alt text,
    a heading's anchor), by its TeX."""
    pattern = re.compile(renderer.placeholder(r"(\d+)"))
    soup = BeautifulSoup(cleaned, "html.parser")
    for element in soup.find_all(True):  # attributes: the TeX, as nbconvert's own renderer writes it
        for name, value in element.attrs.items():
            if isinstance(value, str) and pattern.search(value):
                element[name] = pattern.sub(lambda match: html.unescape(renderer.formulas[int(match[1])][2]), value)
    for text in soup.find_all(string=pattern):
        pieces = pattern.split(str(text))  # text, index, text, index, ..., text
        parts = []
        for position, piece in enumerate(pieces):
            if position % 2 == 0:
                parts.append(html.escape(piece, quote=False))
            else:
                parts.append(_formula_html(renderer.formulas[int(piece)], mathml_left > 0))
                mathml_left -= 1
        text.replace_with(BeautifulSoup("".join(parts), "html.parser"))
    return str(soup)


@pass_context
def markdown2html(context, source, mathml=True):
    """nbconvert's ``markdown2html``, its HTML made inert (:func:`clean_html`), its formulas MathML (or, with
    `mathml` false, or a formula that has none, its TeX). Markdown beyond MAX_MARKDOWN_CHARS, in one cell or in
    all a page renders (counted in its resources), is shown as its source; formulas beyond MAX_PAGE_FORMULAS on a
    page stay as TeX."""
    source = str(source)
    resources = context.get("resources") if context is not None else None
    budget = resources if isinstance(resources, dict) else {}
    left = budget.get("hardened_grading_markdown_left", MAX_PAGE_MARKDOWN_CHARS)
    if len(source) > min(MAX_MARKDOWN_CHARS, left):
        return as_source(source, f"markdown beyond {min(MAX_MARKDOWN_CHARS, left)} characters")
    budget["hardened_grading_markdown_left"] = left - len(source)
    renderer = _renderer(context, _MathAside)
    cleaned = clean_html(MarkdownWithMath(renderer=renderer).render(source))
    if not renderer.formulas:
        return cleaned
    formulas_left = budget.get("hardened_grading_formulas_left", MAX_PAGE_FORMULAS) if mathml else 0
    if mathml:
        budget["hardened_grading_formulas_left"] = formulas_left - len(renderer.formulas)
    return _put_back(cleaned, renderer, formulas_left)


def markdown_to_inert_html(source):
    """Markdown from a student (a ``text/markdown`` output), as inert HTML, its math as TeX: an output is cleaned
    again, by :func:`clean_html`, wherever a page is made of it, and MathML would not stay."""
    return markdown2html(None, source, mathml=False)


#: What a display's metadata keeps, by mime type: its size and alt text, nothing that names a file or a frame.
KEPT_METADATA = {"width": (int, float), "height": (int, float), "unconfined": (bool,), "alt": (str,)}


def _count(value):
    """An execution count as a template may print it: a whole number, or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class InertContent(Preprocessor):
    """Make every output of a notebook inert: see the module's description."""

    passive_mimetypes = List(Unicode(), default_value=["text/plain", "image/png", "image/jpeg", "image/gif",
                                                       "text/latex"], help=(
        "Output types kept as they are: nbconvert and JupyterLab show them as text or as images, so "
        "nothing in them can run. text/html and text/markdown are always kept, cleaned (scripts, event "
        "handlers, frames, forms and links that run code removed); image/svg+xml is kept when it holds "
        "nothing active; every other type (application/javascript, widget views, plotly, ...) is "
        "removed.")).tag(config=True)
    note = Unicode("[{types} output removed: it could run code where the notebook is viewed]", help=(
        "The line put in place of an output whose every type was removed; {types} names them.")).tag(config=True)
    max_html_kb = Int(1024, help=(
        "HTML and markdown outputs cleaned per notebook, KiB. Cleaning takes time (bleach parses as a browser "
        "does, about 100 KiB a second at worst), so a notebook whose outputs hold more keeps of the rest only "
        "their plain text, with a note: neither grading nor a page made of the notebook can be slowed down "
        "without end. Honest notebooks hold far less.")).tag(config=True)
    enabled = Bool(True, help="Run this preprocessor (on by default: it exists to be run).").tag(config=True)

    def preprocess(self, nb, resources):
        self._html_left = self.max_html_kb * 1024
        widgets = nb.metadata.pop("widgets", None)  # a widget state: the page would load the widget manager
        if widgets is not None:
            self.log.info("hardened_grading: the notebook's widget state was removed (it would load scripts)")
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            # the kernel reports its execution counts, and templates print them as they are ("In [...]")
            cell.execution_count = _count(cell.get("execution_count"))
            for output in cell.get("outputs", []):
                if "execution_count" in output:
                    output["execution_count"] = _count(output["execution_count"])
                if output.get("output_type") in ("display_data", "execute_result", "update_display_data"):
                    self.make_inert(output)
        return cell, resources

    def _within_budget(self, value):
        """Whether `value` (HTML or markdown) fits in what is left of max_html_kb; if so, it is counted."""
        size = sum(map(len, value)) if isinstance(value, list) else len(str(value))
        left = getattr(self, "_html_left", self.max_html_kb * 1024)
        self._html_left = left - size if size <= left else left
        return size <= left

    def make_inert(self, output):
        """Keep of `output`'s data what is passive or can be cleaned; note what was removed."""
        data, removed, over, kept = output.get("data", {}), [], [], {}
        for mimetype, value in data.items():
            if mimetype in self.passive_mimetypes:
                kept[mimetype] = value
            elif mimetype in ("text/html", "text/markdown") and not self._within_budget(value):
                over.append(mimetype)
            elif mimetype == "text/html":
                kept[mimetype] = clean_html("".join(value) if isinstance(value, list) else value)
            elif mimetype == "text/markdown" and "text/html" not in data:
                kept["text/html"] = markdown_to_inert_html("".join(value) if isinstance(value, list) else value)
            elif mimetype == "image/svg+xml" and inert_svg(value) is not None:
                kept[mimetype] = value
            elif mimetype != "text/markdown":
                removed.append(mimetype)
        if removed:
            self.log.info("hardened_grading: removed output types %s (they could run code where viewed)", removed)
            if not kept:
                kept["text/plain"] = self.note.format(types=", ".join(removed))
        if over:
            self.log.info("hardened_grading: %s output not cleaned, beyond InertContent.max_html_kb", over)
            if not kept:
                kept["text/plain"] = (f"[{', '.join(over)} output not shown: the notebook's outputs hold more than "
                                      f"InertContent.max_html_kb = {self.max_html_kb} KiB of HTML]")
        output["data"] = kept
        metadata = output.get("metadata", {})
        kept_metadata = {mimetype: {key: value for key, value in metadata[mimetype].items()
                                    if key in KEPT_METADATA and isinstance(value, KEPT_METADATA[key])}
                         for mimetype in kept if isinstance(metadata.get(mimetype), dict)}
        output["metadata"] = {mimetype: each for mimetype, each in kept_metadata.items() if each}
        return output
