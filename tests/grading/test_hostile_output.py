"""A submission cannot write to the grader's terminal or forge a line of its log: real ``nbgrader autograde`` and
``posenc-grade --jobs 2`` runs on one class (module fixture), as root and as an unprivileged user
(``tests/helpers/graders.py``), with an honest student and hostile ones that send terminal escapes (set the title, clear
the screen, CSI, BEL, backspace, carriage return, a right-to-left override) and a fake
``[AutogradeApp | INFO] fake`` line through every channel they have to the grader:

- ``print`` in a cell, and ``os.write`` to the kernel's own file descriptors 1 and 2, directly and from a child
  process (ipykernel echoes fd-level writes to the descriptors it inherited from the grader);
- an exception whose message holds them, of a kind ``posenc-grade``'s summary reports (``MemoryError``);
- a failing test: a function the tests call raises with that message;
- the name of a notebook file sent with the assignment's own.

What the grader printed (stdout, stderr) and ``posenc-grade``'s log hold no raw control character and no line that
begins with the fake record; the escaped text is there (the channels were used); the honest student keeps full
marks. The escaping itself is ``engine/hardened_grading/untrusted/terminal.py`` (``tests/unit/test_terminal.py``). This module imports
nothing of it, so that it can run against an engine without it (where it fails).
"""

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from hardened_grading.sandbox import probe
from posenc_course import report
from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.submissions import reference_answers, write_submission

from ..helpers import graders
from ..helpers.grading import Student, answered, assert_scores, prefixed, submit

pytestmark = pytest.mark.skipif(probe.sandbox_problem() is not None, reason="no bubblewrap sandbox here")

FAKE = "[AutogradeApp | INFO] fake"
#: Sent through every channel: set the window's title, clear the screen, colour by a C1 CSI, backspace, carriage
#: return, a right-to-left override, then a line that looks like nbgrader's own.
HOSTILE = f"\x1b]0;pwned\x07\x1b[2J\x9b31m\x08\r\u202e\n{FAKE}\n"
#: What a terminal would obey: C0 controls but newline, DEL, C1 controls, bidirectional controls.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: A line that begins with a record nbgrader's log did not write: the CLI's format, and posenc-grade's log's.
FORGED = re.compile(r"^\[(AutogradeApp \| )?INFO\] fake", re.MULTILINE)

WRITES = f"""import os, subprocess, sys
_hostile = {HOSTILE!r}
print(_hostile)
os.write(1, _hostile.encode())
os.write(2, _hostile.encode())
subprocess.run([sys.executable, '-c', 'import os, sys; os.write(2, sys.argv[1].encode())', _hostile])"""
RAISES = f"""def sinusoidal_row(position, d_model, base=10000.0):
    raise ValueError({HOSTILE!r})"""
HOSTILE_NAME = f"notes \x1b]0;pwned\x07\u202e\n{FAKE}.ipynb"

HONEST = Student("honest", answered())
CLASS = [
    HONEST,
    Student("hostile-writes", prefixed("ex01_sinusoidal_row", WRITES)),
    Student("hostile-exception", prefixed("ex02_add_positions", f"raise MemoryError({HOSTILE!r})")),
    Student("hostile-test", answered({"sinusoidal_row": RAISES})),
    Student("hostile-name", answered()),
]


@pytest.fixture(scope="module", params=graders.GRADERS)
def graded(request):
    """The class graded by ``nbgrader autograde`` and then by ``posenc-grade --jobs 2 --force``, as root and as an
    unprivileged user (tests/helpers/graders.py): ``{"autograde": (text, scores), "posenc-grade": (text, scores)}``, each
    text what the grader printed (and posenc-grade's log)."""
    yield from graders.graded_as(request.param, request, "hostile-output", grade)


def grade(root, user, python):
    course = new_course(root / "course")
    kit = SimpleNamespace(course=course, release=generate(course),
                          answers=reference_answers(course / "source" / "posenc" / "exercises.ipynb"))
    for student in CLASS:
        submit(student, kit)
    write_submission(answered()(kit), course / "submitted", "hostile-name", filename=HOSTILE_NAME)
    graders.hand_over(root, user)
    env = nbgrader_env(PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    serial = graders.as_grader(user, [python, "-m", "nbgrader", "autograde", "posenc"], course, env, timeout=1800)
    assert serial.returncode == 0, serial.stderr[-3000:]
    runs = {"autograde": (serial.stdout + serial.stderr, report.exercise_scores(course / "gradebook.db"))}
    parallel = graders.as_grader(user, [python, "-m", "posenc_course.instructor.grade", "posenc", "--jobs", "2", "--force"],
                                 course, env, timeout=1800)
    assert parallel.returncode == 0, parallel.stdout[-3000:] + parallel.stderr[-3000:]
    named = re.search(r"; log: (\S+\.log)$", parallel.stderr, re.MULTILINE)
    assert named, f"posenc-grade named no log:\n{parallel.stdout}\n{parallel.stderr}"
    text = parallel.stdout + "\n" + Path(named.group(1)).read_text() + parallel.stderr
    runs["posenc-grade"] = (text, report.exercise_scores(course / "gradebook.db"))
    return runs


RUNS = ["autograde", "posenc-grade"]


@pytest.mark.parametrize("run", RUNS)
def test_nothing_a_student_wrote_reaches_the_grader_raw(graded, run):
    text, _ = graded[run]
    raw = sorted({repr(match.group()) for match in RAW.finditer(text)})
    assert not raw, f"{run} printed raw control characters {', '.join(raw)}:\n" + \
        "\n".join(repr(line) for line in text.splitlines() if RAW.search(line))[:3000]


@pytest.mark.parametrize("run", RUNS)
def test_no_student_forges_a_line_of_the_log(graded, run):
    text, _ = graded[run]
    assert not FORGED.search(text), "\n".join(line for line in text.splitlines() if FORGED.match(line))


@pytest.mark.parametrize("run", RUNS)
def test_the_honest_student_keeps_full_marks(graded, run):
    _, scores = graded[run]
    assert_scores(scores, HONEST.name, {})


@pytest.mark.parametrize("run", RUNS)
def test_the_hostile_text_was_sent_and_shown_escaped(graded, run):
    """The checks above are not vacuous: the kernel's own writes came through, escaped and marked as its own, and so
    did the notebook's name; posenc-grade's summary names the hostile exception, escaped."""
    text, _ = graded[run]
    assert r"\x1b]0;pwned\x07\x1b[2J\x9b31m\x08" in text, text[-3000:]
    assert re.search(r"^\S.*\[AutogradeApp \| INFO\] fake$", text, re.MULTILINE), text[-3000:]  # after a prefix
    assert re.search(r"Skipping unknown notebook: .*notes \\x1b\]0;pwned\\x07", text), text[-3000:]
    if run == "posenc-grade":
        assert re.search(r"^    hostile-exception: ran out of memory: cell ex02_add_positions .*\\x1b\]0;pwned\\x07",
                         text, re.MULTILINE), text[:3000]
