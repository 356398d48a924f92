"""A TA grades the reflections of one exercise for a class in formgrader, in a real browser.

Three students submit the first assignment, each with a reflection of their own; ``nbgrader autograde`` grades
them with this course's settings (so the graded notebooks hold the model answer below each reflection, for the
grader: ``ModelAnswersForGraders``). Then, in Debian's Chromium driven by Playwright, against a Jupyter server
with formgrader: the TA opens the first submission, clicks exercise 1's reflection score box, reads the student's
text with the model answer and its rubric in view, types a score, and moves to the same box of the next
submission with formgrader's own shortcut (Ctrl+.), three times. The scores reach the gradebook, and
``nbgrader export`` adds them to the automatic points. Screenshots: ``formgrader-STUDENT.png``.
"""

import csv
import json
import urllib.request

import pytest
from nbgrader.api import Gradebook

from hardened_grading.preprocessors.model_answers import model_answer
from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.layout import NOTEBOOK, NOTEBOOK_ID, points_by_hand, points_per_exercise, source_notebook
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers.children import run_nbgrader
from ..helpers.lab import chromium, formgrader_environment, formgrader_server, screenshot_folder, skip_without_chromium

playwright_api = pytest.importorskip("playwright.sync_api")

REFLECTION = "ex01_reflection"
#: Each student's reflection, and the score the TA gives it (of its 2 points).
WRITTEN = {"ada": ("No: past 2,048 tokens the slow pairs reach phases the model never saw.", 2),
           "ben": ("Yes, a sinusoid is defined everywhere.", 0),
           "cy": ("Not reliably: it needs rescaling, such as position interpolation.", 1)}
TOKEN = "ta-secret-token"
#: formgrader's page loads MathJax 2 from this CDN, and its script stops without it (``MathJax is not defined``), before
#: it sets its keyboard shortcuts. This machine has no internet: the test answers the request with the least of
#: MathJax's API that formgrader calls, as the CDN answers it with the real one. (The course's markdown is MathML
#: already: engine/hardened_grading/preprocessors/mathml.py.)
MATHJAX_CDN = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/**"
MATHJAX = ("window.MathJax = {Hub: {Config() {}, Queue() {}, "
           "Startup: {signal: {Interest(listener) { setTimeout(() => listener('End'), 0); }}}}};")
#: In a page: every one of the elements passed is inside the window.
ALL_IN_VIEW = """elements => elements.every(element => { const box = element.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight; })"""
#: In formgrader's page: the reflection's score was saved (formgrader shows its tick beside the box).
SAVED = f"""() => {{ const box = document.getElementById({REFLECTION!r});
  const tick = box && box.closest('.panel-heading').querySelector('.score-saved');
  return tick && getComputedStyle(tick).display !== 'none' && tick.style.visibility !== 'hidden'; }}"""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course with the three students' submissions, autograded."""
    skip_without_chromium()
    course = new_course(tmp_path_factory.mktemp("course"))
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / NOTEBOOK)
    for student, (text, _) in WRITTEN.items():
        write_submission(make_submission(answers, release_notebook=release, reflections=text), course / "submitted",
                         student)
    graded = run_nbgrader(course, "autograde", "posenc", "--force")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    return course


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    return screenshot_folder(tmp_path_factory)


def in_view(page, locator):
    """Whether all of `locator`'s element is inside the window."""
    box, height = locator.bounding_box(), page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_a_ta_grades_one_reflection_of_three_students_in_a_row(course, tmp_path, screenshots):
    environment = formgrader_environment(tmp_path / "jupyter", nbgrader_env())
    with formgrader_server(course, environment, TOKEN) as base:
        listing = json.loads(urllib.request.urlopen(
            f"{base}/formgrader/api/submitted_notebooks/posenc/{NOTEBOOK_ID}?token={TOKEN}", timeout=30).read())
        order = [row["student"] for row in sorted(listing, key=lambda row: row["id"])]
        assert sorted(order) == sorted(WRITTEN)
        first = min(listing, key=lambda row: row["id"])["id"]
        # The first line of what earns the reflection's points: the end of its model answer, in the source notebook.
        [cell] = [c for c in source_notebook_of(course).cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == REFLECTION]
        rubric_line = next(line[2:] for line in model_answer(cell).splitlines() if line.startswith("- "))[:60]
        with playwright_api.sync_playwright() as playwright:
            # --no-sandbox: Chromium's own sandbox cannot start as root, as in CI.
            browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            try:
                page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                page.set_default_timeout(60_000)
                page.route(MATHJAX_CDN, lambda route: route.fulfill(content_type="text/javascript", body=MATHJAX))
                # The TA logs in with the token, as on the server's login page (formgrader's own requests need the
                # login cookie), and lands on the first submission.
                page.goto(f"{base}/login?next=/formgrader/submissions/{first}/")
                page.fill("input[type=password]", TOKEN)
                with page.expect_navigation():
                    page.keyboard.press("Enter")
                box = page.locator(f"input.score#{REFLECTION}")
                box.click()
                for number, student in enumerate(order):
                    text, score = WRITTEN[student]
                    page.wait_for_function(f"() => document.activeElement && document.activeElement.id === "
                                           f"{REFLECTION!r}")
                    # The student's text, and under it the model answer with its rubric, beside the score box.
                    panel = page.locator(".nbgrader_cell", has=page.locator(f"input#{REFLECTION}"))
                    answer = panel.get_by_text(text, exact=True)
                    rubric = page.get_by_text(rubric_line, exact=False)
                    assert answer.count() == 1 and rubric.count() == 1, f"{student}: {page.url}"
                    # formgrader scrolls the box it focuses to a third of the window, smoothly: wait for it to stop
                    shown = [box.element_handle(), answer.element_handle(), rubric.element_handle()]
                    try:
                        page.wait_for_function(ALL_IN_VIEW, arg=shown, timeout=20_000)
                    except playwright_api.TimeoutError:
                        pytest.fail(f"{student}: the score box, the student's text and the rubric are never in view "
                                    f"together ({[in_view(page, x) for x in (box, answer, rubric)]})")
                    page.keyboard.type(str(score))
                    page.screenshot(path=screenshots / f"formgrader-{student}.png")
                    if number < len(order) - 1:
                        before = page.url.split("?")[0]
                        # formgrader saves, then goes to .../next, which sends it on to the next submission's page
                        # (it may set off that navigation twice, the first one then aborted: wait for the page)
                        with page.expect_response(lambda response: response.request.resource_type == "document"
                                                  and response.status == 200 and "/next" not in response.url
                                                  and response.url.split("?")[0] != before):
                            page.keyboard.press("Control+.")  # formgrader: the same box of the next submission
                        page.wait_for_load_state("load")
                    else:
                        page.keyboard.press("Escape")  # formgrader: leave the box and save it
                        page.wait_for_function(SAVED, timeout=30_000)
            finally:
                browser.close()

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        given = {student: gradebook.find_grade(REFLECTION, NOTEBOOK_ID, "posenc", student).manual_score
                 for student in WRITTEN}
    assert given == {student: score for student, (_, score) in WRITTEN.items()}

    # nbgrader export: the automatic points in full (the reference answers) plus what the TA gave by hand.
    exported = run_nbgrader(course, "export")
    assert exported.returncode == 0, exported.stdout[-2000:] + exported.stderr[-2000:]
    rows = {row["student_id"]: row for row in csv.DictReader(open(course / "grades.csv"))}
    automatic = sum(points_per_exercise(source_notebook_of(course)).values())
    for student, (_, score) in WRITTEN.items():
        assert float(rows[student]["score"]) == automatic + score, rows[student]
        assert float(rows[student]["max_score"]) == automatic + points_by_hand(source_notebook_of(course))


def source_notebook_of(course):
    import nbformat

    return nbformat.read(source_notebook("posenc", course), as_version=4)
