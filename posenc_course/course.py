"""This course in a new course directory, for the demo, the tests and the benchmarks; running nbgrader itself is
:mod:`hardened_grading.nbgrader_app`'s."""

import shutil
from pathlib import Path

from hardened_grading.nbgrader_app import load_config, nbgrader_api, nbgrader_env, quiet_dependency_warnings, run_nbgrader  # noqa: F401

from .layout import ASSIGNMENT, NOTEBOOK, ROOT


def new_course(directory):
    """A new course directory holding this repository's config and source; return its path."""
    course = Path(directory)
    course.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(ROOT / "source", course / "source")
    return course


def generate(course, assignment=ASSIGNMENT):
    """``nbgrader generate_assignment`` of `assignment` in `course`; return the released notebook's path."""
    result = run_nbgrader(course, "generate_assignment", assignment, "--force")
    assert result.returncode == 0, result.stdout + result.stderr
    return course / "release" / assignment / NOTEBOOK
