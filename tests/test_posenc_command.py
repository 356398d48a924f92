"""The ``posenc`` command (:mod:`posenc_course.commands`): it lists every command by audience and runs one by name.

Every module of ``posenc_course`` that runs as ``python -m`` is registered, each registered module has a
``main``, the list imports none of them, and an unknown name is refused with the names there are.
"""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import posenc_course
from posenc_course import commands

PACKAGE = Path(posenc_course.__file__).parent
ROOT = PACKAGE.parent


def runnable_modules():
    """The dotted names of ``posenc_course``'s modules that end in ``if __name__ == "__main__":``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body):
            found.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_every_module_run_as_python_dash_m_is_a_command():
    registered = {command.module for command in commands.COMMANDS.values()}
    missing = [name for name in runnable_modules() if name not in registered and name != commands.__name__]
    assert not missing, (f"{missing} run as python -m but are not in posenc_course/commands.py's COMMANDS: "
                         "add each, with a summary and its audience")


def test_every_module_the_makefile_runs_is_a_command():
    called = set(re.findall(r"-m (posenc_course[\w.]*)", (ROOT / "Makefile").read_text()))
    registered = {command.module for command in commands.COMMANDS.values()}
    assert called and called <= registered, f"the Makefile runs {sorted(called - registered)}, not in COMMANDS"


@pytest.mark.parametrize("name", list(commands.COMMANDS))
def test_each_command_imports_and_has_a_main_taking_argv(name):
    import importlib
    import inspect

    command = commands.COMMANDS[name]
    main = getattr(importlib.import_module(command.module), "main", None)
    assert callable(main), f"{command.module} has no main(): `posenc {name}` cannot run it"
    assert "argv" in inspect.signature(main).parameters, f"{command.module}.main takes no argv"
    assert command.audience in commands.AUDIENCES, f"{name}: unknown audience {command.audience!r}"
    assert command.summary and "\n" not in command.summary, f"{name}: its summary is one line"


def test_the_list_shows_every_command_under_its_audience(capsys):
    assert commands.main([]) == 0
    listed = capsys.readouterr().out
    assert commands.main(["--help"]) == 0
    assert capsys.readouterr().out == listed
    headings = [f"{audience}:" for audience in commands.AUDIENCES]
    lines = listed.splitlines()
    assert [line for line in lines if line in headings] == headings, "every audience, in order"
    for name, command in commands.COMMANDS.items():
        row = next((i for i, line in enumerate(lines) if line.split()[:1] == [name]), None)
        assert row is not None, f"{name} is not listed:\n{listed}"
        under = max(i for i, line in enumerate(lines[:row]) if line in headings)
        assert lines[under] == f"{command.audience}:", f"{name} is listed under {lines[under]}"
        assert command.summary in lines[row]


def test_an_unknown_command_is_refused_with_the_names_there_are(capsys):
    assert commands.main(["chek", "exercises.ipynb"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("posenc: no command 'chek' (did you mean 'check'?)")
    assert all(name in error for name in commands.COMMANDS)


def test_a_command_runs_its_main_with_its_arguments(tmp_path, monkeypatch):
    (tmp_path / "fake_command.py").write_text(
        "import sys\nseen = []\ndef main(argv=None):\n    seen.append((sys.argv[0], argv))\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(commands.COMMANDS, "fake", commands.Command("fake_command", "a fake", "Student"))
    assert commands.main(["fake", "a", "--b"]) == 3
    import fake_command

    assert fake_command.seen == [("posenc fake", ["a", "--b"])], "its usage line says `posenc fake`"
    assert sys.argv[0] != "posenc fake", "sys.argv is put back"


def test_the_list_imports_no_command():
    """``posenc --help`` loads no command's module: the registry is lazy."""
    code = ("import json, sys\nfrom posenc_course import commands\ncommands.command_list()\n"
            "print(json.dumps(sorted(sys.modules)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    eager = sorted({c.module for c in commands.COMMANDS.values()} & set(loaded))
    assert not eager and "nbgrader" not in loaded, f"listing the commands imported {eager or 'nbgrader'}"


def test_posenc_is_a_console_script_and_the_old_ones_stay():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["posenc"] == "posenc_course.commands:main"
    assert {"posenc-check", "posenc-lab", "posenc-grade"} <= set(scripts)
    # hardened-grade is the engine's own script now (engine/pyproject.toml), installed with it
    engine_scripts = tomllib.loads((ROOT / "engine" / "pyproject.toml").read_text())["project"]["scripts"]
    assert engine_scripts["hardened-grade"] == "hardened_grading.class_grading.command:main"
    for name in ("posenc-check", "posenc-lab", "posenc-grade"):
        module = scripts[name].split(":")[0]
        assert any(c.module == module for c in commands.COMMANDS.values()), f"{name} is not a posenc command"
