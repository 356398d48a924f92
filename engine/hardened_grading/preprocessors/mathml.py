"""TeX made MathML on the grader's side: the feedback page shows its math with no script.

The feedback page runs no script (its content security policy forbids every one, MathJax included), so a formula
would be shown as its TeX. :func:`tex_to_mathml` converts one formula to MathML Core, which Chromium and Firefox
render natively, with `latex2mathml <https://pypi.org/project/latex2mathml/>`_; the inert ``markdown2html``
(:mod:`hardened_grading.preprocessors.inert`) puts it in place of the formulas of markdown cells.

A formula may be a student's, so its MathML is never the converter's text: it is written again from the converter's
tree, with only the elements of :data:`ELEMENTS` and the attributes of :data:`ATTRIBUTES` (whose values are words
and lengths, :data:`VALUE`: no URL, no ``url()``, no script; a length no larger than :data:`LENGTH_EM`, so no box
drawn over the page), every text escaped; then bleach cleans it once more
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

#: The attributes whose value is a length (or a size): a number is kept only within :data:`LENGTH_EM`, so that a
#: formula cannot draw a box over the page (``\\rule{1000em}{1000em}``) or move its text onto the grader's.
LENGTHS = frozenset({"width", "height", "depth", "voffset", "lspace", "rspace", "minsize", "maxsize", "mathsize",
                     "linethickness"})
#: The lengths kept, in em, from the most negative to the largest: LaTeX's own are well inside (``\\qquad`` is
#: 2em, ``\\Huge`` 2.49em, ``\\Bigg`` 2.47em, a negative ``\\hspace{-3em}``).
LENGTH_EM = (-3.0, 10.0)
#: How many em one of each unit is (a pt at a 10pt font; a mu is 1/18 em; no unit and % are multiples of a size).
EM_PER_UNIT = {"em": 1.0, "ex": 0.5, "mu": 1 / 18, "px": 1 / 16, "pt": 0.1, "pc": 1.2, "in": 7.2, "cm": 7.2 / 2.54,
               "mm": 0.72 / 2.54, "%": 0.01, "": 1.0}
_LENGTH = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*(em|ex|mu|px|pt|pc|in|cm|mm|%)?\s*$")
#: ``scriptlevel`` kept within these (each level down scales the text by about 0.71: -3 is about 2.8 times).
SCRIPTLEVELS = range(-3, 9)


class _Refused(Exception):
    """A formula whose MathML would hold an element outside :data:`ELEMENTS`."""


def _allowed_attribute(tag, name, value):
    """Whether attribute `name` of MathML element `tag` may keep `value`."""
    return (tag in ELEMENTS and name in ATTRIBUTES and isinstance(value, str) and bool(VALUE.match(value))
            and _bounded(name, value))


def _bounded(name, value):
    """Whether `value` of attribute `name` is a size a formula may have: a length within :data:`LENGTH_EM`, a
    ``scriptlevel`` within :data:`SCRIPTLEVELS`; a word (``thick``, ``negativethinmathspace``) or a colour is."""
    if name == "scriptlevel":
        return value.strip().lstrip("+-").isdigit() and int(value) in SCRIPTLEVELS
    if name not in LENGTHS or not any(c.isdigit() for c in value):
        return True
    length = _LENGTH.match(value)
    if length is None:
        return False
    em = float(length.group(1)) * EM_PER_UNIT[length.group(2) or ""]
    return LENGTH_EM[0] <= em <= LENGTH_EM[1]


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
