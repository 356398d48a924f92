"""The class report on the demo class: real autograde, then ``python -m posenc_course.class_report``.

The demo class is the reference answers, the blank release and the demo's two mistakes (half-split
RoPE in ex05, the mask after the softmax in ex07). So each check the mistakes fail is failed by two
students (the mistakes and the blank), and every other failing check by one (the blank).
"""

import re
from types import SimpleNamespace

import pytest

from posenc_course import class_report, demo
from posenc_course.course import generate, new_course, run_nbgrader
from posenc_course.layout import ASSIGNMENT
from posenc_course.submissions import make_submission, reference_answers, write_submission

from .test_grading import MAX_POINTS


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    course = new_course(tmp_path_factory.mktemp("course"))
    release = generate(course)
    answers = reference_answers(course / "source" / "posenc" / "exercises.ipynb")
    for student, notebook in {"demo-reference": make_submission(answers, release_notebook=release),
                              "demo-blank": make_submission(release_notebook=release),
                              "demo-mistakes": make_submission(answers, demo.MISTAKES[ASSIGNMENT][0], release_notebook=release)}.items():
        write_submission(notebook, course / "submitted", student)
    result = run_nbgrader(course, "autograde", "posenc", "--force")
    assert result.returncode == 0, result.stderr[-2000:]
    return SimpleNamespace(course=course, data=class_report.class_data(course))


def test_the_report_names_the_demo_mistakes_failing_checks_with_their_counts(reported):
    scores, counts, examples = reported.data
    text = class_report.report_text(scores, counts, examples)
    for exercise, function in [("ex05", "apply_rope"), ("ex07", "masked_softmax")]:
        section = text.split(f"\n{exercise}:")[1].split("\nex")[0]
        top = re.findall(r"^\s+(\d+) x (\w+) \(", section, re.M)
        assert top and top[0] == ("2", function), section
    for exercise in MAX_POINTS:
        if exercise not in ("ex05", "ex07"):
            assert {count for key, count in counts[exercise].items()} == {1}, exercise  # the blank alone


def test_the_report_is_one_html_file_with_a_figure_per_exercise(reported, capsys):
    assert class_report.main([str(reported.course)]) == 0
    page = (reported.course / "reports" / "class_report.html").read_text()
    assert page.count("data:image/png;base64,") == len(MAX_POINTS)
    assert "masked_softmax" in page and "apply_rope" in page
    assert "written:" in capsys.readouterr().out
