"""The engine's nbgrader glue, each piece alone on an in-memory notebook or a few files, as nbgrader tests
its preprocessors: milliseconds each, no kernel, no nbgrader command. The whole-class runs
(``test_grading``, ``test_unreadable``, ``test_foreign_courses``) prove them together; these say which
piece broke.

- :class:`hardened_grading.preprocessors.release.AnswerStubs`, nbgrader's ``ClearSolutions`` for ``generate_assignment``;
- :class:`hardened_grading.exporters.notebook.TolerantNotebookExporter`, ``Autograde.exporter_class``;
- :func:`hardened_grading.hooks.submission.mark_graded` (``Autograde.post_convert_hook``) and
  :func:`hardened_grading.hooks.unfinished.remove_unfinished`, which finish an interrupted run, with the submissions'
  locks (:mod:`hardened_grading.locks`), which keep a live run's folders from it;
- :func:`hardened_grading.preprocessors.release.generate_assignment_preprocessors`.

The renamed-notebook hook has its own module, ``test_renamed``; the restore of locked cells, ``test_restore``.
"""

import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from traitlets.config import Config

from hardened_grading import locks
from hardened_grading.cells import META, UNREADABLE
from hardened_grading.hooks.submission import GRADED_MARKER, mark_graded
from hardened_grading.exporters.notebook import TolerantNotebookExporter
from hardened_grading.hooks.unfinished import remove_unfinished
from hardened_grading.preprocessors.release import (AnswerStubs, HideWeights, assigned_names,
                                                    generate_assignment_preprocessors)

from ..helpers.cells import answer_cell, nbgrader_cell

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def solution_cell(source, grade_id="answer"):
    return answer_cell(source, grade_id)


def stubbed(*sources):
    """The cells' sources after AnswerStubs, run as generate_assignment runs it."""
    notebook = new_notebook(cells=[solution_cell(source, f"cell{i}") for i, source in enumerate(sources)],
                            metadata={"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}})
    notebook, _ = AnswerStubs(config=Config()).preprocess(notebook, {"language": "python"})
    return [cell.source for cell in notebook.cells]


# AnswerStubs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("code, names", [
    ("best = 'rope'", ["best"]),
    ("a = 1\nb: int = 2", ["a", "b"]),
    ("x = y = 3\nx = 4", ["x", "y"]),
    ("answer = 'b'  # my reason", ["answer"]),
    ("def f():\n    return 1", None),
    ("print('hi')", None),
    ("a, b = 1, 2", None),  # a tuple target is not a plain name
    ("obj.attr = 1", None),
    ("", None),
    ("this is not python", None),
])
def test_assigned_names_are_the_names_of_code_that_only_assigns(code, names):
    assert assigned_names(code) == names


def test_a_top_level_answer_becomes_one_ellipsis_line_per_name():
    [source] = stubbed(f"# which scheme?\n{BEGIN}\nbest = 'rope'\nreason: str = 'relative'\n{END}\nprint(best)")
    assert source == ("# which scheme?\nbest = ...  # YOUR ANSWER HERE\nreason = ...  # YOUR ANSWER HERE\n"
                      "print(best)")
    namespace = {}
    exec(source.replace("print(best)", ""), namespace)  # Run All goes on past it: no raise
    assert namespace["best"] is Ellipsis and namespace["reason"] is Ellipsis


@pytest.mark.parametrize("region", [
    "def slopes(n):\n    " + BEGIN + "\n    return [1]\n    " + END,  # indented: inside a function
    BEGIN + "\ndef slopes(n):\n    return [1]\n" + END,  # top level, but a function
    BEGIN + "\nbest = pick('rope')\nprint(best)\n" + END,  # top level, but does more than assign
])
def test_every_other_region_gets_nbgraders_own_stub(region):
    [ours] = stubbed(region)
    notebook = new_notebook(cells=[solution_cell(region)])
    from nbgrader.preprocessors import ClearSolutions

    notebook, _ = ClearSolutions(config=Config()).preprocess(notebook, {"language": "python"})
    assert ours == notebook.cells[0].source
    assert "raise NotImplementedError" in ours and BEGIN not in ours and "return [1]" not in ours


def test_the_answer_stub_is_a_setting():
    notebook = new_notebook(cells=[solution_cell(f"{BEGIN}\nbest = 'rope'\n{END}")])
    config = Config({"AnswerStubs": {"answer_stub": "{name} = None  # TODO"}})
    notebook, _ = AnswerStubs(config=config).preprocess(notebook, {"language": "python"})
    assert notebook.cells[0].source == "best = None  # TODO"


def written(points):
    """A written answer (nbgrader's manually graded answer: a markdown solution and grade cell) worth `points`."""
    return nbgrader_cell("markdown", f"Why?\n{BEGIN}\nBecause.\n*What earns the points*: the reason.\n{END}",
                         grade_id="why", solution=True, grade=True, points=points)


@pytest.mark.parametrize("graded, points, says", [(True, 2, "(2 points, graded by hand;"), (True, 0, "(Not graded;"),
                                                  (False, 2, "(Not graded;")])
def test_a_written_answers_stub_says_its_points_and_the_setting_makes_it_worth_0(graded, points, says):
    """The stub of a written answer says its points, from its metadata; c.AnswerStubs.grade_written_answers = False
    makes each worth 0 points, before nbgrader saves the cells to the gradebook (SaveCells comes after)."""
    notebook = new_notebook(cells=[written(points), solution_cell(f"{BEGIN}\nbest = 'rope'\n{END}")])
    config = Config({"AnswerStubs": {"grade_written_answers": graded}})
    notebook, _ = AnswerStubs(config=config).preprocess(notebook, {"language": "python"})
    cell = notebook.cells[0]
    assert cell.source.startswith("Why?\n*Write your answer here.* ") and says in cell.source
    assert "Because." not in cell.source and "the reason" not in cell.source, "the model answer and its rubric are gone"
    assert cell.metadata["nbgrader"]["points"] == (points if graded else 0)
    assert notebook.cells[1].source == "best = ...  # YOUR ANSWER HERE", "the other answers are stubbed as before"


def test_generate_assignment_runs_answer_stubs_where_nbgrader_runs_clear_solutions():
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions, SaveCells

    stock = GenerateAssignment.class_traits()["preprocessors"].default()
    ours = generate_assignment_preprocessors()
    assert ours.index(AnswerStubs) == stock.index(ClearSolutions)
    assert ours.index(HideWeights) == ours.index(ClearHiddenTests) + 1 > ours.index(SaveCells), \
        "the weights are hidden after the gradebook has them"
    assert [p for p in ours if p not in (AnswerStubs, HideWeights)] == [p for p in stock if p is not ClearSolutions]


@pytest.mark.parametrize("line, shown", [
    ('check_number(a, "real", "a")  # weight 0', 'check_number(a, "real", "a")'),
    ("check_close(got, want, 'x')  #weight: 2.5", "check_close(got, want, 'x')"),
    ("check_close(got, want, 'x')  # a comment", "check_close(got, want, 'x')  # a comment"),
    ('check_true(ok, "keys get weight 0 before the softmax")', 'check_true(ok, "keys get weight 0 before the softmax")'),
])
def test_the_release_shows_no_weight_comment(line, shown):
    cell = nbgrader_cell("code", f"x = 1\n{line}\n", grade_id="t", grade=True, points=1)
    notebook, _ = HideWeights().preprocess(new_notebook(cells=[cell, solution_cell(line)]), {})
    assert notebook.cells[0].source == f"x = 1\n{shown}\n"
    assert notebook.cells[1].source == line, "only test cells"


# TolerantNotebookExporter --------------------------------------------------------------------------

@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course folder whose assignment ``a`` releases ``nb.ipynb``; the working folder, as nbgrader's."""
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    (tmp_path / "release" / "a").mkdir(parents=True)
    release = new_notebook(cells=[new_markdown_cell("# Problem 1"), new_code_cell("squares = None")])
    nbformat.write(release, tmp_path / "release" / "a" / "nb.ipynb")
    (tmp_path / "submitted" / "s" / "a").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def export(path):
    resources = {"nbgrader": {"student": "s", "assignment": "a", "notebook": "nb"}}
    exporter = TolerantNotebookExporter(config=Config({"ResilientExecute": {"sandbox": "off"}}))
    output, resources = exporter.from_filename(str(path), resources=resources)
    return nbformat.reads(output, as_version=4), resources


@pytest.mark.parametrize("content, error", [
    (b"", "NotJSONError"),
    (bytes(range(256)), "UnicodeDecodeError"),
    (b'{"cells": [{"cell_type": "code", "source": "trunc', "NotJSONError"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": "not a list"}', "ValidationError"),
], ids=["empty", "binary", "truncated", "invalid"])
def test_an_unreadable_submission_is_graded_as_the_release_with_a_first_cell_that_says_why(course, caplog, content, error):
    sent = course / "submitted" / "s" / "a" / "nb.ipynb"
    sent.write_bytes(content)
    notebook, resources = export(sent)
    first, *rest = notebook.cells
    reason = first.metadata[META][UNREADABLE]
    assert first.cell_type == "markdown" and "could not be graded as sent, and scores 0" in first.source
    assert "nb.ipynb is not a readable Jupyter notebook" in reason and error in reason
    assert [c.source for c in rest] == ["# Problem 1", "squares = None"]
    assert sent.read_bytes() == content, "the file the student sent is left as it was"
    assert resources["metadata"]["path"] == str(sent.parent), "the kernel starts in the submission's folder"
    assert any("student 's'" in r.getMessage() and "0 points" in r.getMessage() for r in caplog.records)


def test_a_readable_submission_passes_through_unchanged(course):
    sent = course / "submitted" / "s" / "a" / "nb.ipynb"
    mine = new_notebook(cells=[new_code_cell("squares = lambda n: [i * i for i in range(1, n + 1)]")])
    nbformat.write(mine, sent)
    notebook, resources = export(sent)
    assert [c.source for c in notebook.cells] == [c.source for c in mine.cells]
    assert not any(META in c.metadata for c in notebook.cells)
    assert resources["metadata"]["name"] == "nb" and resources["metadata"]["path"] == str(sent.parent)


def test_a_run_that_requires_a_sandbox_it_cannot_make_stops_before_grading(course, monkeypatch):
    from hardened_grading.sandbox import probe

    monkeypatch.setattr(probe, "_sandbox_problem", lambda: "no bubblewrap here")
    with pytest.raises(SystemExit, match="stopped before grading anything: no bubblewrap here"):
        TolerantNotebookExporter(config=Config({"ResilientExecute": {"sandbox": "require"}}))
    TolerantNotebookExporter(config=Config({"ResilientExecute": {"sandbox": "off"}}))  # off: it grades


# mark_graded and remove_unfinished -----------------------------------------------------------------

def autograded_folder(course, student, notebooks=("nb.ipynb",)):
    folder = course / "autograded" / student / "a"
    folder.mkdir(parents=True)
    for name in notebooks:
        (folder / name).write_text("{}")
    return folder


def test_a_run_interrupted_part_way_is_finished_by_the_next(course):
    done = autograded_folder(course, "done")
    mark_graded("a", "done", [str(course / "submitted" / "done" / "a" / "nb.ipynb")])
    assert (done / GRADED_MARKER).exists()
    half = autograded_folder(course, "half")  # a notebook written, the post-convert hook never reached
    early = autograded_folder(course, "early", notebooks=())  # killed before the notebook: nbgrader would skip it
    staging = autograded_folder(course, ".ahead-host-1-x")  # a worker's staging folder (ahead): not a student's
    remove_unfinished(course)
    assert done.exists() and not half.exists() and not early.exists() and staging.exists()


def test_a_folder_a_live_run_holds_is_left_alone(course):
    """While a run holds a half-graded folder's lock (here another descriptor of this process: flock tells them
    apart), the clean-up leaves the folder; once the lock is let go, it removes it."""
    live = autograded_folder(course, "live")
    fd = locks.try_lock(locks.lock_file(live))
    assert fd is not None and locks.try_lock(locks.lock_file(live)) is None
    try:
        remove_unfinished(course)
        assert live.exists()
    finally:
        locks.release(fd)
    remove_unfinished(course)
    assert not live.exists()
    assert locks.lock_file(live).exists(), "a lock file is never removed: a run may be waiting on it"


def test_mark_graded_lets_go_of_the_submissions_lock(course):
    folder = autograded_folder(course, "s")
    locks.hold(locks.lock_file(folder))
    try:
        assert locks.holds(locks.lock_file(folder))
        mark_graded("a", "s", [str(course / "submitted" / "s" / "a" / "nb.ipynb")])
        assert not locks.holds(locks.lock_file(folder))
        fd = locks.try_lock(locks.lock_file(folder))  # another run may take it now
        assert fd is not None
        locks.release(fd)
    finally:
        locks.let_go_all()


def test_a_waiting_run_hears_who_holds_the_lock(course):
    path = locks.lock_file(course / "autograded" / "s" / "a")
    fd = locks.try_lock(path)
    assert locks.holder(path).startswith(f"pid {os.getpid()} on ")
    heard = []

    def let_go(who):  # called once, while the lock is held: then let go, so that the wait ends
        heard.append(who)
        locks.release(fd)

    locks.release(locks.wait_for_lock(path, let_go))
    assert len(heard) == 1 and heard[0].startswith(f"pid {os.getpid()} on ")
    assert locks.holder(path) == "", "a lock let go says no holder"


def test_a_shard_removes_only_its_own_students_unfinished_folders(course):
    mine, theirs = autograded_folder(course, "mine"), autograded_folder(course, "theirs")
    remove_unfinished(course, students={"mine"})
    assert not mine.exists() and theirs.exists(), "another shard's folders are its own to look at"


def test_mark_graded_of_nothing_marks_nothing(course):
    mark_graded("a", "s", [])
    assert not list(course.glob(f"autograded/**/{GRADED_MARKER}"))
