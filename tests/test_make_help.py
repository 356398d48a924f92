"""``make help``: every target a person runs has a one-line summary, and ``make help`` lists it under its group.

A target's summary is the ``## ...`` after its rule line; ``##@ GROUP`` lines group them (the Makefile's head says
so). A target added to ``.PHONY`` without a summary fails here, naming it.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()
#: .PHONY's names that are not targets to run: FORCE is a prerequisite that makes a rule run every time.
NOT_COMMANDS = {"FORCE"}


def phony_targets():
    """The names the Makefile declares ``.PHONY``, in order."""
    return [name for line in re.findall(r"^\.PHONY:(.*)$", MAKEFILE, re.M) for name in line.split()]


def summaries():
    """``{target: summary}`` of every rule line that carries a ``## summary``."""
    return dict(re.findall(r"^([a-zA-Z_-]+):[^\n#]*## (.+)$", MAKEFILE, re.M))


def test_every_phony_target_has_a_summary():
    missing = [name for name in phony_targets() if name not in NOT_COMMANDS and name not in summaries()]
    assert not missing, (f"Makefile: {missing} have no summary: end each one's rule line with `## what it does`, "
                         "under a `##@ GROUP` line")


def test_every_summarised_target_is_phony():
    stray = sorted(set(summaries()) - set(phony_targets()))
    assert not stray, f"Makefile: {stray} have a summary but are not .PHONY: add them to .PHONY"


def test_every_group_is_in_help_groups():
    named = re.search(r"^HELP_GROUPS := (.*)$", MAKEFILE, re.M).group(1).split(",")
    used = re.findall(r"^##@ (.+)$", MAKEFILE, re.M)
    assert set(used) <= set(named), f"Makefile: the groups {sorted(set(used) - set(named))} are not in HELP_GROUPS"


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")
def test_make_help_lists_every_target_under_its_group():
    listed = subprocess.run(["make", "--no-print-directory", "-s", "help"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    groups = re.search(r"^HELP_GROUPS := (.*)$", MAKEFILE, re.M).group(1).split(",")
    headings = [line[:-1] for line in listed.splitlines() if line and not line.startswith(" ")]
    assert headings == groups, f"make help's groups are {headings}, not HELP_GROUPS' {groups}"
    rows = {line.split()[0]: line.split(None, 1)[1] for line in listed.splitlines() if line.startswith("  ")}
    assert rows == summaries(), f"make help lists\n{listed}"
