"""posenc-check keeps the gradebook it prepared under a key of everything it depends on (posenc_course.student.check)."""

import nbformat

from posenc_course.course import new_course
from posenc_course.student.check import cache_folder, gradebook_key


def test_the_key_changes_with_the_source_notebook_and_the_config(tmp_path):
    course = new_course(tmp_path / "course")
    key = gradebook_key(course, "posenc")
    assert gradebook_key(course, "posenc") == key and len(key) == 32
    assert gradebook_key(course, "posenc-advanced") != key
    notebook = course / "source" / "posenc" / "exercises.ipynb"
    edited = nbformat.read(notebook, as_version=4)
    edited.cells[-1].source += "\n# one more line of the hidden tests"
    nbformat.write(edited, notebook)
    assert gradebook_key(course, "posenc") != key
    changed = gradebook_key(course, "posenc")
    (course / "nbgrader_config.py").write_text((course / "nbgrader_config.py").read_text() + "\n# changed\n")
    assert gradebook_key(course, "posenc") != changed


def test_the_cache_is_xdg_cache_home_s(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "posenc"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder() == tmp_path / "home" / ".cache" / "posenc"
