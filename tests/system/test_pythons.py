"""The README's set-up works on every supported Python found on this machine.

For each interpreter: a clean copy of the repository, ``make install PYTHON=that-python`` (uv installs the
packages; for the oldest, a uv that cannot reach its index, so that pip installs them instead), then
``posenc-check`` (nbgrader's real autograde, sandbox included) on the reference answers of the graded
assignments (full marks, exit 0: every one on the oldest and the newest Python, the first one on those between)
and on the first one's blank release (0 points, exit 1). On one of them, ``make install`` is then run over
the venv: what the lock no longer names goes, and nothing else. The supported versions are the
``Programming Language :: Python :: 3.X`` classifiers of ``pyproject.toml``. The interpreter that
runs this suite is left out: ``make test`` itself is its proof. A supported version with no
interpreter on this machine is reported as skipped, with where it was looked for.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from posenc_course import ROOT
from posenc_course.layout import GRADED

from ..helpers import children
from ..helpers.repository import OUTER_MAKE, clean_copy

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
SUPPORTED = [m.group(1) for c in PROJECT["classifiers"]
             if (m := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c))]
PYENV_ROOT = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))


def describe(python):
    """``(version "3.X", sys.version)`` of the interpreter at `python`, or None if it does not run."""
    try:
        out = subprocess.run([str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.version)"],
                             capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    if out.returncode != 0:
        return None
    version, full = out.stdout.splitlines()[:2]
    return version, full


def candidates(version):
    """Where a Python `version` may be: PATH, pyenv's versions, the system's own folders."""
    yield from filter(None, [shutil.which(f"python{version}")])
    yield from sorted(PYENV_ROOT.glob(f"versions/{version}.*/bin/python{version}"))
    yield from (Path(folder) / f"python{version}" for folder in ("/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"))


def interpreters():
    """``{"3.X.Y at PATH": path}`` of every distinct supported interpreter here, and the versions
    found, leaving out the one that runs the tests."""
    found, versions, seen = {}, set(), {sys.version}
    for version in SUPPORTED:
        for path in candidates(version):
            info = describe(path)
            if info is None or info[0] != version or info[1] in seen:
                continue
            seen.add(info[1])
            versions.add(version)
            found[f"{info[1].split()[0]} at {path}"] = Path(path)
    return found, versions


FOUND, VERSIONS = interpreters()
MISSING = [v for v in SUPPORTED if v not in VERSIONS and v != "%d.%d" % sys.version_info[:2]]


def make(copy, *args, timeout=1800, env=None):
    env = {**{k: v for k, v in os.environ.items() if k not in OUTER_MAKE}, **(env or {})}
    # The outer venv's bin/ leaves PATH too: the copy's make puts its own venv first.
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if Path(p).resolve() != Path(sys.executable).parent.resolve())
    return subprocess.run(["make", "--no-print-directory", *args], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=timeout)


def posenc_check(copy, notebook):
    result = children.run([str(copy / ".venv" / "bin" / "posenc-check"), str(notebook), "--json"],
                          cwd=copy, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": f"{copy / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"})
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else None, result.stderr


def test_the_supported_versions_are_declared():
    assert SUPPORTED == ["3.10", "3.11", "3.12", "3.13"], SUPPORTED
    assert PROJECT["requires-python"] == f">={SUPPORTED[0]}", "no upper cap: newer Pythons stay open"


def test_every_supported_version_is_on_this_machine():
    """The machine's image should carry every supported version; say which is missing."""
    if MISSING:
        pytest.skip("no interpreter here for Python " + ", ".join(MISSING) +
                    f" (looked on PATH, in {PYENV_ROOT}/versions, /usr/bin, /usr/local/bin)")


#: The interpreter whose install is made with a uv that cannot reach its package index (where a site's index is
#: configured for pip only): pip must install instead, and say so. The others are installed by uv, as by default.
PIP_FALLBACK = sorted(FOUND)[0] if FOUND else None
def _version_of(found):
    return tuple(map(int, found.split()[0].split(".")))


#: The interpreters that grade every graded assignment: the oldest and the newest here. Those between grade the
#: first one: the assignments differ in their notebooks' code, which the oldest and the newest Python try.
EVERY_ASSIGNMENT_ON = {min(FOUND, key=_version_of), max(FOUND, key=_version_of)} if FOUND else set()
#: The interpreter whose venv is then installed over (installing_over_a_venv_leaves_it_equal_to_the_lock): the
#: oldest of those that grade only the first assignment, when there is one.
OVER_A_VENV_ON = min((found for found in FOUND if found not in EVERY_ASSIGNMENT_ON | {PIP_FALLBACK}),
                     key=_version_of, default=min(FOUND, key=_version_of) if FOUND else None)
#: A package index that refuses every connection (the discard port of the loopback).
DEAD_INDEX = "http://127.0.0.1:9/simple"


@pytest.mark.parametrize("python", sorted(FOUND), ids=str)
def test_install_and_grade(python, tmp_path):
    interpreter = FOUND[python]
    copy = clean_copy(tmp_path / "posenc")
    unreachable = {"UV_INDEX_URL": DEAD_INDEX} if python == PIP_FALLBACK else {}
    installed = make(copy, "install", f"PYTHON={interpreter}", env=unreachable)
    assert installed.returncode == 0, f"make install PYTHON={interpreter} failed:\n{installed.stdout}\n{installed.stderr}"
    fell_back = "note: uv could not install --no-deps -r requirements.lock; pip installs it instead"
    said = installed.stdout.splitlines()
    assert "uv pip install --no-deps -r requirements.lock" in said, "make install did not try uv first:\n" + installed.stdout
    assert (fell_back in said) == bool(unreachable), installed.stdout + installed.stderr
    venv_python = describe(copy / ".venv" / "bin" / "python")
    assert venv_python == describe(interpreter), f"the venv runs {venv_python}, not {interpreter}"

    # The venv is the lock, and no more: what lock-overrides.txt leaves out is not there.
    left_out = subprocess.run([str(copy / ".venv" / "bin" / "python"), "-c", LEFT_OUT_CODE],
                              capture_output=True, text=True, timeout=120)
    assert left_out.returncode == 0 and left_out.stdout.split() == [], left_out.stdout + left_out.stderr

    # A later `make` without PYTHON keeps the venv and its Python; nothing is installed again.
    again = make(copy, "install")
    assert again.returncode == 0 and "pip install" not in again.stdout, again.stdout + again.stderr
    assert describe(copy / ".venv" / "bin" / "python") == venv_python

    # The graded assignments' reference answers, graded by that Python: full marks. Every assignment on the
    # oldest and the newest Python (where a feature is missing, or was removed); the first one on those between.
    maxima = {}
    for assignment in GRADED if python in EVERY_ASSIGNMENT_ON else GRADED[:1]:
        reference = tmp_path / f"{assignment}-reference.ipynb"
        subprocess.run([str(copy / ".venv" / "bin" / "python"), "-c",
                        "import sys, nbformat; from posenc_course.layout import source_notebook, release_notebook; "
                        "from posenc_course.submissions import make_submission, reference_answers; "
                        "a = sys.argv[2]; nbformat.write(make_submission(reference_answers(source_notebook(a)), "
                        "release_notebook=release_notebook(a)), sys.argv[1])", str(reference), assignment],
                       cwd=copy, check=True, timeout=300)
        code, scores, stderr = posenc_check(copy, reference)
        assert code == 0 and scores and scores["score"] == scores["max_score"] > 0, (assignment, code, scores, stderr)
        maxima[assignment] = scores["max_score"]

    code, blank, stderr = posenc_check(copy, copy / "release" / "posenc" / "exercises.ipynb")
    assert code == 1 and blank and blank["score"] == 0 and blank["max_score"] == maxima["posenc"], (code, blank, stderr)

    if python == OVER_A_VENV_ON:  # on a venv already made, as a second install from nothing would only repeat the first
        installing_over_a_venv_leaves_it_equal_to_the_lock(copy, tmp_path)


def dropped_distribution(venv, name):
    """Put a distribution `name` into `venv` as an installer leaves one (a module, and its dist-info whose RECORD
    lists it), standing for a package an older lock had; return its module's path."""
    [site] = (venv / "lib").glob("python3.*/site-packages")
    module = site / f"{name}.py"
    module.write_text("")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in (module.name, *(f"{info.name}/{part}" for part in
                                                                               ("METADATA", "INSTALLER", "RECORD")))))
    return module


def installing_over_a_venv_leaves_it_equal_to_the_lock(copy, tmp_path):
    """In `copy`, installed: a package the lock no longer names goes at the next ``make install``, with uv and with
    pip; pip, uv and the course's editable installs stay, and a ``make install`` with nothing changed installs
    nothing."""
    venv = copy / ".venv"
    for installer in ("uv", "pip"):
        module = dropped_distribution(venv, f"dropped_by_{installer}")
        os.utime(venv / ".installed", (0, 0))  # as if requirements.lock had changed since
        again = make(copy, "install", f"INSTALLER={installer}")
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"uninstalling what requirements.lock does not name: dropped-by-{installer}" in again.stdout.splitlines()
        assert not module.exists(), f"make install INSTALLER={installer} left {module.name}:\n{again.stdout}"
    kept = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import posenc_course, hardened_grading, pip; print(posenc_course.__file__, "
                           "hardened_grading.__file__)"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.split() == [str(copy / "posenc_course" / "__init__.py"),
                                   str(copy / "engine" / "hardened_grading" / "__init__.py")], "not editable installs"
    assert (venv / "bin" / "uv").exists()
    unchanged = make(copy, "install")
    assert unchanged.returncode == 0 and "install" not in unchanged.stdout, unchanged.stdout + unchanged.stderr


#: Prints what of lock-overrides.txt's packages is installed, or imported by reading a notebook: it must print nothing.
LEFT_OUT_CODE = ("import importlib.util, sys, nbformat, nbgrader.apps\n"
                 "print(*[m for m in ('rfc3987_syntax', 'lark') if m in sys.modules or importlib.util.find_spec(m)])")


def test_the_locks_leave_out_what_lock_overrides_names_and_reading_a_notebook_builds_no_grammar():
    overrides = (ROOT / "lock-overrides.txt").read_text()
    assert 'rfc3987-syntax ; sys_platform == "never"' in overrides
    for lock in ("requirements.lock", "docs/requirements.lock"):
        pins = [line for line in (ROOT / lock).read_text().splitlines() if line.startswith(("rfc3987-syntax", "lark"))]
        assert pins and all(line.endswith("; sys_platform == 'never'") for line in pins), (lock, pins)
    shown = subprocess.run([sys.executable, "-c", LEFT_OUT_CODE], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and shown.stdout.split() == [], shown.stdout + shown.stderr


OLD = next((str(path) for version in ("3.9", "3.8", "3.7") for path in candidates(version)
            if (describe(path) or ("",))[0] == version), None)


@pytest.mark.parametrize("python", [OLD, "/nonexistent/python3"], ids=["too-old", "missing"])
def test_an_unsupported_python_is_refused_with_what_to_do(python, tmp_path):
    if python is None:
        pytest.skip("no Python older than 3.10 on this machine to try")
    copy = clean_copy(tmp_path / "posenc")
    refused = make(copy, "install", f"PYTHON={python}", timeout=120)
    assert refused.returncode != 0
    assert f"is not a Python {SUPPORTED[0]} or newer" in refused.stdout and "make install PYTHON=python3.12" in refused.stdout, refused.stdout + refused.stderr
    assert not (copy / ".venv" / "bin" / "python").exists()


def test_the_lock_is_what_make_lock_makes_from_pyproject(tmp_path):
    """requirements.lock is generated (uv pip compile --universal): it is in step with pyproject.toml."""
    copy = clean_copy(tmp_path / "posenc")
    locked = make(copy, "lock", timeout=600)
    assert locked.returncode == 0, locked.stdout + locked.stderr
    assert (copy / "requirements.lock").read_text() == (ROOT / "requirements.lock").read_text(), \
        "requirements.lock is stale: run `make lock` and commit it"


@pytest.mark.parametrize("version", SUPPORTED)
@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_the_lock_pins_exactly_one_version_of_each_package_for_every_supported_python(version, platform):
    from packaging.requirements import Requirement

    environment = {"python_version": version, "python_full_version": f"{version}.0", "sys_platform": platform,
                   "platform_system": {"linux": "Linux", "darwin": "Darwin"}[platform], "os_name": "posix",
                   "platform_machine": "x86_64", "implementation_name": "cpython"}
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(environment):
                pins.setdefault(requirement.name.lower(), []).append(str(requirement.specifier))
    assert all(len(specs) == 1 and specs[0].startswith("==") for specs in pins.values()), pins
    assert {"numpy", "matplotlib", "nbgrader", "jupyterlab", "pytest", "hypothesis"} <= set(pins)
