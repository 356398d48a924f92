"""The grading engine (``hardened_grading``) is a package of its own: it never imports this course.

Everything it knows of a course comes from nbgrader's metadata and the settings of ``nbgrader_config.py``;
``posenc_course`` and ``posenc_solutions`` may import the engine, never the other way round. Proven twice:
on the source (every import statement of every module of the engine), and by importing every module of
the engine in a fresh Python and listing what it loaded.
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import hardened_grading

ENGINE = Path(hardened_grading.__file__).parent
MODULES = sorted(ENGINE.rglob("*.py"))  #: every module of the engine, in every folder


def dotted(path):
    """The module name of a file of the engine: ``hardened_grading.judge.setup`` for ``judge/setup.py``."""
    parts = path.relative_to(ENGINE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
COURSE_PACKAGES = ("posenc_course", "posenc_solutions", "authoring", "tests")


def imported_names(path, package=None):
    """The modules a file imports, absolute; a relative import resolved against the file's own package
    (`package`, dotted; by default the engine's package that holds `path`). One that climbs out of the
    engine is kept relative, as ``..name``."""
    if package is None:
        package = dotted(path) if path.name == "__init__.py" else dotted(path).rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                names.append(node.module)
            else:
                parts = package.split(".")
                if node.level > len(parts) or parts[0] != "hardened_grading":  # out of the engine's package
                    names.append("." * node.level + (node.module or ""))
                else:
                    base = parts[:len(parts) - node.level + 1]
                    names.append(".".join(base + ([node.module] if node.module else [])))
    return names


@pytest.mark.parametrize("path", MODULES, ids=[str(path.relative_to(ENGINE)) for path in MODULES])
def test_no_module_of_the_engine_imports_the_course(path):
    found = [name for name in imported_names(path)
             if name.startswith(".") or name.split(".")[0] in COURSE_PACKAGES]
    assert not found, f"{path.relative_to(ENGINE.parent)} imports {found}: the engine must not know the course"


def test_the_check_sees_an_import_of_the_course(tmp_path):
    """The scan above can fail: a module that imports the course, directly or relatively, is caught."""
    module = tmp_path / "bad.py"
    module.write_text("import os\nfrom posenc_course.layout import NOTEBOOK\n"
                      "def f():\n    from ..posenc_course import layout\n    import posenc_solutions.rope\n")
    assert imported_names(module, "hardened_grading") == ["os", "posenc_course.layout", "..posenc_course",
                                                          "posenc_solutions.rope"]
    # in a folder of the engine, ``..`` stays inside the engine, and ``...`` leaves it
    module.write_text("from ..cells import grade_id\nfrom . import setup\nfrom ...posenc_course import layout\n")
    assert imported_names(module, "hardened_grading.judge") == ["hardened_grading.cells", "hardened_grading.judge",
                                                                "...posenc_course"]


def test_importing_every_module_of_the_engine_loads_nothing_of_the_course(tmp_path):
    """In a fresh Python started outside the repository, the engine's modules load no module of the course."""
    names = [dotted(path) for path in MODULES]
    code = ("import importlib, json, sys\n"
            f"for name in {names!r}:\n    importlib.import_module(name)\n"
            "print(json.dumps(sorted(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert set(names) <= set(loaded)
    assert not [name for name in loaded if name.split(".")[0] in COURSE_PACKAGES]
