"""What a student wrote is escaped before a terminal or a log shows it (``engine/hardened_grading/untrusted/terminal.py``): the
escaping function on hostile strings, every log record and warning of a process that imports the engine, the
relay of a grading kernel's own stdout and stderr, and ``hardened-grade``'s progress lines and summary. In
milliseconds: ``tests/grading/test_hostile_output.py`` grades a hostile submission for real."""

import io
import logging
import os
import re
import subprocess
import sys
import textwrap
import traceback
import warnings

import pytest

import hardened_grading  # noqa: F401  (installs the escaping of log records, as any engine import does)
from hardened_grading.class_grading import worker
from hardened_grading.class_grading.worker import Outcome
from hardened_grading.class_grading.progress import Progress, summary
from hardened_grading.untrusted.terminal import CONTROL, INDENT, KERNEL_PREFIX, escape, log_text

FAKE = "[AutogradeApp | INFO] fake"
#: Strings a submission may write: each must come out with nothing a terminal obeys, and no line of its own.
HOSTILE = [
    "\x1b]0;pwned\x07",  # set the terminal's title (OSC ... BEL)
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x1b[31mred\x1b[0m",  # colours
    "\x9b31m",  # CSI as one C1 character
    "\x1bP+q\x1b\\",  # DCS ... ST
    "\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07",  # a hyperlink
    "\x1b]52;c;cHduZWQ=\x07",  # write to the clipboard
    "all good\r[AutogradeApp | INFO] graded",  # carriage return: rewrite the line
    "oops\x08\x08\x08\x08ok  ",  # backspaces
    "\x07\x00\x7f\x85\x9c",  # BEL, NUL, DEL, NEL, ST
    "abc\u202edcba\u202c",  # right-to-left override
    "\u2066isolated\u2069\u2067\u2068\u202a\u202b\u202d\u200e\u200f\u061c",  # isolates, embeddings, marks
    "one\u2028two\u2029three",  # Unicode line and paragraph separators
    "bad bytes \udc9b31m\udc1b",  # a file name's bytes that are not UTF-8 (0x9b is CSI)
    f"first line\n{FAKE}\n",  # a fake log record after a newline
    f"\r\n{FAKE}",
    f"\n\n{FAKE}\r",
]


def raw_controls(text, newlines=False):
    """The characters of `text` that a terminal would obey (newline too unless `newlines`)."""
    return [c for c in text if CONTROL.fullmatch(c) and not (newlines and c == "\n")]


def forged(text):
    """The lines of `text` that begin with a fake log record."""
    return [line for line in text.splitlines() if re.match(r"\[(\w+ \| )?(INFO|WARNING|ERROR)\]|\[AutogradeApp", line)]


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_escape_leaves_nothing_a_terminal_obeys_and_one_line(text):
    shown = escape(text)
    assert not raw_controls(shown), repr(shown)
    assert "\n" not in shown and shown.isprintable(), repr(shown)


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_a_multi_line_log_text_keeps_its_lines_and_none_can_pass_for_a_record(text):
    shown = log_text(text)
    assert not raw_controls(shown, newlines=True), repr(shown)
    assert shown.count("\n") == text.count("\n")
    assert all(line.startswith(INDENT) for line in shown.split("\n")[1:]), repr(shown)
    assert not forged(shown), repr(shown)


def test_escape_shows_each_control_as_its_code_and_leaves_other_text_alone():
    assert escape("\x1b]0;t\x07\r\n\u202e\x9b") == "\\x1b]0;t\\x07\\x0d\\x0a\\u202e\\x9b"
    kept = ("Positional encodings: sin(θ·p), 位置, naïve – α≤β, C:\\path\\x1b (a backslash, not an escape)"
            "\ttab")
    assert escape(kept) == kept.replace("\t", "\\x09")
    assert escape(b"\x1b[2J caf\xc3\xa9 \xff") == "\\x1b[2J café \\xff"
    assert escape(ValueError("\x07")) == "\\x07"
    assert escape("a\nb", indent="  ") == "a\n  b"


def test_the_escaping_fails_on_raw_text():
    """The checks above catch what they are there to catch."""
    assert raw_controls("\x1b[2J") and raw_controls("\u202e") and forged(f"x\n{FAKE}")


@pytest.fixture
def logged():
    """A logger with nbgrader's format, writing into a string: ``(logger, stream)``."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("[%(name)s | %(levelname)s] %(message)s"))
    logger = logging.getLogger("AutogradeApp-test")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    yield logger, stream
    logger.removeHandler(handler)


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_every_log_record_of_a_process_that_imports_the_engine_is_escaped(logged, text):
    """A message, its arguments, a traceback that quotes an exception's message (as nbgrader logs "There was an error
    processing assignment": ``log.error(traceback.format_exc())``), ``log.exception`` and a stack."""
    logger, stream = logged
    logger.warning("Skipping unknown notebook: %s", f"/course/submitted/s/ps1/{text}.ipynb")
    logger.info(text)
    try:
        raise ValueError(text)
    except ValueError:
        logger.error("There was an error processing assignment: %s", "ps1")
        logger.error(traceback.format_exc())
        logger.exception("while grading %s", text)
    logger.warning("here", stack_info=True)
    shown = stream.getvalue()
    assert not raw_controls(shown, newlines=True), repr(shown)
    assert not forged(shown.replace("[AutogradeApp-test | ", "")), shown
    assert len([line for line in shown.splitlines() if line.startswith("[AutogradeApp-test | ")]) == 6, shown


def test_a_warnings_message_is_escaped(text=f"\x1b]0;pwned\x07\n{FAKE}"):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        shown = warnings.formatwarning(UserWarning(text), UserWarning, "x.py", 1, "")
    assert not raw_controls(shown, newlines=True) and not forged(shown), shown


HOSTILE_BYTES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x08\r\u202e\n[AutogradeApp | INFO] fake\n".encode()


def relayed(script, **kwargs):
    """Run `script` in a Python whose stdout and stderr go through :func:`capture_output` (as a grading kernel's
    do); return its CompletedProcess, with bytes."""
    code = ("from hardened_grading.untrusted.terminal import capture_output\ncapture_output(**%r)\n" % kwargs
            + textwrap.dedent(script))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)


CHILD = f"child\x1b[2J\n{FAKE}\n"


def test_a_kernels_own_stdout_and_stderr_reach_the_grader_escaped_and_marked():
    """What the kernel writes to its file descriptors, itself or from a process it starts, as ipykernel echoes
    fd-level output to them."""
    result = relayed(f"""
        import os, subprocess, sys
        os.write(2, {HOSTILE_BYTES!r})
        os.write(1, {HOSTILE_BYTES!r} + b"no newline at the end")
        subprocess.run([sys.executable, "-c", "import os, sys; os.write(2, sys.argv[1].encode())", {CHILD!r}])
        """)
    assert result.returncode == 0, result.stderr
    for stream in (result.stdout, result.stderr):
        text = stream.decode()
        assert not raw_controls(text, newlines=True), text
        assert not forged(text), text
        assert all(line.startswith(KERNEL_PREFIX) for line in text.splitlines()), text
        assert f"{KERNEL_PREFIX}{FAKE}" in text
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x08\\x0d\\u202e" in result.stdout.decode()
    assert result.stdout.decode().endswith(f"{KERNEL_PREFIX}no newline at the end\n")
    assert f"{KERNEL_PREFIX}child\\x1b[2J" in result.stderr.decode()


def test_a_kernels_own_output_beyond_its_cap_is_dropped_and_counted():
    result = relayed("""
        import os
        for _ in range(1000):
            os.write(2, b"x" * 99 + b"\\n")
        """, limit=10_000)
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 100 + 1, lines[-3:]
    assert lines[-1] == f"{KERNEL_PREFIX}[90000 more bytes of the kernel's own output were dropped]"


def test_the_relay_is_needed():
    """Without the relay, the same writes reach the grader raw: the test above can fail."""
    result = subprocess.run([sys.executable, "-c", f"import os; os.write(2, {HOSTILE_BYTES!r})"], capture_output=True)
    assert raw_controls(result.stderr.decode(), newlines=True) and forged(result.stderr.decode())


HOSTILE_OUTCOMES = [
    Outcome("s1", "graded", 1.0,
            problems=(("ran out of memory", "cell ex02 (ex02)", f"\x1b]0;pwned\x07\x1b[2J\n{FAKE}"),)),
    Outcome("s2", "failed", 1.0, reason=f"ValueError: \x9b31m\u202e\r{FAKE}"),
    Outcome("s3", "graded", 1.0, problems=(("timed out", f"cell \x1b[2J\n{FAKE}", "why"),)),
]


def test_the_summary_of_hardened_grade_shows_a_students_text_escaped():
    shown = summary(HOSTILE_OUTCOMES, 3.0, 2, "logs/grade.log", "ps1")
    assert not raw_controls(shown, newlines=True), shown
    assert not forged(shown), shown
    assert "s1: ran out of memory: cell ex02 (ex02): \\x1b]0;pwned\\x07\\x1b[2J\\x0a[AutogradeApp | INFO] fake" in shown
    assert "s2: ValueError: \\x9b31m\\u202e\\x0d[AutogradeApp | INFO] fake" in shown


def test_the_progress_lines_of_hardened_grade_show_a_students_text_escaped():
    stream = io.StringIO()
    progress = Progress(len(HOSTILE_OUTCOMES), stream=stream)
    for outcome in HOSTILE_OUTCOMES:
        progress(outcome)
    shown = stream.getvalue()
    assert len(shown.splitlines()) == len(HOSTILE_OUTCOMES), shown
    assert not raw_controls(shown, newlines=True) and not forged(shown), shown


def test_a_failure_reason_from_nbgraders_log_is_one_escaped_line():
    reason = worker.failure_reason({"log": f"[ERROR] bad \x1b[2J name\n{FAKE}\n", "error": ""})
    shown = summary([Outcome("s", "failed", 1.0, reason=reason)], 1.0, 1, "log", "ps1")
    assert not raw_controls(shown, newlines=True) and not forged(shown), shown



def test_posenc_checks_table_shows_a_check_message_escaped():
    """posenc-check (a learner's own notebook, lower risk) shares the escaping."""
    from posenc_course.student.check import format_result

    checks = {"ex01": [{"test": "ex01_test", "line": 3, "hidden": False, "passed": False,
                        "message": f"got \x1b]0;pwned\x07\x1b[2J\r\n{FAKE}"}]}
    shown = format_result({"ex01": (0.0, 2.0)}, checks, shown=None)
    assert "\\x1b]0;pwned\\x07" in shown
    assert not raw_controls(shown, newlines=True) and not forged(shown), shown


def test_the_class_reports_text_shows_a_students_messages_escaped():
    """The class report (posenc_course/class_report.py) prints failed checks' messages and unreadable files' reasons."""
    from posenc_course.class_report import ClassData, Mistake, report_text

    data = ClassData(scores={"s": {"ex01": (0.0, 2.0)}, "u": {"ex01": (0.0, 2.0)}},
                     unreadable={"u": f"not JSON \x1b[2J\u202e\n{FAKE}"},
                     mistakes={"ex01": [Mistake("ex01_test", 3, False, f"got \x1b]0;pwned\x07\r\n{FAKE}", ["s"])]})
    shown = report_text(data)
    assert "\\x1b]0;pwned\\x07" in shown and "not JSON \\x1b[2J\\u202e" in shown, shown
    assert not raw_controls(shown, newlines=True) and not forged(shown), shown
