"""The student's JupyterLab, in a real browser: Debian's chromium, driven by Playwright.

One JupyterLab for the whole module, started as a student starts it (``posenc-lab``, the student's
set-up of this environment), on the loopback with a token, in a temporary folder that holds the release
notebooks. Each test opens its own copy of a notebook and walks one step of a student's path through
the menus, the toolbar and the cells' editors: Run All on the stubs, a correct exercise typed in, a
common mistake, Validate, the theory notebook, and a student's first hour from a fresh copy to the feedback page,
read offline. JupyterLab is shut down at the end, whatever happens.

Screenshots go to the folder ``$POSENC_SCREENSHOTS`` (made if missing), for a person to look at;
without it, to pytest's temporary folder. Without chromium the module is skipped, with the reason:
``make install`` installs Debian's ``chromium`` when run as root.

JupyterLab runs with the student's own settings, those ``make install`` gives (``posenc-lab student``:
``overrides.json``), and none of the test's: what the test sees is what a student sees.
"""

import json
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings

import nbformat
import pytest

from posenc_course.course import generate, new_course, nbgrader_env, run_nbgrader
from posenc_course.layout import RELEASE_NOTEBOOK, ROOT
from posenc_course.authoring.notebook import LANGUAGE_INFO
from posenc_course.submissions import grade_id, is_test_cell, make_submission, reference_answers, write_submission

from ..helpers.lab import chromium, screenshot_folder, skip_without_chromium, stop_lab
from ..helpers.wrong_solutions import WRONG

playwright_api = pytest.importorskip("playwright.sync_api")

THEORY_RELEASE = ROOT / "release" / "theory" / "theory.ipynb"
RELEASE = nbformat.read(str(RELEASE_NOTEBOOK), as_version=4)
ERROR_OUTPUT = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
IDLE = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
#: Lines of the check helpers' own code: a failed check must not show them.
HELPER_CODE = ("raise AssertionError", "def check_", "_all_close(", "_all_equal(")
#: How long a step may take before the test calls it stuck (ms). A click's answer comes in well under a second on
#: an idle machine; a minute is room for two busy cores.
STEP_MS = 60_000
#: How long Run All or Validate of a whole notebook may take (ms). The theory notebook runs in about 10 s in a kernel on an idle
#: machine; in CI, beside two other test workers and chromium drawing its figures, it once took over a minute. Ten
#: minutes only tells a hang from a slow machine.
RUN_ALL_MS = 600_000
#: The module's JupyterLab while it runs (the ``lab`` fixture's), for a stalled step's report.
RUNNING_LAB = []


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_lab(folder, *options, instructor=False):
    """``posenc-lab`` serving `folder` on the loopback; return (process, base URL, token, log path)."""
    port, token = free_port(), secrets.token_hex(16)
    private = folder.parent / f"{folder.name}-jupyter"
    private.mkdir(parents=True, exist_ok=True)
    environment = dict(nbgrader_env(), JUPYTER_CONFIG_DIR=str(private / "config"),
                       JUPYTER_RUNTIME_DIR=str(private / "runtime"))
    log = private / "lab.log"
    command = [sys.executable, "-m", "posenc_course.student.lab", *(["--instructor"] if instructor else []),
               "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
               f"--LabApp.user_settings_dir={private / 'settings'}", f"--LabApp.workspaces_dir={private / 'workspaces'}",
               *options]
    with open(log, "w") as output:
        process = subprocess.Popen(command, cwd=folder, env=environment, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
            return process, base, token, log
        except (urllib.error.URLError, ConnectionError):
            if process.poll() is not None or time.monotonic() > deadline:
                stop_lab(process)
                pytest.fail(f"JupyterLab did not start; its log, {log}:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)


def http_status(url):
    try:
        return urllib.request.urlopen(url, timeout=30).status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    return screenshot_folder(tmp_path_factory)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One student's JupyterLab for the module, in a folder of release notebooks; stopped at the end."""
    skip_without_chromium()
    folder = tmp_path_factory.mktemp("student")
    shutil.copy(THEORY_RELEASE, folder / "theory.ipynb")
    process, base, token, log = start_lab(folder)
    started = time.monotonic()
    RUNNING_LAB.append(type("Lab", (), {"folder": folder, "base": base, "token": token, "log": log}))
    try:
        yield RUNNING_LAB[-1]
    finally:
        RUNNING_LAB.pop()
        stop_lab(process)
        print(f"\nthe browser tests' JupyterLab ran {time.monotonic() - started:.0f} s")


@pytest.fixture(scope="module")
def browser(lab):
    with playwright_api.sync_playwright() as playwright:
        # --no-sandbox: Chromium's own sandbox cannot start as root, as in CI.
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, screenshots, request):
    """A fresh browser page; at the end, a screenshot of how the test left it (``last-TEST.png``)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    try:
        yield page
    finally:
        page.screenshot(path=screenshots / f"last-{request.node.name}.png")
        context.close()


# A student's actions ----------------------------------------------------------------------------

def open_notebook(page, lab, name, notebook=None):
    """Write `notebook` (or the release) as `name` in the lab's folder, open it, wait for its kernel."""
    nbformat.write(notebook if notebook is not None else RELEASE, str(lab.folder / name))
    return goto(page, lab, name)


def goto(page, lab, name):
    """Open notebook `name` of the lab's folder; wait until it is shown and its kernel is idle."""
    # reset: a fresh workspace, with this notebook as its only document
    page.goto(f"{lab.base}/lab/tree/{name}?reset&token={lab.token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    page.wait_for_selector(".jp-NotebookPanel .jp-Spinner", state="detached")
    page.wait_for_selector(IDLE)
    assert page.locator(".jp-NotebookPanel").count() == 1
    return page


def menu(page, menu_name, item):
    """Click `item` in the menu bar's `menu_name` menu; return the item's classes as they were before the click
    (JupyterLab marks an item that would do nothing with ``lm-mod-disabled``)."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu_name}$")).click()
    label = page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$"))
    classes = label.locator("xpath=..").get_attribute("class")
    label.click()
    return classes


def menu_items(page, menu_name):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu_name}$")).click()
    items = [label.inner_text() for label in page.locator(".lm-Menu-itemLabel").all()]
    page.keyboard.press("Escape")
    return items


def cell(page, cell_id):
    """The cell of grade id `cell_id`, found by its place in the release notebook."""
    [index] = [n for n, c in enumerate(RELEASE.cells) if grade_id(c) == cell_id]
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def wait_until_run(page, the_cell, timeout=STEP_MS):
    """Wait until `the_cell` has run (its prompt holds a number) and the kernel is idle, for up to `timeout` ms.
    If it has not by then, fail with what the page, the server's kernels and JupyterLab's log say."""
    prompt = the_cell.locator(".jp-InputPrompt")
    try:
        page.wait_for_function("prompt => /\\[\\d+\\]/.test(prompt.textContent)", arg=prompt.element_handle(),
                               timeout=timeout)
        page.wait_for_selector(IDLE, timeout=timeout)
    except playwright_api.TimeoutError:
        pytest.fail(f"the cell did not finish running in {timeout / 1000:.0f} s; its prompt says "
                    f"{prompt.text_content()!r}\n{stall_report(page)}")


def kernel_status(page):
    """The kernel's status as the notebook's toolbar shows it: 'idle', 'busy', ..."""
    return page.locator(".jp-Notebook-ExecutionIndicator").first.get_attribute("data-status")


def stall_report(page):
    """What is known when a step never ends: the page's kernel status, its cells' prompts and first error, the
    server's kernels, and the end of JupyterLab's log (a kernel that died or restarts says so there)."""
    lab = RUNNING_LAB[-1]
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
    lines = [f"the page's kernel status: {kernel_status(page)!r}",
             f"its code cells' prompts, in order: {' '.join(p.strip() or '-' for p in prompts)}"]
    errors = page.locator(ERROR_OUTPUT)
    if errors.count():  # Run All stops at a cell's error: the cells after it never run
        lines += [f"its first error output, of {errors.count()}:", (errors.first.text_content() or "")[-2000:]]
    try:
        with urllib.request.urlopen(f"{lab.base}/api/kernels?token={lab.token}", timeout=30) as answer:
            kernels = json.load(answer)
        lines += [f"the server's kernels: {[(k['id'][:8], k['execution_state'], k['last_activity']) for k in kernels]}"]
    except (OSError, ValueError) as error:
        lines += [f"the server's kernels could not be listed: {error}"]
    return "\n".join(lines + [f"the end of JupyterLab's log, {lab.log}:", lab.log.read_text()[-4000:]])


def select(page, the_cell):
    """Click the cell's prompt, as a student does, until it is the active cell: on a loaded machine a click
    that comes while the notebook is still scrolling can land on no cell, and Ctrl+Enter would then run
    the cell that was active before."""
    for attempt in range(3):
        the_cell.scroll_into_view_if_needed()
        the_cell.locator(".jp-InputArea-prompt").click()
        try:
            playwright_api.expect(the_cell).to_have_class(re.compile(r"\bjp-mod-active\b"), timeout=5_000)
            return
        except AssertionError:
            if attempt == 2:
                raise


def run(page, cell_id):
    """Select the cell and run it (Ctrl+Enter), as a student does; return the cell."""
    the_cell = cell(page, cell_id)
    select(page, the_cell)
    page.keyboard.press("Control+Enter")
    wait_until_run(page, the_cell)
    return the_cell


def type_into(page, cell_id, code):
    """Replace the source of a cell with `code`, through its editor."""
    the_cell = cell(page, cell_id)
    the_cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)
    page.keyboard.press("Escape")


def errors(the_cell):
    return [output.inner_text() for output in the_cell.locator(ERROR_OUTPUT).all()]


def validate(page):
    """Click the notebook's Validate button (nbgrader's), which validates the file as saved; return the text
    of the results dialog."""
    page.get_by_role("button", name="Validate").click()
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_text(re.compile("Success!|The following cell failed|error", re.I)).first.wait_for(timeout=RUN_ALL_MS)
    return dialog.inner_text()


# The student's path -----------------------------------------------------------------------------

#: Whether some code cell's prompt differs from the one it had (``prompts``): Run All has started, for it marks every
#: cell it queues ``[*]`` at once, in the page, before the kernel runs any.
PROMPTS = "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(prompt => prompt.textContent)"
CHANGED = f"before => ({PROMPTS})().some((prompt, n) => prompt !== before[n])"


def start_run_all(page):
    """Run → Run All Cells, as a student does, and wait until the notebook has started to run.

    On a loaded CI machine this click has twice started nothing, in some 40 runs of the module: ten minutes later
    every prompt still said ``[ ]:`` and the kernel was idle, and it was never seen here (25 tries beside two busy
    loops). A student whose click does nothing clicks again; so does this, once, with a warning that says how the
    menu item looked. A second click that starts nothing fails the test, with the page's state."""
    for attempt in (1, 2):
        before = page.evaluate(PROMPTS)
        classes = menu(page, "Run", "Run All Cells")
        try:
            page.wait_for_function(CHANGED, arg=before, timeout=STEP_MS)
            return
        except playwright_api.TimeoutError:
            if attempt == 2:
                pytest.fail(f"Run All Cells, clicked twice, started nothing (the item's classes: {classes!r})\n"
                            f"{stall_report(page)}")
            warnings.warn(f"Run All Cells started nothing in {STEP_MS / 1000:.0f} s; clicked again (the item's "
                          f"classes: {classes!r}; the page's kernel status: {kernel_status(page)!r})")


def run_all(page):
    """Run → Run All Cells, as a student does; wait until the last cell (the progress cell) has run and the
    kernel is idle. Return the last cell."""
    start_run_all(page)
    last = page.locator(".jp-Notebook .jp-Cell").last
    wait_until_run(page, last, timeout=RUN_ALL_MS)
    last.locator(".jp-OutputArea-output").first.wait_for()
    return last


def in_view(page, element):
    """Whether some of `element` is on the screen."""
    box, height = element.bounding_box(), page.viewport_size["height"]
    return box is not None and box["y"] < height and box["y"] + box["height"] > 0


def test_run_all_on_the_stubs_runs_on_to_the_progress_cell(page, lab, screenshots):
    open_notebook(page, lab, "run-all.ipynb")
    progress = run_all(page)
    page.screenshot(path=screenshots / "01-run-all-on-the-stubs-lands-on-progress.png")
    # the student lands on the progress cell: the active cell, on screen
    playwright_api.expect(progress).to_have_class(re.compile(r"\bjp-mod-active\b"))
    assert in_view(page, progress)
    report = progress.locator(".jp-OutputArea-output").inner_text()
    progress.screenshot(path=screenshots / "01c-progress-cell-fresh.png")
    assert "0 of 10 exercises pass their visible tests" in report and "Next: exercise 1" in report, report
    assert report.count("not attempted") == 10, report
    assert errors(progress) == []
    # Run All went on past every failing test cell: each ran, and says not answered yet
    tests = [grade_id(c) for c in RELEASE.cells if is_test_cell(c)]
    for test in tests[:3] + tests[-1:]:
        [error] = errors(cell(page, test))
        assert "not answered yet" in error and not any(code in error for code in HELPER_CODE), error
    [error] = errors(cell(page, "ex01_slowest_period_test"))
    assert "ex01_slowest_period" in error
    [error] = errors(cell(page, "ex01_sinusoidal_row_test"))
    assert "NotImplementedError" in error and "not answered yet" in error


def test_run_all_on_a_half_done_notebook_says_what_to_fix_first(page, lab, screenshots):
    """ex01 with a mistake its visible tests catch, ex02 right, ex03's causal_mask cell a SyntaxError
    (which JupyterLab names by its cell id), the rest blank."""
    answers = {name: code for name, code in reference_answers().items() if name.startswith(("ex01", "ex02"))}
    answers["ex03_causal_mask"] = "def causal_mask(query_positions, key_positions:\n    pass"
    open_notebook(page, lab, "half-done.ipynb", make_submission(answers, WRONG["concat_layout"][1]))
    progress = run_all(page)
    page.screenshot(path=screenshots / "02-run-all-half-done-lands-on-progress.png")
    progress.screenshot(path=screenshots / "02c-progress-cell-half-done.png")
    assert in_view(page, progress)
    report = progress.locator(".jp-OutputArea-output").inner_text()
    assert "1 of 10 exercises pass" in report, report
    assert "Next: exercise 1, Sinusoidal rows: fix what its test cell ex01_sinusoidal_row_test says" in report
    assert "passes its visible tests (2 test cells)" in report and report.count("not attempted") == 7, report
    lines = report.splitlines()
    [row] = [number for number, line in enumerate(lines) if line.startswith("ex03")]
    # the row says which cell, the line under it what it raised
    assert "the answer cell ex03_causal_mask raised" in lines[row] and "SyntaxError" in lines[row + 1], report
    cell(page, "ex01_sinusoidal_row_test").scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "02b-the-cell-to-fix.png")


def test_a_name_not_defined_yet_gets_a_hint(page, lab, screenshots):
    open_notebook(page, lab, "out-of-order.ipynb")
    run(page, "check_helpers")
    [error] = errors(run(page, "ex01_slowest_period_test"))  # its answer cell never ran
    page.screenshot(path=screenshots / "03-a-test-cell-run-before-its-answer.png")
    assert "NameError" in error and "Run the cells above this one first" in error


def test_a_correct_ex01_typed_in_passes_its_visible_tests(page, lab, screenshots):
    answers = reference_answers()
    open_notebook(page, lab, "ex01.ipynb")
    run_all(page)
    tests = ["ex01_slowest_period_test", "ex01_sinusoidal_row_test", "ex01_sinusoidal_table_test"]
    for answer_cell, test_cell in zip(["ex01_slowest_period_answer", "ex01_sinusoidal_row", "ex01_sinusoidal_table"], tests):
        type_into(page, answer_cell, answers[answer_cell])
        run(page, answer_cell)
        run(page, test_cell)
    cell(page, "ex01_sinusoidal_row_test").scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "04-ex01-answered.png")
    for test_cell in tests:
        assert errors(cell(page, test_cell)) == [], f"{test_cell} failed"
        assert cell(page, test_cell).locator(".jp-OutputArea-output").count() == 0, "a passing test prints nothing"


def test_a_common_mistake_shows_its_message_and_not_the_helpers_code(page, lab, screenshots):
    exercise, functions = WRONG["concat_layout"]
    concatenated = functions["sinusoidal_row"]
    open_notebook(page, lab, "mistake.ipynb")
    run_all(page)
    type_into(page, "ex01_sinusoidal_row", concatenated.strip())
    run(page, "ex01_sinusoidal_row")
    [error] = errors(run(page, "ex01_sinusoidal_row_test"))
    page.screenshot(path=screenshots / "05-a-common-mistake.png")
    assert exercise == "ex01"
    assert "AssertionError: sinusoidal_row(0, 6): interleaved, sin(0) = 0 and cos(0) = 1 in every pair" in error
    assert "expected" in error and "got" in error
    assert not any(code in error for code in HELPER_CODE), error


def test_validate_says_success_for_a_solved_notebook(page, lab, screenshots):
    open_notebook(page, lab, "solved.ipynb", make_submission(reference_answers()))
    text = validate(page)
    page.screenshot(path=screenshots / "06-validate-solved.png")
    assert "Success! Your notebook passes all the tests." in text, text


def test_validate_lists_the_failing_cells_of_the_blank(page, lab, screenshots):
    open_notebook(page, lab, "blank.ipynb")
    text = validate(page)
    page.screenshot(path=screenshots / "07-validate-blank.png")
    failing = text.count("The following cell failed:")
    visible_tests = [c for c in RELEASE.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert failing == len(visible_tests), text[:2000]
    assert "not answered yet" in text and "Success" not in text


def test_the_theory_notebook_runs_with_its_figures_and_no_error(page, lab, screenshots):
    theory = nbformat.read(str(THEORY_RELEASE), as_version=4)
    figures = sum(c.source.count("plt.show()") for c in theory.cells if c.cell_type == "code")
    goto(page, lab, "theory.ipynb")
    start_run_all(page)
    code_cells = [n for n, c in enumerate(theory.cells) if c.cell_type == "code"]
    wait_until_run(page, page.locator(".jp-Notebook .jp-Cell").nth(code_cells[-1]), timeout=RUN_ALL_MS)
    images = page.locator(".jp-OutputArea-output img")
    images.nth(figures - 1).scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "08-theory-figures.png")
    assert images.count() == figures
    assert page.locator(ERROR_OUTPUT).count() == 0


# A student's first hour, from a fresh copy to the feedback ----------------------------------------

#: The student's ex03 answer: the reference relative_position_matrix, its last line left with a parenthesis open.
UNCLOSED = reference_answers()["ex03_relative_position_matrix"].replace(
    "    return np.subtract.outer(query_positions, key_positions).astype(np.int64)",
    "    x = (query_positions[:, None] - key_positions[None, :]\n    return x")
#: Where a page that needs the network for its maths would get it (nbconvert's default MathJax).
MATHJAX = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/MathJax.js"
#: The student's ex02 concept answer: the count asked for, written as a float.
WHOLE_FLOAT = "ex02_tokens_with_a_row = 24.0"


def save(page, name):
    """Save the notebook (Ctrl+S), as a student does; wait until its tab is no longer marked unsaved."""
    page.locator(".jp-NotebookPanel .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    tab = page.locator(".lm-TabBar-tab", has_text=name)
    playwright_api.expect(tab).not_to_have_class(re.compile(r"\bjp-mod-dirty\b"))


def graded_feedback(notebook_path, folder):
    """The feedback page of the saved notebook at `notebook_path`: a course in `folder` releases the assignment,
    ``nbgrader autograde`` grades the notebook and ``generate_feedback`` writes the page, as the instructor's do."""
    course = new_course(folder)
    generate(course)
    write_submission(nbformat.read(str(notebook_path), as_version=4), course / "submitted", "student")
    for command in (["autograde", "posenc", "--force"], ["generate_feedback", "posenc", "--force"]):
        result = run_nbgrader(course, *command)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return course / "feedback" / "student" / "posenc" / "exercises.html"


def offline_page(browser):
    """A page whose every request but a local file's is aborted; and the list of the aborted ones' URLs."""
    blocked = []
    context = browser.new_context(viewport={"width": 1400, "height": 900})

    def only_files(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    return page, blocked


def test_a_students_first_hour(page, lab, browser, screenshots, tmp_path):
    """A fresh copy of the release, Run All from the menu: the view lands on Your progress. The student answers
    ex03's relative_position_matrix with a parenthesis left open and ex02's count as 24.0, and runs all again: the
    answer cell says SyntaxError, its test cell that the stub is still there because of that syntax error (not
    "not answered yet", nor "check the spelling"), the float count passes with no red box, and the progress cell
    says both (ex02 started). The saved notebook is
    graded by nbgrader; its feedback page, opened with every request but the file's blocked, shows its formulas as
    MathML, with no TeX left."""
    name = "first-hour.ipynb"
    assert "x = (" in UNCLOSED, "the reference's last line is the one the student leaves open"
    open_notebook(page, lab, name)
    progress = run_all(page)
    page.screenshot(path=screenshots / "11a-first-hour-run-all-lands-on-progress.png")
    playwright_api.expect(progress).to_have_class(re.compile(r"\bjp-mod-active\b"))
    assert in_view(page, progress)
    assert progress.locator(".jp-OutputArea-output").inner_text().count("not attempted") == 10

    type_into(page, "ex03_relative_position_matrix", UNCLOSED)
    type_into(page, "ex02_tokens_with_a_row_answer", WHOLE_FLOAT)
    progress = run_all(page)
    page.screenshot(path=screenshots / "11b-first-hour-run-all-again.png")
    assert in_view(page, progress)

    answer = cell(page, "ex03_relative_position_matrix")
    [error] = errors(answer)
    answer.locator(ERROR_OUTPUT).scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "11c-first-hour-syntax-error.png")
    assert "SyntaxError" in error and "was never closed" in error and "NameError" not in error, error
    # the test cell runs the stub the first Run All defined, and says why it is still there
    [error] = errors(cell(page, "ex03_relative_position_matrix_test"))
    said = error.strip().splitlines()[-1]  # the message, under the traceback (which shows the stub's code)
    assert said.startswith("NotImplementedError: relative_position_matrix is still the stub: you changed the cell "
                           "that defines it, but it has a syntax error") and "was never closed" in said, error
    assert "check the spelling" not in said and "not answered yet" not in said, said

    count_test = cell(page, "ex02_tokens_with_a_row_test")
    count_test.scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "11d-first-hour-float-count-accepted.png")
    assert errors(count_test) == [] and errors(cell(page, "ex02_tokens_with_a_row_answer")) == []

    report = progress.locator(".jp-OutputArea-output").inner_text()
    progress.scroll_into_view_if_needed()
    progress.screenshot(path=screenshots / "11e-first-hour-progress.png")
    rows = {line[:4]: line for line in report.splitlines() if re.match(r"ex\d\d ", line)}
    assert "the answer cell ex03_relative_position_matrix raised:" in rows["ex03"], report
    assert "SyntaxError" in report.split(rows["ex03"], 1)[1].splitlines()[1], report
    assert "started: 1 of 2 test cells pass; ex02_add_positions_test says:" in rows["ex02"], report
    assert report.count("not attempted") == 8, report

    save(page, name)
    feedback = graded_feedback(lab.folder / name, tmp_path / "course")
    offline, blocked = offline_page(browser)
    try:
        control = offline.context.new_page()  # the control: the network is blocked in this context
        with pytest.raises(playwright_api.Error):
            control.goto(MATHJAX)
        control.close()
        assert blocked == [MATHJAX], blocked
        offline.goto(feedback.as_uri(), wait_until="load")  # a page without scripts: all there once loaded
        offline.screenshot(path=screenshots / "11f-first-hour-feedback-offline-top.png")
        formulas = offline.locator(".text_cell_render math")
        count = formulas.count()
        boxes = [formulas.nth(n).bounding_box() for n in range(min(count, 20))]
        shown = offline.locator(".text_cell_render").all_inner_texts()
        (formulas.first if count else offline.locator(".text_cell_render").nth(1)).scroll_into_view_if_needed()
        offline.screenshot(path=screenshots / "11g-first-hour-feedback-offline-maths.png")
    finally:
        offline.context.close()
    assert blocked == [MATHJAX], f"the feedback page asked the network for {blocked[1:]}"
    tex = [text for text in shown if re.search(r"\$\\|\\\(|\\\[|\\frac|\\sin", text)]
    assert tex == [], tex[:3]
    # exercise 1's text alone has more than 10 formulas: a page where only a stray one became MathML fails
    assert count >= 10 and all(box and box["width"] > 0 and box["height"] > 0 for box in boxes), boxes


# What the student's JupyterLab shows, and what it does not -------------------------------------

def test_the_student_sees_validate_and_no_instructor_tool(page, lab, screenshots):
    open_notebook(page, lab, "look.ipynb")
    menus = [label.inner_text() for label in page.locator(".lm-MenuBar-itemLabel").all()]
    assert "Nbgrader" not in menus, menus
    assert page.get_by_role("button", name="Validate").count() == 1
    menu(page, "File", "New Launcher")
    page.wait_for_selector(".jp-Launcher")
    time.sleep(1)  # let every notification arrive
    page.screenshot(path=screenshots / "09-launcher.png")
    launcher = page.locator(".jp-Launcher").inner_text()
    assert "Python 3 (ipykernel)" in launcher
    assert "posenc" not in launcher.lower() and "grading" not in launcher.lower(), launcher
    body = page.locator("body").inner_text()
    assert "Error fetching courses" not in body and "exchange directory" not in body
    assert "Would you like to get notified" not in body
    assert http_status(f"{lab.base}/formgrader?token={lab.token}") == 404


def test_the_menus_the_notebooks_name_exist(page, lab):
    open_notebook(page, lab, "menus.ipynb")
    assert "Run All Cells" in menu_items(page, "Run")
    assert "Run All Above Selected Cell" in menu_items(page, "Run")
    assert "Restart Kernel and Run All Cells…" in menu_items(page, "Kernel")
    text = "\n".join(c.source for c in RELEASE.cells)
    assert "*Run → Run All Cells*" in text and "Kernel → Restart Kernel and Run All Cells…" in text


def test_a_fresh_notebook_opens_unmodified(page, lab, screenshots):
    open_notebook(page, lab, "fresh.ipynb")
    time.sleep(2)  # JupyterLab writes the kernel's language_info once it has connected
    page.screenshot(path=screenshots / "10-fresh.png")
    tab = page.locator(".lm-TabBar-tab", has_text="fresh.ipynb")
    kernel_python = ".".join(map(str, sys.version_info[:3]))
    if kernel_python == LANGUAGE_INFO["version"]:
        assert "jp-mod-dirty" not in (tab.get_attribute("class") or "")
    else:  # another Python: JupyterLab changes only the version
        page.keyboard.press("Control+s")
        time.sleep(1)
        saved = nbformat.read(str(lab.folder / "fresh.ipynb"), as_version=4).metadata.language_info
        assert dict(saved, version=None) == dict(LANGUAGE_INFO, version=None)


def test_the_instructors_set_up_has_formgrader(tmp_path):
    course = new_course(tmp_path / "course")
    process, base, token, log = start_lab(course, instructor=True)
    try:
        assert http_status(f"{base}/formgrader?token={token}") == 200, log.read_text()[-2000:]
        page_config = urllib.request.urlopen(f"{base}/lab?token={token}", timeout=30).read().decode()
    finally:
        stop_lab(process)
    [config] = re.findall(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page_config, re.S)
    disabled = json.loads(config).get("disabledExtensions", [])
    assert not [name for name in disabled if "nbgrader" in name], disabled
