"""Feedback and partial credit, with real nbgrader runs: autograde, generate_feedback and export.

A small class (the reference, the blank release, a submission that fails exactly one check, a wrong
RoPE layout, a wrong concept answer, an answer that kills the kernel) is graded and given feedback in
one course. The feedback opens with a summary that names each failing check with its message, shows no
line of any hidden test, and every way of reading a score (the gradebook, ``grades.csv``, the feedback,
``posenc-check --json``) gives the same number.
"""

import csv
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from posenc_course import report
from posenc_course.course import generate, nbgrader_env, new_course
from hardened_grading.preprocessors.feedback_summary import FeedbackSummary
from hardened_grading.summary import summary
from posenc_course.student.lab import instructor_environment
from posenc_course.layout import NOTEBOOK, RELEASE_NOTEBOOK, SOURCE_NOTEBOOK, exercise_of
from posenc_course.submissions import grade_id, make_submission, reference_answers

from ..helpers import children
from ..helpers.children import run_nbgrader
from ..helpers.grading import ALL, MAX_POINTS, STUDENTS, Student, assert_scores, blank, submit
from ..helpers.leaks import assert_no_answer_in, concept_answers, feedback_texts, wrong_concepts

CLASS = [
    STUDENTS["reference"],
    Student("blank", blank, loses=ALL),
    STUDENTS["partial-one-check"],
    STUDENTS["wrong-rope_half_split"],
    STUDENTS["concept-alibi_sign_flipped"],
    STUDENTS["hostile-call-exit"],
]
# What each student's summary must name: (function, a part of the message)
NAMED = {
    "partial-one-check": [("alibi_slopes", "alibi_slopes(-2): wrong (a hidden check")],
    "wrong-rope_half_split": [("apply_rope", "expected"), ("apply_rope", "interleaved pairs")],
    "concept-alibi_sign_flipped": [("ratio", "ex07_ratio")],
    "hostile-call-exit": [("rotation_2d", "the kernel died")],
    "blank": [("sinusoidal_row", "NotImplementedError")],
}


def hidden_test_lines():
    """Every line of a hidden test in the source notebook, whitespace-normalized (long enough to mean
    something), but for those the feedback shows anyway: a line of the released notebook (a visible
    test or the text may have the same line) or of the reference answers, which the class submits."""
    source = nbformat.read(SOURCE_NOTEBOOK, as_version=4)
    lines = set()
    for cell in source.cells:
        for block in re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", cell.source, re.S):
            lines |= {" ".join(line.split()) for line in block.splitlines() if len(line.strip()) >= 20}
    released = " ".join(" ".join(cell.source.split()) for cell in nbformat.read(RELEASE_NOTEBOOK, as_version=4).cells)
    released += " ".join(" ".join(answer.split()) for answer in reference_answers().values())
    return {line for line in lines if line not in released}


def visible_text(path):
    """The text a browser shows of an HTML file: tags dropped, entities decoded, whitespace normalized."""
    text = re.sub(r"<style.*?</style>|<script.*?</script>", " ", Path(path).read_text(), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = new_course(tmp_path_factory.mktemp("course"))
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / NOTEBOOK))
    for student in CLASS:
        submit(student, kit)
    autograde = run_nbgrader(course, "autograde", "posenc", "--force")
    feedback = run_nbgrader(course, "generate_feedback", "posenc", "--force")
    export = run_nbgrader(course, "export")
    for result in (autograde, feedback, export):
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    yield SimpleNamespace(course=course, kit=kit, scores=report.exercise_scores(course / "gradebook.db"))


def reflection_models():
    """``{grade id: the first sentence of its model answer}`` of the source notebook's written reflections."""
    from hardened_grading.preprocessors.model_answers import model_answer
    from posenc_course.submissions import is_written_answer

    source = nbformat.read(SOURCE_NOTEBOOK, as_version=4)
    # its first stretch of plain words: a formula, code or emphasis is rendered otherwise
    def words(cell):
        return next(chunk.strip()[:40] for chunk in re.split(r"[$`*(]", " ".join(model_answer(cell).split()))
                    if len(chunk.strip()) >= 30 and chunk.strip().count(" ") >= 4)

    return {grade_id(cell): words(cell) for cell in source.cells if is_written_answer(cell)}


def feedback_of(graded, student):
    return graded.course / "feedback" / student / "posenc" / "exercises.html"


@pytest.mark.parametrize("student", CLASS, ids=lambda s: s.name)
def test_partial_credit_docks_each_student_where_the_table_says(graded, student):
    assert_scores(graded.scores, student.name, student.loses)


def test_failing_one_check_costs_exactly_that_checks_share(graded):
    """ex07_alibi_slopes_test has 10 equal checks for 3 points: failing one costs 0.3, and nothing else."""
    score, maximum = graded.scores["partial-one-check"]["ex07"]
    assert (score, maximum) == (MAX_POINTS["ex07"] - 0.3, MAX_POINTS["ex07"])


def test_the_same_score_in_the_gradebook_grades_csv_and_the_feedback(graded):
    rows = {row["student_id"]: row for row in csv.DictReader((graded.course / "grades.csv").open())}
    for student in CLASS:
        in_gradebook = round(sum(score for score, _ in graded.scores[student.name].values()), 2)
        assert float(rows[student.name]["raw_score"]) == pytest.approx(in_gradebook, abs=1e-9), student.name
        heading = re.search(r"Summary: ([\d.]+) of ([\d.]+) points", visible_text(feedback_of(graded, student.name)))
        assert float(heading.group(1)) == pytest.approx(in_gradebook, abs=1e-9), student.name


def test_posenc_check_gives_the_same_scores_and_names_the_same_checks(graded, tmp_path):
    notebook = graded.course / "submitted" / "partial-one-check" / "posenc" / NOTEBOOK
    result = children.run([str(Path(sys.executable).parent / "posenc-check"), str(notebook), "--json"],
                          capture_output=True, text=True, timeout=600, env=nbgrader_env())
    checked = json.loads(result.stdout)
    for exercise, (score, maximum) in graded.scores["partial-one-check"].items():
        assert (checked["exercises"][exercise]["score"], checked["exercises"][exercise]["max_score"]) == (score, maximum)
    failed = [c for s in checked["exercises"].values() for c in s["checks"] if not c["passed"]]
    assert [(c["test"], c["hidden"]) for c in failed] == [("ex07_alibi_slopes_test", True)]
    assert failed[0]["message"].startswith("alibi_slopes(-2): wrong"), "as feedback before the due date"
    assert "expected ValueError" not in failed[0]["message"]


@pytest.mark.parametrize("student", sorted(NAMED))
def test_the_summary_opens_the_feedback_and_names_each_failing_check(graded, student):
    text = visible_text(feedback_of(graded, student))
    start = text.index("Summary:")
    assert start < text.index("Positional encodings in transformers"), "the summary comes before the notebook"
    table = text[start:text.index("Positional encodings in transformers")]
    for function, message in NAMED[student]:
        assert function in table and message in table, (function, message, table[:1500])


def test_the_reference_summary_has_no_failed_check(graded):
    notebook = nbformat.read(graded.course / "autograded" / "reference" / "posenc" / NOTEBOOK, as_version=4)
    rows = summary(notebook, part_of=exercise_of)
    assert [row["exercise"] for row in rows] == list(MAX_POINTS)
    assert all(row["failed"] == [] and row["score"] == row["max_score"] for row in rows)


def test_no_line_of_a_hidden_test_appears_in_any_feedback_file(graded):
    hidden = hidden_test_lines()
    assert len(hidden) > 100
    files = [p for p in (graded.course / "feedback").rglob("*") if p.is_file()]
    assert len([p for p in files if p.suffix == ".html"]) == len(CLASS)
    for path in files:
        text = visible_text(path) if path.suffix == ".html" else " ".join(path.read_text(errors="replace").split())
        shown = [line for line in hidden if line in text]
        assert not shown, f"{path}: {shown[:3]}"


def test_hidden_tests_are_replaced_by_how_many_of_their_checks_passed(graded):
    """With no due date in the gradebook, "auto" says only what a failed hidden check tried."""
    text = visible_text(feedback_of(graded, "partial-one-check"))
    assert "# hidden tests: 8 checks, 7 passed" in text
    assert "FAILED: alibi_slopes(-2): wrong (a hidden check" in text
    assert "alibi_slopes(-2): expected ValueError" not in text


#: the grader's own numbers in a feedback's text, which are no answer: how many checks passed, a check's lines, how
#: many checks a line of repeated failures stands for
GRADER_NUMBERS = re.compile(r"hidden tests: \d+ checks?, \d+ passed|\d+ of \d+ checks passed: [\d.]+ of [\d.]+ points"
                            r"|\(lines? \d+(?:, \d+)*\)|\(\d+ (?:hidden )?checks\)")


def grader_texts(path, assignment="posenc"):
    """``[(test cell, text)]`` that the grader wrote in a feedback file: each failed check of the summary,
    and each code cell's comments (the note that replaces its hidden tests) and outputs. A text belongs to
    the test of the concept question its cell or item names (``ex02_name_test``), else to none."""
    page = Path(path).read_text()
    names = sorted(concept_answers(assignment))

    def text_of(fragment):
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())

    def owner(text):
        return next((f"{name}_test" for name in names if name in text or name.split("_", 1)[1] in text), "-")

    start = page.index('id="grading-summary"')
    summary = page[start:page.index('<div class="cell', start)]
    texts = [(owner(text_of(item)), GRADER_NUMBERS.sub("", text_of(item)))
             for item in re.findall(r"<li>(.*?)</li>", summary, re.S)]
    for cell in page.split('<div class="cell border-box-sizing code_cell')[1:]:
        written = re.findall(r'<span class="c1">(.*?)</span>', cell, re.S)
        written += re.findall(r'<div class="output_subarea[^"]*">(.*?)</div>', cell, re.S)
        texts += [(owner(text_of(cell)), GRADER_NUMBERS.sub("", text_of(part))) for part in written]
    return texts


def test_no_feedback_file_holds_a_concept_answer(graded):
    """The real files, made with the course's setting ("auto", no due date): blank, wrong and partly answered."""
    for student in CLASS:
        texts = grader_texts(feedback_of(graded, student.name))
        assert texts, student.name
        assert_no_answer_in(texts, "posenc", f"feedback of {student.name}")


@pytest.mark.parametrize("setting", ["before-due", "after-due"])
def test_neither_setting_shows_a_concept_answer_in_any_feedback(graded, setting):
    """The feedback preprocessor on every graded notebook of the class, with each setting."""
    for student in CLASS:
        notebook = nbformat.read(graded.course / "autograded" / student.name / "posenc" / NOTEBOOK, as_version=4)
        notebook, resources = FeedbackSummary(hidden_messages=setting).preprocess(notebook, {})
        assert_no_answer_in(feedback_texts(notebook, resources), "posenc", f"{student.name}, {setting}")


@pytest.mark.parametrize("full", [False, True], ids=["as-posenc-check", "full"])
def test_no_posenc_check_table_holds_a_concept_answer(graded, full):
    """posenc-check's table and JSON for every graded notebook of the class; full=True is what they would
    show without the redaction, which holds no concept answer either."""
    from posenc_course.student.check import as_json, format_result
    from hardened_grading.summary import checks_by_exercise

    for student in CLASS:
        checks = checks_by_exercise(graded.course / "autograded" / student.name / "posenc" / NOTEBOOK, full=full)
        scores = graded.scores[student.name]
        texts = [(line.strip().split(" ")[0], re.sub(r"\(line \d+\)", "", line))
                 for line in format_result(scores, checks, shown=None, verbose=True).splitlines()]
        texts += [(check["test"], check["message"]) for exercise in json.loads(as_json(scores, checks))["exercises"].values()
                  for check in exercise["checks"]]
        texts = [(test if test.endswith("_test") else next((f"{n}_test" for n in concept_answers("posenc")
                                                             if n.split("_", 1)[1] == test), test), text)
                 for test, text in texts]
        assert_no_answer_in(texts, "posenc", f"posenc-check of {student.name}")


def test_posenc_check_on_a_partly_answered_notebook_shows_no_answer(graded, tmp_path):
    """A real posenc-check run: concept answers a third right, a third wrong, a third blank; the first
    functions right, the rest stubs."""
    answers = dict(graded.kit.answers)
    concepts, wrong = sorted(concept_answers("posenc")), wrong_concepts("posenc")
    for number, name in enumerate(concepts):
        if number % 3 == 1:
            answers[f"{name}_answer"] = f"{name} = {wrong[name]!r}"
        elif number % 3 == 2:
            del answers[f"{name}_answer"]
    functions = [key for key in answers if not key.endswith("_answer")]
    for key in functions[len(functions) // 2:]:
        del answers[key]
    path = tmp_path / "partly.ipynb"
    nbformat.write(make_submission(answers), str(path))
    result = children.run([str(Path(sys.executable).parent / "posenc-check"), str(path)],
                          capture_output=True, text=True, timeout=600, env=nbgrader_env())
    assert result.returncode == 1, result.stderr[-2000:]
    lines = [line.strip() for line in result.stdout.splitlines() if line.startswith("    ")]
    assert any(": wrong (a hidden check" in line for line in lines), lines
    assert any("not answered yet" in line for line in lines), lines
    owned = [(next((f"{n}_test" for n in concepts if n in line or n.split("_", 1)[1] + " " in line), "-"),
              re.sub(r"\(line \d+\)", "", line)) for line in lines]
    assert_no_answer_in(owned + [("-", result.stdout + result.stderr)], "posenc", "posenc-check")


def test_after_the_due_date_the_feedback_shows_the_full_message(graded, tmp_path):
    """A real generate_feedback of a copy of the class's course, with a due date in the gradebook that has
    passed: "auto" shows what a failed hidden check expected; still no concept answer."""
    course = tmp_path / "course"
    shutil.copytree(graded.course, course, symlinks=True)
    added = run_nbgrader(course, "db", "assignment", "add", "posenc", "--duedate=2020-01-01 00:00:00 UTC")
    assert added.returncode == 0, added.stdout[-2000:] + added.stderr[-2000:]
    result = run_nbgrader(course, "generate_feedback", "posenc", "--force")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    html_name = NOTEBOOK.replace(".ipynb", ".html")
    text = visible_text(course / "feedback" / "partial-one-check" / "posenc" / html_name)
    assert "FAILED: alibi_slopes(-2): expected ValueError" in text
    # Each reflection's model answer and what earns its points, below the student's own (not before the due date:
    # the class's feedback, made without one, has none).
    models = reflection_models()
    before = visible_text(feedback_of(graded, "partial-one-check"))
    assert not [model for model in models.values() if model in before] and "Model answer" not in before
    assert [model for model in models.values() if model in text] == list(models.values())
    assert text.count("What earns the points") == len(models)
    for student in CLASS:
        path = course / "feedback" / student.name / "posenc" / html_name
        assert_no_answer_in(grader_texts(path), "posenc", f"feedback of {student.name} after the due date")


def test_an_instructor_can_show_the_full_tests(graded):
    """c.FeedbackSummary.show_hidden_tests = True keeps the test cells whole, as stock nbgrader does."""
    notebook = nbformat.read(graded.course / "autograded" / "partial-one-check" / "posenc" / NOTEBOOK, as_version=4)
    hidden = hidden_test_lines()
    shown, _ = FeedbackSummary(show_hidden_tests=True).preprocess(notebook, {})
    assert any(line in " ".join(cell.source.split()) for cell in shown.cells for line in hidden)
    hidden_again, _ = FeedbackSummary().preprocess(notebook, {})
    assert not any(line in " ".join(cell.source.split()) for cell in hidden_again.cells for line in hidden)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium: `apt-get install chromium` (CI installs it)")
def test_a_browser_shows_the_summary_at_the_top(graded, tmp_path):
    """Rendered by headless Chromium: the summary's box starts near the top of the page; the screenshot
    is kept in pytest's temporary folder (run with -s to print its path). The page forbids every script (its
    content security policy, engine/hardened_grading/preprocessors/inert.py): the copy measured here drops the policy, to run the
    test's own script."""
    page = tmp_path / "feedback.html"
    script = ("<script>window.addEventListener('load', () => { const box = document.getElementById('grading-summary')"
              ".getBoundingClientRect(); document.body.setAttribute('data-summary-top', Math.round(box.top)); });</script>")
    policy = re.compile(r'<meta[^>]*http-equiv="Content-Security-Policy"[^>]*>')
    feedback = feedback_of(graded, "wrong-rope_half_split").read_text()
    assert len(policy.findall(feedback)) == 1
    page.write_text(policy.sub("", feedback).replace("</body>", script + "</body>", 1))
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,1000",
                          "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    top = re.search(r'data-summary-top="(-?\d+)"', dom.stdout)
    assert top and 0 <= int(top.group(1)) < 250, (top and top.group(1), dom.stderr[-500:])
    shot = tmp_path / "feedback.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,1000",
                    "--virtual-time-budget=10000", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20000
    print(f"feedback screenshot: {shot}")


def test_formgrader_shows_the_graded_notebook_and_the_same_scores(graded, tmp_path):
    """nbgrader's instructor UI, served by a real Jupyter server in the course with the instructor's
    set-up (:func:`posenc_course.lab.instructor_environment`): its API gives the gradebook's partial
    scores, and its page of a graded submission renders (the feedback's template stays out of
    formgrader's way)."""
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "jupyter", "server", "--no-browser", f"--port={port}",
                               "--ServerApp.token=posenc-test", "--allow-root", "--ServerApp.ip=127.0.0.1"],
                              cwd=graded.course, env=instructor_environment(tmp_path, nbgrader_env()),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    base = f"http://127.0.0.1:{port}/formgrader"
    try:
        for _ in range(120):
            try:
                listing = json.loads(urllib.request.urlopen(
                    f"{base}/api/submitted_notebooks/posenc/exercises?token=posenc-test", timeout=5).read())
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("formgrader did not start")
        scores = {row["student"]: (row["score"], row["id"]) for row in listing}
        for student in CLASS:
            in_gradebook = round(sum(score for score, _ in graded.scores[student.name].values()), 2)
            assert scores[student.name][0] == pytest.approx(in_gradebook, abs=1e-9), student.name
        page = urllib.request.urlopen(f"{base}/submissions/{scores['partial-one-check'][1]}/?token=posenc-test",
                                      timeout=30)
        text = page.read().decode()
        assert page.status == 200 and "9 of 10 checks passed: 2.7 of 3 points." in text
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0]
    assert "Traceback" not in log, log[-3000:]
