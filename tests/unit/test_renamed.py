"""A lone notebook sent under another name is graded under the released name, only when that is unambiguous
(:func:`hardened_grading.hooks.submission.adopt_renamed_notebook`, nbgrader's ``Autograde.pre_convert_hook``)."""

import pytest

from hardened_grading.hooks.submission import adopt_renamed_notebook


def course_with(tmp_path, released, submitted):
    """A course whose assignment ``a`` releases `released` and whose student ``s`` sent `submitted`; return
    nbgrader's list of the submission's notebooks."""
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    for name in released:
        (tmp_path / "release" / "a").mkdir(parents=True, exist_ok=True)
        (tmp_path / "release" / "a" / name).write_text("{}")
    folder = tmp_path / "submitted" / "s" / "a"
    folder.mkdir(parents=True)
    for name in submitted:
        (folder / name).write_text(f"sent as {name}")
    return [str(folder / name) for name in submitted]


@pytest.mark.parametrize("released, submitted, graded", [
    (["exercises.ipynb"], ["exercises (1).ipynb"], ["exercises.ipynb"]),
    (["p1.ipynb"], ["p1-final.ipynb"], ["p1.ipynb"]),
    (["p1.ipynb"], ["p1.ipynb"], ["p1.ipynb"]),
    (["problem1.ipynb", "problem2.ipynb"], ["problem1 (1).ipynb"], ["problem1 (1).ipynb"]),
    (["p1.ipynb"], ["draft.ipynb", "final.ipynb"], ["draft.ipynb", "final.ipynb"]),
], ids=["renamed", "another course's name", "not renamed", "several released", "several sent"])
def test_only_a_lone_notebook_of_a_one_notebook_assignment_is_adopted(tmp_path, monkeypatch, released, submitted, graded):
    notebooks = course_with(tmp_path, released, submitted)
    monkeypatch.chdir(tmp_path)  # nbgrader runs its hooks in the course directory
    adopt_renamed_notebook("a", "s", notebooks)
    assert [name.rsplit("/", 1)[-1] for name in notebooks] == graded
    for name in submitted:  # what the student sent is kept as sent
        assert (tmp_path / "submitted" / "s" / "a" / name).read_text() == f"sent as {name}"
