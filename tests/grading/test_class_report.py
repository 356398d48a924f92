"""The class report on a small class: real autograde, then ``python -m posenc_course.class_report``.

The class: the reference answers, the blank release, two students who made the demo's two mistakes
(half-split RoPE in ex05, the mask after the softmax in ex07) and a file that is not a notebook. Each
mistake is one group of two students; the blank and the unreadable file are counted apart and are in no
group. The same course's ``nbgrader export`` writes scores to 2 decimals.

Below, the grouping itself on notebooks made in memory (milliseconds).
"""

import csv
import re
from types import SimpleNamespace

import nbformat
import pytest

from posenc_course import class_report, report
from posenc_course.instructor import demo
from posenc_course.class_report import ClassData, class_data, is_stub, normalise, sort_notebook
from posenc_course.course import generate, new_course
from hardened_grading.cells import META, UNREADABLE
from posenc_course.layout import ASSIGNMENT
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers.children import run_nbgrader
from ..helpers.cells import answer_cell as _answer_cell, grade_cell
from ..helpers.grading import MAX_POINTS

MISTAKES = demo.MISTAKES[ASSIGNMENT][0]  # apply_rope (ex05) and masked_softmax (ex07)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    course = new_course(tmp_path_factory.mktemp("course"))
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    for student, notebook in {"demo-reference": make_submission(answers, release_notebook=release),
                              "demo-blank": make_submission(release_notebook=release),
                              "demo-mistakes": make_submission(answers, MISTAKES, release_notebook=release),
                              "demo-mistakes-too": make_submission(answers, MISTAKES, release_notebook=release)}.items():
        write_submission(notebook, course / "submitted", student)
    unreadable = course / "submitted" / "demo-unreadable" / "posenc" / "exercises.ipynb"
    unreadable.parent.mkdir(parents=True)
    unreadable.write_bytes(bytes(range(256)) * 8)
    result = run_nbgrader(course, "autograde", "posenc", "--force")
    assert result.returncode == 0, result.stderr[-2000:]
    return SimpleNamespace(course=course, data=class_data(course), autograde=result)


def test_autograde_prints_no_warning_of_nbgrader_s_dependencies(reported):
    """nbgrader's gradebook code makes SQLAlchemy warn three times per submission: silenced, by its message."""
    assert "SAWarning" not in reported.autograde.stderr, reported.autograde.stderr[-3000:]
    assert "KeyboardInterrupt caught in kernel" not in reported.autograde.stderr


def test_the_demo_s_recorded_table_is_what_grading_its_students_gives(reported):
    """docs/measured/demo.txt (``make demo-record``'s output, whose table the workflow page shows) holds the scores that
    grading the demo's three students gives now: a change of the checks' weights or of the demo's mistakes
    without ``make demo-record`` run again fails here."""
    scores = report.exercise_scores(reported.course / "gradebook.db", by_hand=True)
    graded = report.format_table({student: scores[student] for student in demo.STUDENTS})
    recorded = demo.recorded_table(demo.RECORDED.read_text())
    assert graded == recorded, f"{demo.RECORDED} is stale (make demo-record writes it again); grading now gives:\n{graded}"


def test_each_mistake_is_one_group_with_the_students_who_made_it(reported):
    data = reported.data
    text = class_report.report_text(data)
    for exercise, function in [("ex05", "apply_rope"), ("ex07", "masked_softmax")]:
        section = text.split(f"\n{exercise}:")[1].split("\nex")[0]
        top = re.findall(r"^\s+(\d+) x (\w+) \(", section, re.M)
        assert top and top[0] == ("2", function), section
        assert "[demo-mistakes, demo-mistakes-too]" in section, section
        [first, *_] = data.mistakes[exercise]
        assert sorted(first.students) == ["demo-mistakes", "demo-mistakes-too"]
    softmax = [g for g in data.mistakes["ex07"] if g.test == "ex07_masked_softmax_test"]
    assert len(softmax) == 1 and "expected [[0.5 0.5 0. ]]" in softmax[0].message, softmax
    for exercise in MAX_POINTS:
        if exercise not in ("ex05", "ex07"):
            assert exercise not in data.mistakes, (exercise, data.mistakes.get(exercise))


def test_not_attempted_and_unreadable_are_counted_apart(reported):
    data = reported.data
    assert list(data.unreadable) == ["demo-unreadable"] and "not a readable Jupyter notebook" in data.unreadable["demo-unreadable"]
    assert data.blank() == ["demo-blank"]
    assert all(data.not_attempted[exercise] == {"demo-blank"} for exercise in MAX_POINTS)
    grouped = {student for groups in data.mistakes.values() for group in groups for student in group.students}
    assert grouped == {"demo-mistakes", "demo-mistakes-too"}
    text = class_report.report_text(data)
    assert "could not be read, graded as the blank release (0 points): 1" in text
    assert "attempted nothing (every answer still the stub): 1: demo-blank" in text
    assert "NotImplementedError" not in text, "a stub is not a mistake"


def test_the_report_is_one_html_file_with_a_figure_per_exercise(reported, capsys):
    assert class_report.main([str(reported.course)]) == 0
    page = (reported.course / "reports" / "class_report.html").read_text()
    assert page.count("data:image/png;base64,") == len(MAX_POINTS)
    assert "The most common mistakes" in page and "masked_softmax" in page and "apply_rope" in page
    assert "demo-unreadable" in page and "1 attempted nothing" in page
    assert "written:" in capsys.readouterr().out
    assert page.index("Content-Security-Policy") < page.index("<title>") and "script-src 'none'" in page
    assert "<script" not in page


def test_nbgrader_export_writes_scores_to_2_decimals(reported):
    """A third of a point given by hand makes the gradebook's sum 75.21333333333334: grades.csv says 75.21."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{reported.course / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook("exercises", "posenc", "demo-mistakes")
        grade = next(g for g in notebook.grades if g.name == "ex05_apply_rope_test")
        grade.manual_score = round(grade.auto_score, 2) - 2 / 3
        gradebook.db.commit()
        raw = gradebook.find_submission("posenc", "demo-mistakes").score
    assert len(repr(raw).split(".")[1]) > 2, raw  # the case nbgrader's own export writes as it is
    result = run_nbgrader(reported.course, "export", "--to=grades.csv")
    assert result.returncode == 0, result.stderr[-2000:]
    rows = {(row["assignment"], row["student_id"]): row
            for row in csv.DictReader(open(reported.course / "grades.csv"))}
    assert rows[("posenc", "demo-mistakes")]["score"] == str(round(raw, 2))
    assert rows[("posenc", "demo-reference")]["score"] == "79.0"
    for row in rows.values():
        for column in ("raw_score", "late_submission_penalty", "score", "max_score"):
            assert re.fullmatch(r"\d+\.\d{1,2}", row[column]), row
    assert "SAWarning" not in result.stderr


# The grouping, on notebooks made in memory ---------------------------------------------------------

def answer_cell(grade_id, source):
    return _answer_cell(source, grade_id)


def judged_cell(grade_id, *checks):
    """A test cell with the judge's recorded `checks`: ``(line, hidden, passed, message)``."""
    cell = grade_cell("", grade_id, 2)
    cell.metadata[META] = {"checks": [{"line": line, "hidden": hidden, "passed": passed, "message": message}
                                      for line, hidden, passed, message in checks]}
    return cell


STUB = '    # YOUR CODE HERE\n    raise NotImplementedError("not answered yet: write this function here, in place of this line")'


def graded(softmax="def masked_softmax(l, m):\n    return l", *checks):
    return nbformat.v4.new_notebook(cells=[
        answer_cell("ex07_ratio_answer", "ex07_ratio = 4"),
        judged_cell("ex07_ratio_test", (1, False, True, "")),
        answer_cell("ex07_masked_softmax", softmax),
        judged_cell("ex07_masked_softmax_test", *checks)])


def sorted_class(notebooks):
    data, groups = ClassData({}), {}
    for student, notebook in notebooks.items():
        sort_notebook(notebook, student, data, groups)
    return data, sorted(groups.values(), key=lambda g: -len(g.students))


def test_the_same_check_failed_with_other_values_is_one_mistake():
    first = (2, False, False, "masked_softmax of [0, 0, 5]: expected [[0.5 0.5 0. ]] got [[0.006648 0.006648 0. ]]")
    then = (4, False, False, "not run, because a check before it failed")
    notebooks = {
        "a": graded("def masked_softmax(l, m):\n    return l", first, then),
        "b": graded("def masked_softmax(l, m):\n    return l * 2",
                    (2, False, False, "masked_softmax of [0, 0, 5]: expected [[0.5 0.5 0. ]] got [[0.01 0.01 0. ]]")),
        "c": graded("def masked_softmax(l, m):\n    return l[0]",
                    (2, False, False, "IndexError: index 3 is out of bounds for axis 0 with size 3")),
        "d": graded("def masked_softmax(l, m):\n    return l[1]",
                    (2, False, False, "IndexError: index 7 is out of bounds for axis 0 with size 7"),
                    (9, True, False, "masked_softmax: expected 1 got 2")),
        "e": graded("def masked_softmax(l, m):\n    return l", (2, False, True, ""),
                    (5, False, False, "not run, because an earlier step failed (ValueError: bad shape (2, 3))")),
    }
    data, groups = sorted_class(notebooks)
    assert [sorted(g.students) for g in groups] == [["a", "b"], ["c", "d"], ["e"]]
    assert groups[0].message == first[3] and groups[0].also_failed == 1 and groups[1].also_failed == 1
    assert groups[2].line == 5 and "ValueError" in normalise(groups[2].message)
    assert not data.not_attempted and not data.unreadable


def test_stubs_and_what_fails_because_of_them_are_no_mistakes():
    """An exercise is not attempted only when every answer is still the stub (``concept``: its one answer); one with
    an answer of the student's and a stub is started (``stub``); a failure because of a stub elsewhere is no
    mistake (``stub-elsewhere``, both answers its own: attempted)."""
    notebooks = {
        "stub": graded("def masked_softmax(logits, mask):\n" + STUB,
                       (2, False, False, "NotImplementedError: not answered yet: write this function here")),
        "stub-elsewhere": graded("def masked_softmax(l, m):\n    return helper(l)",
                                 (2, False, False, "not run, because an earlier step failed (NotImplementedError: "
                                                   "not answered yet: write this function here)")),
        "concept": nbformat.v4.new_notebook(cells=[
            answer_cell("ex07_ratio_answer", "ex07_ratio = ...  # YOUR ANSWER HERE"),
            judged_cell("ex07_ratio_test", (1, False, False, "TypeError: unsupported operand type(s) for -: "
                                                           "'ellipsis' and 'float'"))]),
    }
    data, groups = sorted_class(notebooks)
    assert not groups
    assert data.not_attempted == {"ex07": {"concept"}} and data.started == {"ex07": {"stub"}}


def test_an_unreadable_submission_is_counted_apart_and_nothing_else():
    notebook = graded("def masked_softmax(logits, mask):\n" + STUB, (2, False, False, "NotImplementedError: x"))
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell("could not be graded", metadata={
        META: {UNREADABLE: "The file exercises.ipynb is not a readable Jupyter notebook (NotJSONError)."}}))
    data, groups = sorted_class({"broken": notebook})
    assert data.unreadable == {"broken": "The file exercises.ipynb is not a readable Jupyter notebook (NotJSONError)."}
    assert not groups and not data.not_attempted


@pytest.mark.parametrize("source, stub", [
    ("ex01_slowest_period = ...  # YOUR ANSWER HERE", True),
    ("ex01_slowest_period = ...", True),
    ("def f(x):\n" + STUB, True),
    ("ex01_slowest_period = 2 * np.pi * 10000", False),
    ("def f(x):\n    return x[...]", False),
])
def test_a_stub_is_the_release_s_own(source, stub):
    assert is_stub(source) is stub


@pytest.mark.parametrize("a, b, same", [
    ("f([1, 2]): expected [3] got [4]", "f([1, 2]): expected [3] got [5.5]", True),
    ("ValueError: shapes (2,3) and (4,)", "ValueError: shapes (5,3) and (1,)", True),
    ("not run, because an earlier step failed (KeyError: 3)", "KeyError: 4", True),
    ("f([1, 2]): expected [3] got [4]", "g([1, 2]): expected [3] got [4]", False),
    ("ValueError: bad", "TypeError: bad", False),
])
def test_normalised_messages(a, b, same):
    assert (normalise(a) == normalise(b)) is same
