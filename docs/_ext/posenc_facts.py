"""The numbers and names the docs state, read from the code when the site is built: never typed in prose.

A page writes ``{fact}`posenc.points``` where it means the first assignment's total; the role (``posenc_docs``)
puts this module's value there. Each fact also says how a person would type it by hand (``typed``), and
``tests/system/test_docs.py`` fails when a page or the README does.

Measured figures (timings, test counts, benchmark ratios) are not facts of the code: the tools that measure them
write them into ``docs/measured/``, each with the commit and the machine it came from, and the pages include
those files whole.
"""

import ast
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


@dataclass(frozen=True)
class Fact:
    """A value the docs state: how to compute it, and the patterns that would be the same value typed by hand."""

    value: object  #: a function of no arguments
    typed: tuple = ()  #: regular expressions of prose (code spans removed unless ``in_code``) that type it by hand
    in_code: bool = False  #: whether a code span typing it counts too (paths, which are written as code)

    def text(self):
        return str(self.value())


def word(number):
    """``10`` as a word of prose, ``"ten"``; numbers past twelve stay digits."""
    return WORDS[number] if 0 <= number < len(WORDS) else str(number)


@cache
def notebook(assignment):
    import nbformat

    return nbformat.read(ROOT / "release" / assignment / "exercises.ipynb", as_version=4)


def _layout():
    from posenc_course import layout

    return layout


def exercises(assignment):
    return len(_layout().points_per_exercise(notebook(assignment)))


def points(assignment):
    total = sum(_layout().points_per_test_cell(notebook(assignment)).values())
    return int(total) if float(total).is_integer() else total


def test_cells(assignment):
    return len(_layout().points_per_test_cell(notebook(assignment)))


def functions_by_exercise(assignment):
    """``{"ex01": (function names), ...}`` of a graded assignment, as ``posenc_solutions`` lists them."""
    return _layout().exercise_functions(assignment)


def functions(assignment):
    return sum(len(names) for names in functions_by_exercise(assignment).values())


@cache
def course_config():
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()


def limit(name):
    from hardened_grading.sandbox.limits import Limits

    return getattr(Limits(), name)


def system_files():
    from hardened_grading.sandbox.bwrap import SYSTEM_FILES

    return SYSTEM_FILES


def python_versions():
    """The supported Pythons, from pyproject.toml's classifiers: ``["3.10", ..., "3.13"]``."""
    return re.findall(r'"Programming Language :: Python :: (3\.\d+)"', (ROOT / "pyproject.toml").read_text())


#: The setting that names the repository's public address for a build of the site, over what the repository says.
REPOSITORY_SETTING = "POSENC_REPOSITORY_URL"
#: An address a reader can clone from: a network URL, or ssh's ``user@host:path``.
NETWORK_URL = re.compile(r"^(?:(?P<scheme>https?|ssh|git)://(?:(?P<user>[^/@:]*)(?::[^/@]*)?@)?(?P<host>[^/@\s]+)"
                         r"(?P<path>/\S*)"
                         r"|(?P<scp>[\w.-]+@[\w.-]+:\S+))$")


def public_address(url):
    """`url` as a reader may be shown it: a network address without a password or an https token (ssh keeps its
    user); None for a local path, a ``file://`` URL or nothing (a clone of a clone on this machine is no address
    for a reader)."""
    match = NETWORK_URL.match((url or "").strip())
    if not match:
        return None
    if match["scp"]:
        return match["scp"]
    user = f"{match['user']}@" if match["user"] and match["scheme"] in ("ssh", "git") else ""
    return f"{match['scheme']}://{user}{match['host']}{match['path']}"


def project_url(name, pyproject=None):
    """``[project.urls]`` entry `name` of pyproject.toml, or None (read as text: Python 3.10 has no tomllib)."""
    text = (pyproject or ROOT / "pyproject.toml").read_text()
    section = re.search(r"^\[project\.urls\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    entry = section and re.search(rf'^\s*"?{re.escape(name)}"?\s*=\s*"([^"]*)"', section.group(1), re.M | re.I)
    return entry.group(1) if entry else None


def origin_url(root=ROOT):
    """What ``git remote get-url origin`` says in `root`, or None (no git, no remote)."""
    import subprocess

    try:
        found = subprocess.run(["git", "remote", "get-url", "origin"], cwd=root, capture_output=True, text=True,
                               timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found.stdout.strip() if found.returncode == 0 else None


def repository_url(environ=None, pyproject=None, root=ROOT):
    """The repository's public address, from the one setting that says it, first found of: the environment's
    ``POSENC_REPOSITORY_URL`` (a build of the site for a given address), pyproject.toml's ``[project.urls]
    Repository``, ``git remote get-url origin``; each only if it is a network address (:func:`public_address`).
    None when none is: the pages then say how else to get the code, never a placeholder."""
    import os

    environ = os.environ if environ is None else environ
    for candidate in (lambda: environ.get(REPOSITORY_SETTING), lambda: project_url("Repository", pyproject),
                      lambda: origin_url(root)):
        address = public_address(candidate())
        if address:
            return address
    return None


def pythons():
    """The supported Pythons, in prose: ``3.10, 3.11, 3.12 and 3.13``."""
    versions = python_versions()
    return ", ".join(versions[:-1]) + " and " + versions[-1]


def locked(package, lock=ROOT / "requirements.lock"):
    """The version(s) `lock` pins for `package`, with the Pythons each is for."""
    pins = re.findall(rf"^{re.escape(package)}==(\S+)(?: ; (.*))?$", Path(lock).read_text(), re.M)
    if not pins:
        raise KeyError(f"{Path(lock).name} pins no {package}")
    if len(pins) == 1:
        return pins[0][0]
    return ", ".join(f"{version} where {marker.replace('python_full_version', 'Python')}" for version, marker in pins)


def makefile_variable(name):
    return re.search(rf"^{name}\s*:?=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M).group(1)


def theory_figures():
    """The theory notebook's figures: the ``plt.show()`` calls of its code cells, each one figure."""
    nb = json.loads((ROOT / "release" / "theory" / "theory.ipynb").read_text())
    return sum("".join(c["source"]).count("plt.show()") for c in nb["cells"] if c["cell_type"] == "code")


def _number(value):
    return rf"(?<![\d.]){value}(?![\d]|\.\d)"


def _facts():
    facts = {}
    for key, assignment in (("posenc", "posenc"), ("advanced", "posenc-advanced"), ("current", "posenc-current")):
        facts[f"{key}.exercises"] = Fact(lambda a=assignment: exercises(a),
                                         (rf"\b(?:{_number(exercises(assignment))}|{word(exercises(assignment))})\s+(?:[\w-]+\s+)?exercises\b",))
        facts[f"{key}.exercises.word"] = Fact(lambda a=assignment: word(exercises(a)))
        facts[f"{key}.points"] = Fact(lambda a=assignment: points(a),
                                      (rf"{_number(points(assignment))}\s*points", rf"\*\*{points(assignment)}\*\*",
                                       rf"{_number(points(assignment))}/{points(assignment)}\b"))
        facts[f"{key}.test_cells"] = Fact(lambda a=assignment: test_cells(a),
                                          (rf"{_number(test_cells(assignment))}\s+test cells",))
        facts[f"{key}.functions"] = Fact(lambda a=assignment: functions(a),
                                         (rf"{_number(functions(assignment))}\s+functions",))
    facts["theory.figures"] = Fact(theory_figures, (rf"{_number(theory_figures())}\s+figures",))
    facts["timeout"] = Fact(lambda: course_config().Execute.timeout,
                            (rf"{_number(course_config().Execute.timeout)}\s?s\b", rf"{_number(course_config().Execute.timeout)} seconds"))
    from hardened_grading.sandbox.probe import PROBE_SECONDS
    from hardened_grading.sandbox.limits import Limits
    from dataclasses import fields

    for field in fields(Limits):
        value = field.default
        typed = (rf"{_number(value)}\s*(?:MiB|KiB|s\b|seconds|processes)", rf"\|\s*{value}\s*\|") if value > 1 else ()
        if field.name == "memory_mb":
            typed += (rf"{_number(value // 1024)}\s*GiB",)
        facts[f"limits.{field.name}"] = Fact(lambda name=field.name: limit(name), typed)
    from hardened_grading.preprocessors.execute import ResilientExecute

    from hardened_grading.preprocessors.execute import GRADER_LIMITS

    for name in GRADER_LIMITS:
        value = ResilientExecute.class_traits()[name].default_value
        unit = {"_kb": r"\s*KiB", "_mb": r"\s*MiB", "files": r"\s+files"}.get(
            next((end for end in ("_kb", "_mb", "files") if name.endswith(end)), ""), r"\s?s\b")
        facts[name] = Fact(lambda value=value: value, (rf"{_number(value)}{unit}", rf"\|\s*{value}\s*\|"))
    facts["system_files.list"] = Fact(lambda: ", ".join(system_files()))
    from hardened_grading.class_grading.command import GradeClass

    sqlite_timeout = GradeClass.class_traits()["sqlite_timeout"].default_value
    facts["sqlite_timeout"] = Fact(lambda: f"{sqlite_timeout:g}", (rf"busy timeout\s+of {sqlite_timeout:g}\b",))
    facts["probe_seconds"] = Fact(lambda: PROBE_SECONDS)
    from hardened_grading.cpu_wait import MAX_STRETCH

    facts["max_stretch"] = Fact(lambda: MAX_STRETCH)
    facts["system_files"] = Fact(lambda: len(system_files()),
                                 (rf"\b(?:{_number(len(system_files()))}|{word(len(system_files()))})\s+files of\s+`?/etc",))
    for path in system_files():
        facts[f"system_file:{path}"] = Fact(lambda p=path: p, (rf"(?<![\w/.]){re.escape(path)}(?![\w/.])",), in_code=True)
    facts["pythons"] = Fact(pythons, (r"3\.10, 3\.11, 3\.12,? (?:and|or) 3\.13",))
    lock = (ROOT / "requirements.lock").read_text()
    for package in ("numpy", "nbgrader", "jupyterlab"):
        versions = re.findall(rf"^{package}==(\S+)", lock, re.M)
        facts[f"locked.{package}"] = Fact(lambda p=package: locked(p), tuple(_number(re.escape(v)) for v in versions))
    for package in ("sphinx", "myst-nb"):
        facts[f"locked.{package}"] = Fact(lambda p=package: docs_locked(p))
    facts["uv"] = Fact(lambda: makefile_variable("UV_VERSION"), (re.escape(makefile_variable("UV_VERSION")),), in_code=True)
    return facts


def docs_locked(package):
    """The version(s) ``docs/requirements.lock`` pins for `package`, with the Pythons each is for."""
    return locked(package, ROOT / "docs" / "requirements.lock")


@cache
def facts():
    """Every fact, by name."""
    return _facts()


def value(name):
    """The text of fact `name`; a KeyError names the facts there are."""
    table = facts()
    if name not in table:
        raise KeyError(f"no fact {name!r}; the facts are: {', '.join(sorted(table))}")
    return table[name].text()


FENCE = re.compile(r"^(```+|~~~+).*?^\1\s*$", re.S | re.M)
ROLE = re.compile(r"\{fact\}`[^`]*`")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)


def typed_by_hand(text):
    """``[(fact, line, excerpt)]``: where `text` (markdown) types a fact's value instead of ``{fact}``."""
    prose_with_code = ROLE.sub("", FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text))
    prose = CODE_SPAN.sub(lambda m: "\n" * m.group(0).count("\n"), prose_with_code)
    found = []
    for name, fact in facts().items():
        body = prose_with_code if fact.in_code else prose
        for pattern in fact.typed:
            for match in re.finditer(pattern, body, re.I):
                line = body.count("\n", 0, match.start()) + 1
                found.append((name, line, match.group(0)))
    return found


def module_docstring_first_line(module):
    tree = ast.parse(Path(module.__file__).read_text())
    return (ast.get_docstring(tree) or "").strip().splitlines()[0]
