"""posenc-check's lines of failed checks: repeated failures said once, as the feedback's summary says them
(:func:`hardened_grading.judge.messages.repeated_together`). In memory, no grading."""

from posenc_course.student.check import failure_lines

#: what the judge records for each check of a test cell whose kernel an endless loop stopped
ENDLESS = "not run: the submission's code took over 10 s here (an endless loop?)"
#: what it records for each check after the first, of a function left as the release's stub
EARLIER = "not run, because an earlier step failed (NotImplementedError: not answered yet)"


def test_posenc_check_says_repeated_failures_once_as_the_summary_does():
    checks = [{"test": "ex02_add_positions_test", "line": line, "hidden": hidden, "passed": passed, "message": message}
              for line, hidden, passed, message in [(1, False, False, "NotImplementedError: not answered yet"),
                                                    *[(n, False, False, EARLIER) for n in (2, 3, 4)],
                                                    *[(6, True, False, ENDLESS)] * 16]]
    assert failure_lines(checks) == ["add_positions (line 1): NotImplementedError: not answered yet",
                                     f"add_positions (lines 2, 3, 4): {EARLIER}",
                                     f"add_positions (16 hidden checks): {ENDLESS}"]
