"""The repository as a fresh clone has it, for the tests that install or rebuild the course from nothing
(tests/system/test_pythons.py, tests/grading/test_new_exercise.py), and what of the outer ``make`` must not reach
the copy's own."""

import shutil
import subprocess

from posenc_course import ROOT

# Variables of the `make test` that runs this suite, which must not reach the clean copy's make.
OUTER_MAKE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTHON", "VENV", "VIRTUAL_ENV")


def clean_copy(destination):
    """The repository's files as a fresh clone has them (tracked and new, not ignored ones)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination
