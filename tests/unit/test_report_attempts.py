"""What a person reads of who attempted an exercise: the class report (engine and course), and posenc-check, on
notebooks made in memory (issue 47).

A new instructor read "ex04: ... not attempted 4" and then the wrong ``ex04_columns`` answers of three of those
four: a student counted as not attempting an exercise when any one of its answers was still the stub, while
posenc-check called the same notebook's ex04 started. An exercise is now not attempted only when every one of its
answers is still the stub, for the report and for posenc-check alike; and a part nobody attempted says so, not
"No mistake.".
"""

import nbformat

from hardened_grading.cells import META
from hardened_grading.class_grading import report as engine_report
from hardened_grading.summary import part_by_pattern
from posenc_course import class_report

from ..helpers.cells import answer_cell, grade_cell

COLUMNS_STUB = "ex04_columns = ...  # YOUR ANSWER HERE"
FUNCTION_STUB = ('def clipped_relative_bias(bias_table, query_positions, key_positions):\n    # YOUR CODE HERE\n'
                 '    raise NotImplementedError("not answered yet: write this function here, in place of this line")')
WRONG_COLUMNS = "ex04_columns = [0, 1, 2]"
NOT_ANSWERED = "NotImplementedError: not answered yet: write this function here, in place of this line"


def judged_cell(grade_id, *messages):
    """A test cell with the judge's checks: one failed check per message, or one passed check without any."""
    cell = grade_cell("", grade_id, 2)
    checks = [{"line": n + 1, "hidden": False, "passed": False, "message": m} for n, m in enumerate(messages)]
    cell.metadata[META] = {"checks": checks or [{"line": 1, "hidden": False, "passed": True, "message": ""}]}
    return cell


def ex04(columns=COLUMNS_STUB, function=FUNCTION_STUB):
    """A graded notebook of exercise 4 of posenc: a concept answer and a function, each above its test cell."""
    columns_failure = {COLUMNS_STUB: ("TypeError: object of type 'ellipsis' has no len()",),
                       WRONG_COLUMNS: ("ex04_columns: expected 4 columns, one per sinusoid pair got 3",)}
    function_failure = () if function != FUNCTION_STUB else (NOT_ANSWERED,)
    return nbformat.v4.new_notebook(cells=[
        answer_cell(columns, "ex04_columns_answer"),
        judged_cell("ex04_columns_test", *columns_failure.get(columns, ())),
        answer_cell(function, "ex04_clipped_relative_bias"),
        judged_cell("ex04_clipped_relative_bias_test", *function_failure)])


#: The instructor's class: one left exercise 4 as released; three answered its concept question wrong and left its
#: function as the stub.
CLASS = {"blank": ex04(), **{f"s{n}": ex04(columns=WRONG_COLUMNS) for n in (1, 2, 3)}}


def course_report(notebooks):
    data, groups = class_report.ClassData({student: {"ex04": (0.0, 4.0)} for student in notebooks}), {}
    for student, notebook in notebooks.items():
        class_report.sort_notebook(notebook, student, data, groups)
    for group in groups.values():
        data.mistakes.setdefault(group.part, []).append(group)
    return data


def test_a_student_with_one_answer_of_their_own_attempted_the_exercise():
    data = course_report(CLASS)
    assert data.not_attempted == {"ex04": {"blank"}}
    [mistake] = data.mistakes["ex04"]
    assert mistake.test == "ex04_columns_test" and sorted(mistake.students) == ["s1", "s2", "s3"]


def test_the_report_counts_no_student_both_as_not_attempting_and_as_making_a_mistake():
    data = course_report(CLASS)
    mistaken = {student for group in data.mistakes["ex04"] for student in group.students}
    assert not mistaken & data.not_attempted["ex04"]
    line = class_report.report_text(data).split("\nex04: ")[1].splitlines()[0]
    assert "not attempted 1;" in line and "attempted 3 (" in line, line


def test_posenc_check_tells_the_same_students_not_attempted_as_the_report():
    from posenc_course.student.check import exercise_states

    data = course_report(CLASS)
    for student, notebook in CLASS.items():
        assert (exercise_states(notebook)["ex04"] == "not attempted") is (student in data.not_attempted["ex04"])
    assert exercise_states(CLASS["s1"])["ex04"] == "started"
    assert exercise_states(ex04("ex04_columns = [0, 1, 2, 3]", "def clipped_relative_bias(t, q, k):\n    return t"))[
        "ex04"] == "answered"


def test_an_exercise_nobody_attempted_says_so_not_no_mistake():
    data = course_report({"blank": ex04(), "blank-too": ex04()})
    assert not data.mistakes
    page = class_report.report_html(data)
    section = page.split("<section id='ex04'>")[1].split("<div>")[1]
    assert "No mistake." not in page and "Nobody attempted it" in section, section
    assert "Nobody attempted anything" in page.split("<section")[0]
    assert "Nobody attempted it" in class_report.report_text(data).split("\nex04: ")[1]


def test_an_exercise_attempted_without_a_mistake_says_no_mistake():
    data = course_report({"blank": ex04(), "right": ex04("ex04_columns = [0, 1, 2, 3]",
                                                         "def clipped_relative_bias(t, q, k):\n    return t")})
    section = class_report.report_html(data).split("<section id='ex04'>")[1].split("<div>")[1]
    assert "No mistake." in section and "Nobody attempted" not in section, section


# The engine's own report, in a course of nbgrader's own stubs ------------------------------------

ENGINE_STUB = "def area(w, h):\n    # YOUR CODE HERE\n    raise NotImplementedError()"


def shapes(area=ENGINE_STUB, perimeter=ENGINE_STUB.replace("area", "perimeter")):
    """A graded notebook of a course of nbgrader's: part ``shapes`` is two answers, each above its test cell."""
    def failure(source):
        return "NotImplementedError: " if "NotImplementedError" in source else "AssertionError: expected 6 got 5"
    return nbformat.v4.new_notebook(cells=[
        answer_cell(area, "area"), judged_cell("shapes_area_test", failure(area)),
        answer_cell(perimeter, "perimeter"), judged_cell("shapes_perimeter_test", failure(perimeter))])


def engine_class_data(notebooks):
    part_of = part_by_pattern(r"^(shapes)_")
    released = {"area": ENGINE_STUB, "perimeter": ENGINE_STUB.replace("area", "perimeter")}
    data, groups = engine_report.ClassData({s: {"shapes": (0.0, 4.0)} for s in notebooks}), {}
    for student, notebook in notebooks.items():
        engine_report.sort_notebook(notebook, student, data, groups, part_of=part_of, stubs=released)
    for group in groups.values():
        data.mistakes.setdefault(group.part, []).append(group)
    return data


def test_the_engine_s_report_counts_a_part_attempted_when_one_answer_is_the_student_s():
    data = engine_class_data({"blank": shapes(), "half": shapes(area="def area(w, h):\n    return w + h")})
    assert data.not_attempted == {"shapes": {"blank"}}
    assert [g.students for g in data.mistakes["shapes"]] == [["half"]]
    assert "Nobody attempted" not in engine_report.report_html(data, title="shapes")


def test_the_engine_s_report_says_a_part_nobody_attempted():
    data = engine_class_data({"blank": shapes(), "blank-too": shapes()})
    page = engine_report.report_html(data, title="shapes")
    section = page.split("<section id='shapes'>")[1].split("<div>")[1]
    assert "No mistake." not in page and "Nobody attempted it" in section, section
