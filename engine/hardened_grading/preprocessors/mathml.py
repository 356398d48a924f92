"""TeX made MathML on the grader's side: the feedback page shows its math with no script.

The feedback page runs no script (its content security policy forbids every one, MathJax included), so a formula
would be shown as its TeX. :func:`tex_to_mathml` converts one formula to MathML Core, which Chromium and Firefox
render natively, with `latex2mathml <https://pypi.org/project/latex2mathml/>`_; the inert ``markdown2html``
(:mod:`hardened_grading.preprocessors.inert`) puts it in place of the formulas of markdown cells.

A formula may be a student's, so its MathML is never the converter's text: it is written again from the converter's
tree, with only the elements of :data:`ELEMENTS` and the attributes of :data:`ATTRIBUTES` (whose values are words
and lengths, :data:`VALUE`: no URL, no ``url()``, no script), every text escaped; then bleach cleans it once more
with the same lists. A formula the converter rejects, one with an element outside the list (``\\boxed``: MathML's
``menclose``, not in MathML Core), or one longer than :data:`MAX_TEX_CHARS` has no MathML (None): it stays as its
TeX, escaped. Nothing here raises. The MathML of a formula is kept for the next page (:func:`functools.lru_cache`):
a class's feedback shows the release's formulas once per student.
"""

import functools
import html
import re

import bleach
from latex2mathml.converter import Converter

#: The MathML Core elements the converter writes (``math``, tokens, layouts, scripts, tables), and nothing else:
#: no ``semantics``, ``annotation-xml`` (which may hold HTML) or ``maction``.
ELEMENTS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "mtext", "mspace", "msub", "msup", "msubsup", "munder", "mover", "munderover",
    "mfrac", "msqrt", "mroot", "mstyle", "mpadded", "mphantom", "mtable", "mtr", "mtd"})
#: The MathML Core attributes the converter writes: how a formula is laid out, never what it links to or runs.
#: The converter's others are dropped: ``href`` (``\\href``), ``style`` (``\\style``), ``xmlns`` (HTML needs none),
#: and those outside MathML Core (``columnalign``, ``columnlines``, ``columnspacing``, ``rowspacing``, ``linebreak``).
ATTRIBUTES = frozenset({
    "display", "displaystyle", "scriptlevel", "mathvariant", "mathcolor", "mathbackground", "mathsize", "form", "fence",
    "separator", "lspace", "rspace", "stretchy", "minsize", "maxsize", "largeop", "movablelimits", "symmetric",
    "accent", "accentunder", "linethickness", "width", "height", "depth", "voffset"})
#: What an attribute's value may be: a word, a number, a length or a colour (``true``, ``double-struck``,
#: ``-0.167em``, ``#ff0000``); no parenthesis, colon or slash, so no URL and no ``url()``.
VALUE = re.compile(r"^[\w#.%+\- ]{0,64}$")
#: A formula longer than this many characters stays as its TeX (no honest formula is nearly as long).
MAX_TEX_CHARS = 10_000


class _Refused(Exception):
    """A formula whose MathML would hold an element outside :data:`ELEMENTS`."""


def _allowed_attribute(tag, name, value):
    """Whether attribute `name` of MathML element `tag` may keep `value`."""
    return tag in ELEMENTS and name in ATTRIBUTES and isinstance(value, str) and bool(VALUE.match(value))


_cleaner = bleach.Cleaner(tags=ELEMENTS, attributes=_allowed_attribute, protocols=[], strip=True,
                          strip_comments=True)


def _text(text):
    """`text` of the converter's tree (which writes characters as references: ``&#x0211D;``), escaped."""
    return html.escape(html.unescape(text or ""), quote=False)


def _write(element):
    """MathML `element` and its children, written from the tree with the allowed elements and attributes only.

    Raises
    ------
    _Refused
        If an element is not one of :data:`ELEMENTS`.
    """
    if element.tag not in ELEMENTS:
        raise _Refused(element.tag)
    attributes = "".join(f' {name}="{html.escape(value)}"' for name, value in element.attrib.items()
                         if _allowed_attribute(element.tag, name, value))
    children = "".join(_write(child) + _text(child.tail) for child in element)
    return f"<{element.tag}{attributes}>{_text(element.text)}{children}</{element.tag}>"


@functools.lru_cache(maxsize=4096)  # the release's formulas, in every student's feedback
def tex_to_mathml(tex, display=False):
    """MathML Core of formula `tex`, made inert, or None where it has none.

    Parameters
    ----------
    tex : str
        The formula, without its delimiters (``\\frac{1}{2}``).
    display : bool
        Displayed (``$$...$$``, ``\\[...\\]``, an environment) rather than inline (``$...$``, ``\\(...\\)``).

    Returns
    -------
    str or None
        A ``<math>`` element, or None when the converter rejects `tex` (or fails on it in any way), when its MathML
        would hold an element outside :data:`ELEMENTS`, or when `tex` is longer than :data:`MAX_TEX_CHARS`.
    """
    tex = str(tex)
    if len(tex) > MAX_TEX_CHARS or not tex.strip():
        return None
    try:
        tree = Converter(display="block" if display else "inline").convert_to_element(tex)
        written = _write(tree)
    except Exception:  # noqa: BLE001 -- the converter's errors are many and not all its own; any one: TeX it stays
        return None
    cleaned = _cleaner.clean(written)
    return cleaned if cleaned.startswith("<math") else None
