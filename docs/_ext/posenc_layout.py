"""The page of what is where (``docs/maintainers/layout.md``), made from the tree each time the site is built.

:func:`layout_page` writes its Markdown from what is there, so that it cannot fall behind:

- the top-level folders and files the repository tracks, each with what it is: its package's docstring, else
  :data:`TOP_LEVEL` (a new entry with neither is listed as undescribed, and ``tests/unit/test_layout_page.py`` fails);
- every package (a folder with ``__init__.py``) of :data:`PACKAGES`, walked down to its subpackages, and each
  module with the first paragraph of its docstring, read with ``ast`` (nothing is imported);
- the console scripts of ``pyproject.toml``, and the commands of ``posenc`` by audience
  (``posenc_course.commands.COMMANDS``, read without importing any command).

``posenc_docs`` writes it into ``_generated/layout.md``, which the hand-written page includes.
"""

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The packages whose modules the page lists, in this order: each package's folder, from the repository's root (the
#: engine is a distribution of its own, in ``engine/``).
PACKAGES = ("posenc_course", "engine/hardened_grading", "posenc_solutions")

#: What each top-level folder or file is, where no package docstring says it.
TOP_LEVEL = {
    ".ci": "CI's entry point, `.ci/run`: `make test` in a clean clone",
    ".containerignore": "what the grading image (`deploy/Containerfile`) leaves out of its build context",
    ".gitignore": "what git leaves out: the venvs, nbgrader's outputs, the demo's course, the site's build",
    "LICENSE": "the MIT licence",
    "Makefile": "set up, test, demo, author and measure: `make help` lists its targets",
    "README.md": "the course in a page, and where to go next",
    "authoring": "the notebooks' text, code and tests as literate Markdown specs, from which `make notebook` builds "
                 "`source/`; `README.md` is the authoring guide, `mutants.md` says why each surviving mutant is "
                 "acceptable",
    "autograded": "where `nbgrader autograde` writes graded notebooks (its contents generated, git-ignored)",
    "benchmarks": "`make bench` and `make bench-slurm`; each report kept in `docs/measured/` (`benchmarks/record.py`)",
    "engine": "the grading engine, `hardened-grading`, a distribution of its own that another course installs alone "
              "(`pip install ./engine`): its package `hardened_grading/`, its `pyproject.toml` and `README.md`",
    "deploy": "grading across machines: a Kubernetes Indexed Job and its image (`Containerfile`), and the Slurm "
              "batch scripts (`slurm/`)",
    "docs": "the course site (`make docs`): its pages in Markdown, `_ext/` (what it reads from the code, this page "
            "included), `measured/` (the reports the tools write), `requirements.lock` (its pinned packages)",
    "lock-overrides.txt": "what the lock leaves out on purpose (`make lock`)",
    "nbgrader_config.py": "the course's nbgrader settings; the repository root is the course directory",
    "pyproject.toml": "the package `posenc`: its dependencies, its console scripts, pytest's settings",
    "release": "the student notebooks, made by `nbgrader generate_assignment` from `source/` (`make release`), "
               "committed",
    "requirements.lock": "the exact versions that grading is reproduced with, for every supported Python",
    "source": "the instructor's notebooks, with solutions and hidden tests, built by `make notebook` (private)",
    "tests": "pytest: the package's correctness, and that the assignments grade right (`make test`, `make test-fast`)",
}

ROLE = re.compile(r":(?:mod|func|class|data|meth|attr|exc|obj):`~?([^`]+)`")


def one_line(text):
    """`text` as one line of Markdown for a table's cell: reStructuredText's roles and double backquotes as code,
    ``|`` escaped, and ``*`` outside code (a glob, ``authoring/*.md``, is no emphasis)."""
    text = ROLE.sub(r"`\1`", " ".join(text.split())).replace("``", "`").replace("|", "\\|")
    parts = text.split("`")
    return "`".join(part if i % 2 else part.replace("*", "\\*") for i, part in enumerate(parts))


def summary(path):
    """The first paragraph of the docstring of the module at `path`, on one line; ``""`` when it has none."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return one_line(docstring.split("\n\n")[0]) if docstring else ""


def _top(package):
    """The outermost package folder that holds `package` (``engine/hardened_grading`` for its ``judge/``)."""
    while is_package(package.parent):
        package = package.parent
    return package


def is_package(folder):
    return (folder / "__init__.py").is_file()


def modules_of(package):
    """``[(path, dotted name)]`` of package folder `package` and everything under it: the package, its modules,
    then each subpackage the same way, each level in name order."""
    dotted = ".".join(package.relative_to(_top(package).parent).parts)
    found = [(package / "__init__.py", dotted)]
    found += [(path, f"{dotted}.{path.stem}") for path in sorted(package.glob("*.py")) if path.name != "__init__.py"]
    for sub in sorted(p for p in package.iterdir() if p.is_dir() and is_package(p)):
        found += modules_of(sub)
    return found


def tracked_top_level():
    """The names of the top-level folders and files git tracks; without git, those that are there, but hidden
    ones, caches and builds."""
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return sorted({line.split("/")[0] for line in names.splitlines() if line})
    except (OSError, subprocess.CalledProcessError):
        return sorted(p.name for p in ROOT.iterdir()
                      if not p.name.startswith((".", "_")) and not p.name.endswith("egg-info"))


def describe_top_level(name):
    """What the top-level `name` is: its package's docstring, or :data:`TOP_LEVEL`'s words; ``""`` when neither."""
    path = ROOT / name
    described = summary(path / "__init__.py") if path.is_dir() and is_package(path) else ""
    return described or TOP_LEVEL.get(name, "")


def console_scripts():
    """``{script: "module:function"}`` of ``pyproject.toml``'s ``[project.scripts]``."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("scripts", {})


def table(header, rows):
    lines = [f"| {' | '.join(header)} |", f"| {' | '.join('---' for _ in header)} |"]
    return lines + [f"| {' | '.join(row)} |" for row in rows]


def top_level_section():
    rows = []
    for name in tracked_top_level():
        shown = f"`{name}/`" if (ROOT / name).is_dir() else f"`{name}`"
        rows.append([shown, describe_top_level(name) or "**not described**: add it to `TOP_LEVEL` in "
                                                        "`docs/_ext/posenc_layout.py`"])
    return ["## The folders and files at the top", ""] + table(["path", "what it is"], rows)


def shown_path(module):
    """A module's path from the repository's root; a subpackage's as its folder, ``posenc_course/qa/``."""
    relative = module.relative_to(ROOT)
    return f"{relative.parent.as_posix()}/" if module.name == "__init__.py" else relative.as_posix()


def package_sections():
    lines = ["## The packages, module by module", "",
             "Each module with the first paragraph of its docstring, which says more."]
    for name in PACKAGES:
        modules = modules_of(ROOT / name)
        lines += ["", f"### `{name}/`", "", summary(modules[0][0]), ""]
        rows = [[f"`{shown_path(path)}`", summary(path) or "(no docstring)"] for path, _ in modules[1:]]
        lines += table(["module", "what it is"], rows)
    return lines


def command_sections():
    from posenc_course.commands import AUDIENCES, COMMANDS

    scripts = [[f"`{script}`", f"`{target}`"] for script, target in console_scripts().items()]
    lines = ["## The commands", "", "The console scripts `make install` puts in `.venv/bin/`:", ""]
    lines += table(["command", "runs"], scripts)
    lines += ["", "`posenc --help` lists every command of the course by audience; `posenc NAME ARGS` runs one "
                  "(each also runs as `python -m MODULE`):", ""]
    rows = [[audience, f"`posenc {name}`", f"`{command.module}`", one_line(command.summary)]
            for audience in AUDIENCES for name, command in COMMANDS.items() if command.audience == audience]
    return lines + table(["audience", "command", "module", "what it does"], rows)


def layout_page():
    """The Markdown that ``docs/maintainers/layout.md`` includes: the top level, the packages, the commands."""
    return "\n".join(top_level_section() + [""] + package_sections() + [""] + command_sections()) + "\n"
