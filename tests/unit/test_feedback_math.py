"""The feedback page's math is MathML, made when the page is (engine/hardened_grading/preprocessors/mathml.py): the
page runs no script, MathJax included, and browsers render MathML Core natively. On in-memory notebooks.

A formula is a student's as often as the course's: what it becomes holds MathML elements and attributes of the
engine's lists only, nothing that runs, loads or links; a formula the converter rejects stays as its TeX, escaped.
"""

import copy
import re

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from hardened_grading.exporters.feedback_html import SummaryFirstHTMLExporter
from hardened_grading.preprocessors import inert, mathml
from hardened_grading.preprocessors.inert import InertContent, markdown2html
from posenc_course.layout import ROOT

from ..helpers.inert_pages import NBGRADER_RESOURCES, active_parts, feedback_config, student_parts

#: A markdown cell with each kind of formula. In markdown, LaTeX's delimiters take two backslashes (``\\(``,
#: ``\\[``), as nbconvert's renderer reads them: one is markdown's escape.
MATH_NOTEBOOK = new_notebook(cells=[
    new_markdown_cell(r"""The encoding $PE(p) \in \mathbb{R}^{d}$ of position $p$, by \\(\theta_i\\):

$$PE(p)_{2i} = \sin\Big(\frac{p}{10000^{2i/d}}\Big)$$

and

\\[\operatorname{rot}(\theta) = \begin{pmatrix} \cos\theta & -\sin\theta \\ \sin\theta & \cos\theta \end{pmatrix}\\]
"""),
    new_code_cell("x = 1"),
])


def feedback_page(notebook):
    """The feedback page of `notebook`, as ``generate_feedback`` makes it."""
    page, _ = SummaryFirstHTMLExporter(config=feedback_config()).from_notebook_node(
        copy.deepcopy(notebook), resources=copy.deepcopy(NBGRADER_RESOURCES))
    return page


def maths(html):
    """The ``<math>`` elements of `html`."""
    return BeautifulSoup(html, "html.parser").find_all("math")


def only_mathml_inside(html):
    """Whether every element inside each ``<math>`` of `html` is one of the engine's MathML elements, with only
    the engine's MathML attributes."""
    return all(element.name in mathml.ELEMENTS and set(element.attrs) <= mathml.ATTRIBUTES
               for math in maths(html) for element in [math, *math.find_all(True)])


def test_the_feedback_shows_inline_and_displayed_math_as_mathml():
    page = feedback_page(MATH_NOTEBOOK)
    found = maths(page)
    assert len(found) == 5, found
    assert [math.get("display") for math in found] == ["inline", "inline", "inline", "block", "block"]
    assert "$PE" not in page and "\\mathbb" not in page and "\\begin{pmatrix}" not in page and "$$" not in page
    assert found[0].find("mi", string="\u211d")  # \mathbb{R}, as its character
    assert found[4].find("mtable") and found[3].find("mfrac")
    assert only_mathml_inside(page) and not re.search(r"<script", page, re.I)


#: Formulas that would run or load something if their TeX were obeyed as HTML, or their MathML kept as written.
HOSTILE_TEX = {
    "script": "$<script>alert(1)</script>$",
    "href": "$\\href{javascript:alert(1)}{x}$",
    "text-script": "$\\text{<script>alert(1)</script>}$",
    "text-img": "$\\text{<img src=x onerror=alert(1)>}$",
    "style-url": "$\\style{background-image: url(https://evil.invalid/b)}{x}$",
    "color-url": "$\\color{url(https://evil.invalid/b)}{x}$",
    "display-href": "$$\\href{javascript:alert(1)}{\\frac{1}{2}}$$",
    "text-quotes": "$\\text{\"><svg onload=alert(1)>}$",
}


@pytest.mark.parametrize("tex", HOSTILE_TEX.values(), ids=HOSTILE_TEX.keys())
def test_a_hostile_formula_becomes_mathml_with_nothing_active(tex):
    rendered = markdown2html({}, f"before {tex} after")
    assert maths(rendered), rendered  # made MathML: what it holds is text, not HTML
    assert active_parts(rendered, mathml=True) == [], rendered
    assert only_mathml_inside(rendered), rendered
    assert not re.search(r"javascript:|url\(|<\s*(script|img|svg)\b", rendered, re.I), rendered  # text, escaped


def test_the_feedback_page_of_hostile_formulas_has_no_script():
    page = feedback_page(new_notebook(cells=[new_markdown_cell("\n\n".join(HOSTILE_TEX.values()))]))
    assert len(maths(page)) == len(HOSTILE_TEX)
    assert not re.search(r"<script", page, re.I) and "javascript:" not in student_parts(page)
    assert active_parts(student_parts(page), mathml=True) == [] and only_mathml_inside(page)


def test_a_formula_the_converter_rejects_stays_as_its_tex_escaped():
    rendered = markdown2html({}, "good $x^2$, broken $\\frac{a<b}{$ and $\\boxed{1}$ (MathML's menclose)")
    assert len(maths(rendered)) == 1, rendered
    assert "$\\frac{a&lt;b}{$" in rendered and "$\\boxed{1}$" in rendered
    assert mathml.tex_to_mathml("\\frac{1}{") is None and mathml.tex_to_mathml("{" * 5000) is None
    assert mathml.tex_to_mathml("x" * (mathml.MAX_TEX_CHARS + 1)) is None


def test_a_formula_in_an_attribute_stays_its_tex_and_a_guessed_placeholder_stays_text():
    rendered = markdown2html({}, "![a $x<y$ plot](data:image/png;base64,iVBORw0KGgo=)\n\n## Title $z$\n\n"
                                 "hgmath0123456789abcdefn0x")
    soup = BeautifulSoup(rendered, "html.parser")
    assert soup.find("img")["alt"] == "a $x<y$ plot"
    assert soup.find("h2").find("math") and "hgmath0123456789abcdefn0x" in soup.get_text()


def test_formulas_beyond_the_pages_budget_stay_as_tex(monkeypatch):
    monkeypatch.setattr(inert, "MAX_PAGE_FORMULAS", 3)
    resources = {}
    first = markdown2html({"resources": resources}, "$a$ $b$")
    second = markdown2html({"resources": resources}, "$c$ $d$")
    assert len(maths(first)) == 2 and len(maths(second)) == 1 and "$d$" in second


def test_a_markdown_output_keeps_its_math_as_tex_and_cleaning_it_twice_changes_nothing():
    notebook = new_notebook(cells=[new_code_cell("x", outputs=[
        new_output("display_data", data={"text/markdown": "an output's $x^2$"})])])
    once, _ = InertContent().preprocess(notebook, {})
    assert once.cells[0].outputs[0].data["text/html"] == "<p>an output's $x^2$</p>\n"
    twice, _ = InertContent().preprocess(copy.deepcopy(once), {})
    assert twice == once


def test_every_formula_of_the_courses_notebooks_becomes_mathml():
    """The converter knows the TeX the course writes (``\\mathbb``, ``\\operatorname``, ``\\lfloor``, ``cases``,
    ``pmatrix``, ``\\underbrace``, ``\\text``, ...): no formula of a released notebook is left as TeX."""
    notebooks = sorted((ROOT / "release").glob("*/*.ipynb"))
    assert len(notebooks) >= 4
    for path in notebooks:
        for cell in nbformat.read(str(path), as_version=4).cells:
            if cell.cell_type == "markdown":
                renderer = inert._renderer(None, inert._MathAside)
                inert.MarkdownWithMath(renderer=renderer).render(cell.source)
                for tex, display, _ in renderer.formulas:
                    assert mathml.tex_to_mathml(tex, display) is not None, (path.name, tex)


#: Formulas whose sizes would draw over the page: a black box of 1000em (covering the grader's words), a negative
#: kern that moves text 500em onto what precedes it, a space that pushes the page sideways, text made 30 times larger.
OVERSIZED_TEX = {
    "rule-over-the-page": (r"\rule{1000em}{1000em}", "mspace"),
    "kern-back-onto-the-page": (r"\mathrm{\kern-500em x}", "mspace"),
    "mkern-back": (r"\mkern-999mu x", "mspace"),
    "hskip-sideways": (r"\hskip 5000pt x", "mspace"),
    "hspace-sideways": (r"\hspace{1000em} x", "mspace"),
}


def sizes(rendered):
    """``(tag, attribute, value)`` of every size-valued attribute in `rendered`'s MathML."""
    return [(tag.name, name, value) for tag in BeautifulSoup(rendered, "html.parser").find_all(True)
            for name, value in tag.attrs.items() if name in mathml.LENGTHS | {"scriptlevel"}]


@pytest.mark.parametrize("tex, tag", OVERSIZED_TEX.values(), ids=OVERSIZED_TEX.keys())
def test_a_formula_cannot_draw_over_the_page(tex, tag):
    """Its element is kept (the formula is shown), its size is not: a length beyond LENGTH_EM is dropped."""
    rendered = mathml.tex_to_mathml(tex)
    assert rendered and f"<{tag}" in rendered, rendered
    assert sizes(rendered) == [], rendered


#: LaTeX's own sizes, which a formula keeps: spaces, big delimiters, \Huge, a rule under a word, a negative space.
HONEST_SIZES = {r"\qquad x": "2em", r"\Bigg(": "2.470em", r"\Huge x": "2.49em", r"\rule{5em}{0.4pt}": "0.4pt",
                r"\hspace{-3em} x": "-3em", r"\smash{x}": "0px", r"\scriptscriptstyle x": "2", r"x\!y":
                "negativethinmathspace"}


@pytest.mark.parametrize("tex", HONEST_SIZES)
def test_latexs_own_sizes_are_kept(tex):
    rendered = mathml.tex_to_mathml(tex)
    assert HONEST_SIZES[tex] in [value for _, _, value in sizes(rendered)], rendered


def test_no_formula_of_the_course_loses_a_size():
    """The bounds drop nothing of the course's own formulas: each keeps every size the converter gives it."""
    from latex2mathml.converter import convert

    for path in sorted((ROOT / "release").glob("*/*.ipynb")):
        for cell in nbformat.read(str(path), as_version=4).cells:
            if cell.cell_type == "markdown":
                renderer = inert._renderer(None, inert._MathAside)
                inert.MarkdownWithMath(renderer=renderer).render(cell.source)
                for tex, display, _ in renderer.formulas:
                    converted = sizes(convert(tex, display="block" if display else "inline"))
                    assert sizes(mathml.tex_to_mathml(tex, display)) == converted, (path.name, tex)
