"""The page of what is where (``docs/maintainers/layout.md``) is made from the tree: it lists every module.

The generator (``docs/_ext/posenc_layout.py``) walks the packages' folders; here the packages are walked again
by importing them (``pkgutil``), so a module added later by anyone is checked to be on the page, with the first
paragraph of its docstring. Every tracked top-level folder and file is described, and every command is listed.
"""

import importlib
import pkgutil
import sys
from pathlib import Path

import pytest

from posenc_course import ROOT, commands

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import posenc_layout  # noqa: E402

PAGE = posenc_layout.layout_page()


def modules_imported(package_name):
    """``{dotted name: module file}`` of a package and every module and subpackage under it, imported."""
    package = importlib.import_module(package_name)
    found = {package_name: package.__file__}
    for info in pkgutil.walk_packages(package.__path__, f"{package_name}."):
        found[info.name] = importlib.import_module(info.name).__file__
    return found


@pytest.mark.parametrize("package", ["posenc_course", "hardened_grading"])
def test_the_page_lists_every_module_with_its_docstring(package):
    missing = []
    for name, file in modules_imported(package).items():
        path = Path(file).relative_to(ROOT)
        shown = f"`{path.parent.as_posix()}/`" if file.endswith("__init__.py") else f"`{path.as_posix()}`"
        row = next((line for line in PAGE.splitlines() if line.startswith(f"| {shown} |")), None)
        if name == package:  # the package's own docstring heads its section
            assert f"### {shown}" in PAGE and posenc_layout.summary(Path(file)) in PAGE
        elif row is None or posenc_layout.summary(ROOT / file) not in row:
            missing.append(name)
    assert not missing, f"docs/_ext/posenc_layout.py's page misses {missing}, or their docstrings"


def test_every_top_level_folder_and_file_is_described():
    assert "not described" not in PAGE, ("a top-level folder or file has no description: add it to TOP_LEVEL in "
                                         "docs/_ext/posenc_layout.py\n" + PAGE.split("## The packages")[0])
    for name in posenc_layout.tracked_top_level():
        assert f"| `{name}" in PAGE, f"{name} is not on the page"


def test_every_console_script_and_command_is_listed():
    for script, target in posenc_layout.console_scripts().items():
        assert f"| `{script}` | `{target}` |" in PAGE
    for name, command in commands.COMMANDS.items():
        assert f"| `posenc {name}` | `{command.module}` |" in PAGE


def test_a_module_added_later_is_listed_without_a_change_here(tmp_path, monkeypatch):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text('"""A package."""\n')
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "new.py").write_text('"""A module added later,\nin two lines.\n\nMore."""\n')
    monkeypatch.setattr(posenc_layout, "ROOT", tmp_path)
    monkeypatch.setattr(posenc_layout, "PACKAGES", ("pkg",))
    page = "\n".join(posenc_layout.package_sections())
    assert "| `pkg/sub/new.py` | A module added later, in two lines. |" in page
    assert "| `pkg/sub/` | (no docstring) |" in page
