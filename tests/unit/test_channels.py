"""Every channel from the kernel is capped, and a test cell's score is the judge's alone: the grader's side, without
a kernel (milliseconds). ``ResilientExecute`` is fed the iopub messages a hostile kernel can send, on an in-memory
notebook; what nbgrader then records (``nbgrader.utils.determine_grade``) is compared with the judge's verdict.

The same attacks, by real submissions under ``nbgrader autograde``, are in tests/grading/test_hostile_channels.py.
"""

import json
import time
import uuid

import nbformat
import pytest
from nbgrader.utils import determine_grade

from hardened_grading.judge import agent
from hardened_grading.judge import checks as judge_checks
from hardened_grading.judge import judge
from hardened_grading.judge import setup
from hardened_grading.cells import engine_meta
from hardened_grading.preprocessors.execute import QUEUED_MESSAGES, ResilientExecute, capped_client
from hardened_grading.judge.link import KernelLink, inert, record_verdict
from hardened_grading.judge.link import TestCellRun as CellRun

from ..helpers.cells import answer_cell, grade_cell

TEST_POINTS = 2.0


def notebook():
    """An answer cell (0), a test cell of TEST_POINTS points (1), a set-up cell (2)."""
    return nbformat.v4.new_notebook(cells=[
        answer_cell("def f(x):\n    return x", "f"),
        grade_cell("check_close(f(1), 1)\ncheck_close(f(2), 3)", "f_test", TEST_POINTS, locked=True),
        nbformat.v4.new_code_cell("x = 1"),
    ])


def executor(trusted=True, **limits):
    """A ResilientExecute on :func:`notebook`, as it is while grading: its test cell judged when `trusted`."""
    execute = ResilientExecute(trusted_tests=trusted, credit_per_check=True, **limits)
    execute.nb = notebook()
    execute._setup = ("the judge's namespace",) if trusted else False
    execute.reset_execution_trackers()
    execute.clear_before_next_output = False
    return execute


def message(msg_type, content, parent="request-1", buffers=()):
    return {"msg_type": msg_type, "header": {"msg_type": msg_type, "msg_id": uuid.uuid4().hex},
            "parent_header": {"msg_id": parent}, "content": content, "metadata": {}, "buffers": list(buffers)}


def display(text, display_id=None, msg_type="display_data", parent="request-1"):
    content = {"data": {"text/plain": text}, "metadata": {}}
    if display_id:
        content["transient"] = {"display_id": display_id}
    if msg_type == "execute_result":
        content["execution_count"] = 1
    return message(msg_type, content, parent)


def judged_verdict(cell, passed=(True, False), printed=""):
    """The judge's verdict on `cell`: its checks, one passed and one failed by default (half its points), after
    `printed` (:func:`record_verdict`)."""
    checks = judge_checks.routed_checks(cell.source)[1]
    for check, ok in zip(checks, passed):
        check.passed = ok
        check.message = "" if ok else "f(2): expected 3, got 2"
    record_verdict(cell, checks, printed, None, per_check=True)


def recorded(cell):
    """What nbgrader's SaveAutoGrades records for `cell`."""
    return determine_grade(cell)[0]


# The grade is the judge's alone --------------------------------------------------------------------------

@pytest.mark.parametrize("msg_type", ["display_data", "execute_result"])
def test_a_display_made_during_a_judged_call_cannot_be_updated_into_a_score(msg_type):
    """The attack found on 766cc86: the student's function, called by the judge in a cell the kernel link runs at
    the test cell's place, shows a display with an id; a later cell updates it. The update reached the test cell's
    outputs, and nbgrader read the new text as the cell's score (full marks for half the checks)."""
    execute = executor()
    test_cell = execute.nb.cells[1]
    call = nbformat.v4.new_code_cell("<the kernel link's call>")  # run at the test cell's index
    for output in (display("first"), display("sneaky", "posenc-fake", msg_type)):
        execute.process_message(output, call, 1)
    judged_verdict(test_cell)
    assert recorded(test_cell) == engine_meta(test_cell)["score"] == TEST_POINTS / 2
    later = execute.nb.cells[0]
    for forged in (message("update_display_data", {"data": {"text/plain": "2"}, "metadata": {},
                                                   "transient": {"display_id": "posenc-fake"}}, "request-2"),
                   display("2", "posenc-fake", "execute_result", "request-2")):
        execute.process_message(forged, later, 0)
    assert recorded(test_cell) == engine_meta(test_cell)["score"] == TEST_POINTS / 2
    assert execute._display_id_map.get("posenc-fake", {}).get(1) is None


def test_without_trusted_tests_a_display_update_works_as_in_stock_nbgrader():
    execute = executor(trusted=False)
    answer = execute.nb.cells[0]
    execute.process_message(display("x", "shown"), answer, 0)
    execute.process_message(message("update_display_data", {"data": {"text/plain": "y"}, "metadata": {},
                                                            "transient": {"display_id": "shown"}}, "r2"),
                            execute.nb.cells[2], 2)
    assert answer.outputs[0]["data"]["text/plain"] == "y"


def test_what_the_kernel_printed_in_a_judged_cell_cannot_be_read_as_a_score():
    """An error and a result forged through the kernel's session, and a display: all kept as plain text on standard
    output, so the score is the judge's."""
    printed = [nbformat.v4.new_output("stream", name="stdout", text="a note of the student's\n"),
               nbformat.v4.new_output("error", ename="AssertionError", evalue="", traceback=[]),
               nbformat.v4.new_output("execute_result", data={"text/plain": "0"}, execution_count=1),
               nbformat.from_dict({"output_type": "display_data", "data": {"text/plain": "9"}, "metadata": {},
                                   "transient": {"display_id": "x"}})]
    cell = notebook().cells[1]
    judged_verdict(cell, passed=(True, True), printed=inert(printed))
    # an error has no text; the others are plain text: a display without id nobody can update, nor read as a score
    assert [(o.output_type, o.get("name")) for o in cell.outputs] == [("stream", "stdout")] + [("display_data", None)] * 2
    assert [set(o.data) for o in cell.outputs[1:]] == [{"text/plain"}] * 2 and "transient" not in cell.outputs[2]
    assert recorded(cell) == engine_meta(cell)["score"] == TEST_POINTS


@pytest.mark.parametrize("passed", [(True, True), (True, False), (False, False)])
def test_the_recorded_score_is_the_judges_verdict(passed):
    cell = notebook().cells[1]
    judged_verdict(cell, passed, printed=inert([nbformat.v4.new_output("stream", name="stdout", text="noise\n")]))
    assert recorded(cell) == engine_meta(cell)["score"] == TEST_POINTS * sum(passed) / 2


@pytest.mark.parametrize("passed", [(True, True), (True, False)])
def test_anything_on_standard_error_fails_the_cell_as_in_nbgrader(passed):
    """What the submission wrote to stderr while the tests ran (a debug print, a raw message) stays on stderr, and
    the cell scores 0, as nbgrader's own run and Validate fail it; a line says why."""
    cell = notebook().cells[1]
    judged_verdict(cell, passed, printed=inert([nbformat.v4.new_output("stream", name="stderr", text="debug\n")]))
    assert "standard error" in cell.outputs[0].text and cell.outputs[1].name == "stderr"
    assert recorded(cell) == engine_meta(cell)["score"] == 0


# Outputs of every kind, updates included ---------------------------------------------------------------

def size_of(cells):
    return len(json.dumps([c.outputs for c in cells], default=str))


def test_an_update_counts_its_size_times_the_outputs_it_changes():
    """The channel that left 22.9 MiB of outputs against the 1 MiB cap: many small displays under one id, then
    one update of them all, which nbclient applies without counting."""
    execute = executor(max_output_kb=64)
    answer = execute.nb.cells[0]
    for _ in range(20):  # each display under the id also updates those before it: 20 * 21 / 2 small ones
        execute.process_message(display("x", "flood"), answer, 0)
    execute.process_message(message("update_display_data", {"data": {"text/plain": "z"}, "metadata": {},
                                                            "transient": {"display_id": "flood"}}), answer, 0)
    assert {o["data"]["text/plain"] for o in answer.outputs if o.output_type == "display_data"} == {"z"}, \
        "a small update within the cap works"
    execute.process_message(message("update_display_data", {"data": {"text/plain": "y" * 10_000}, "metadata": {},
                                                            "transient": {"display_id": "flood"}}), answer, 0)
    assert size_of(execute.nb.cells) < 64 * 1024, "20 x 10 kB: over the cap, so the update is dropped"


def test_clearing_the_outputs_does_not_give_the_allowance_back():
    execute = executor(max_output_kb=16)
    answer = execute.nb.cells[0]
    for _ in range(20):
        execute.process_message(display("w" * 2000), answer, 0)
        execute.process_message(message("clear_output", {"wait": False}), answer, 0)
    execute.process_message(display("after"), answer, 0)
    assert answer.outputs == [] and execute._output_used[0] > 20 * 2000


def merged_as_nbclient_does(cell):
    """The cell's outputs as nbclient leaves them when the cell ends (``coalesce_streams``): one stream output per
    name, where its first was."""
    outputs, streams = [], {}
    for output in cell.outputs:
        if output.output_type == "stream" and output.name in streams:
            streams[output.name].text += output.text
            continue
        if output.output_type == "stream":
            streams[output.name] = output
        outputs.append(output)
    cell.outputs = outputs
    return cell


def shown_text(cell):
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def test_the_notice_of_a_flood_of_short_lines_outlives_nbgraders_limit_output():
    """A flood of short lines passes nbgrader's ``LimitOutput.max_lines`` (1000, next in the pipeline) before it
    passes ``max_output_kb``. LimitOutput keeps a cell's first 1000 lines of stream output and drops every stream
    after them, so a notice sent as a stream was dropped and the student never saw why their output stopped (a
    full run's test_sandbox output bomb, by chance of how the kernel batched its prints)."""
    from nbgrader.preprocessors import LimitOutput

    execute = executor(max_output_kb=16)
    answer = execute.nb.cells[0]
    for _ in range(400):
        execute.process_message(message("stream", {"name": "stdout", "text": "flood\n" * 5}), answer, 0)
    cell, _ = LimitOutput().preprocess_cell(merged_as_nbclient_does(answer), {}, 0)
    shown = shown_text(cell)
    assert "... Output truncated ..." in shown, "the flood did not pass LimitOutput's lines: no proof"
    assert "[output beyond 16 KiB was dropped while grading]" in shown, shown[-300:]


def test_a_flood_under_max_output_kb_has_no_notice_however_many_lines_it_has():
    """Lines past LimitOutput's 1000 but under ``max_output_kb`` are nbgrader's to cut, with its own words: the
    engine says nothing of a limit it did not apply (an instructor who raised max_output_kb sees no notice)."""
    execute = executor(max_output_kb=1024)
    answer = execute.nb.cells[0]
    for _ in range(400):
        execute.process_message(message("stream", {"name": "stdout", "text": "flood\n" * 5}), answer, 0)
    assert "output beyond" not in shown_text(answer) and shown_text(answer).count("flood") == 2000


def limited(cell):
    """`cell` as nbgrader's LimitOutput leaves it (after the engine, before SaveAutoGrades)."""
    from nbgrader.preprocessors import LimitOutput

    return LimitOutput().preprocess_cell(cell, {}, 1)[0]


FLOOD_LINES = [nbformat.v4.new_output("stream", name="stdout", text="debug print in my loop\n" * 1500)]


def test_a_judged_cell_whose_calls_printed_many_lines_keeps_its_list_of_failed_checks():
    """A student's debug print in a function the tests call many times: 1500 lines, more than LimitOutput keeps.
    The list of failed checks came after them and was dropped, so the cell lost points and did not say why."""
    cell = notebook().cells[1]
    judged_verdict(cell, passed=(True, False), printed=inert(FLOOD_LINES))
    shown = shown_text(limited(cell))
    assert "... Output truncated ..." in shown, "the prints did not pass LimitOutput's lines: no proof"
    assert "1 of 2 checks passed" in shown and "FAILED (line 2): f(2): expected 3, got 2" in shown, shown[-300:]
    assert recorded(cell) == engine_meta(cell)["score"] == TEST_POINTS / 2


def test_a_cell_that_wrote_to_standard_error_after_many_lines_still_scores_0_and_says_why():
    """stdout past LimitOutput's lines, then stderr: LimitOutput dropped the stderr stream, and nbgrader recorded full
    points where the engine's summary said 0 (nbgrader reads 0 from a stderr stream or an error only)."""
    cell = notebook().cells[1]
    printed = FLOOD_LINES + [nbformat.v4.new_output("stream", name="stderr", text="a warning\n")]
    judged_verdict(cell, passed=(True, True), printed=inert(printed))
    assert "standard error" in shown_text(limited(cell))
    assert recorded(cell) == engine_meta(cell)["score"] == 0


def test_the_notice_of_a_judged_calls_flood_outlives_nbgraders_limit_output():
    """What the kernel printed during the judge's calls, past ``max_output_kb`` in short lines: its notice stays."""
    execute = executor(max_output_kb=16)
    link, run = KernelLink(execute, None), CellRun(1, time.monotonic() + 10, 10)
    for _ in range(400):
        link._printed(run, nbformat.v4.new_output("stream", name="stdout", text="x\n" * 20))
    cell = notebook().cells[1]
    judged_verdict(cell, passed=(True, True), printed=inert(run.printed))
    shown = shown_text(limited(merged_as_nbclient_does(cell)))
    assert "... Output truncated ..." in shown, "the flood did not pass LimitOutput's lines: no proof"
    assert "[output beyond 16 KiB was dropped while grading]" in shown, shown[-300:]


@pytest.mark.parametrize("last, score", [
    (message("error", {"ename": "AssertionError", "evalue": "wrong " * 10_000, "traceback": ["t" * 10_000] * 50}), 0),
    (display("0.5", msg_type="execute_result"), 0.5),
], ids=["failed", "partial credit"])
def test_past_the_cap_a_cells_error_or_result_is_still_kept_cut_short(last, score):
    """Without trusted_tests the kernel runs the test cell, as nbgrader does: an answer that prints a flood, then
    fails, must not score full marks because its error came after the cap."""
    execute = executor(trusted=False, max_output_kb=16)
    test_cell = execute.nb.cells[1]
    for _ in range(40):
        execute.process_message(message("stream", {"name": "stdout", "text": "f" * 1000}), test_cell, 1)
    execute.process_message(last, test_cell, 1)
    execute.process_message(last, test_cell, 1)  # forged again: kept once
    assert recorded(test_cell) == score
    assert [o.output_type for o in test_cell.outputs].count(last["msg_type"]) == 1
    assert size_of([test_cell]) < 16 * 1024 + 20_000


def test_the_judges_calls_share_their_test_cells_allowance():
    """What the kernel prints while the judge calls it (over the comm) counts, with every cell the link runs there."""
    execute = executor(max_output_kb=16)
    link, run = KernelLink(execute, None), CellRun(1, time.monotonic() + 10, 10)
    for _ in range(40):
        link._printed(run, nbformat.v4.new_output("stream", name="stdout", text="p" * 1000))
    assert 14_000 < sum(len(shown_text(nbformat.v4.new_code_cell(outputs=[o]))) for o in run.printed) < 17_000
    assert shown_text(nbformat.v4.new_code_cell(outputs=run.printed[-1:])).strip() == \
        "[output beyond 16 KiB was dropped while grading]"
    call = nbformat.v4.new_code_cell("<the kernel link's call>")
    execute.process_message(message("stream", {"name": "stdout", "text": "more"}), call, 1)
    assert call.outputs == []


# Comm messages -----------------------------------------------------------------------------------------

def test_comm_messages_beyond_the_cap_are_ignored():
    """nbclient keeps every comm message's widget state, in memory and in the notebook: the channel that grew the
    grader by 650-830 MiB."""
    execute = executor(max_comm_kb=64)
    answer = execute.nb.cells[0]
    execute.process_message(message("comm_open", {"comm_id": "c", "target_name": "x", "data": {}}), answer, 0)
    for number in range(100):
        execute.process_message(message("comm_msg", {"comm_id": "c", "data": {"state": {f"v{number}": "s" * 10_000}}}),
                                answer, 0)
    kept = len(json.dumps(execute.widget_state))
    assert 50_000 < kept < 64 * 1024, kept


# Replies to the judge ----------------------------------------------------------------------------------

def test_a_reply_over_the_cap_fails_its_call_with_a_clear_message():
    """The kernel's agent refuses to send a value over the cap; the check that made the call fails, and says so."""
    namespace = {"f": lambda x: __import__("numpy").zeros(200_000)}

    def ask(request):
        return json.loads(agent.answer_text(json.dumps({**request, "max_reply": 64 * 1024}), namespace))

    the_judge = judge.Judge(ask)
    stdout, error = the_judge.run("check_true(len(f(1)) == 3, 'f(1)')\ncheck_true(True, 'other')",
                                  {"check_true": lambda ok, what: None}, "<test cell t>", functions={"f"})
    [first, second] = the_judge.checks
    assert not first.passed and "ReplyTooLarge" in first.message and "max_reply_kb" in first.message
    assert second.passed


def test_a_forged_reply_over_the_cap_is_refused_by_the_grader():
    """A reply the kernel sends by hand, past the agent's own check."""
    link = KernelLink(executor(max_reply_kb=64), None)
    assert link._checked_reply(json.dumps({"id": 1, "v": "x" * 1000})) == {"id": 1, "v": "x" * 1000}
    with pytest.raises(setup.ReplyTooLarge, match="over the 64 KiB a reply may be"):
        link._checked_reply(json.dumps({"id": 1, "v": "x" * 70_000}))


def test_a_batch_too_large_is_asked_call_by_call():
    asked = []

    def ask(request):
        asked.append(request["op"])
        if request["op"] == "batch":
            return {"status": "raised", "types": ["ReplyTooLarge", "Exception"], "message": "too large"}
        return {"status": "ok", "value": agent.encode(2 * agent.decode(request["args"][0]))}

    predicted = setup.predicted_calls("double(1)\ndouble(2)\n", {"double": lambda x: 2 * x}, {"double"})
    stdout, error = judge.Judge(ask).run("out = [double(1), double(2)]\nresults.extend(out)",
                                         {"results": (results := [])}, "<t>", functions={"double"},
                                         predicted=predicted)
    # the state the batch would have brought is asked on its own
    assert error is None and asked == ["batch", "state", "call", "call"] and results == [2, 4]


def test_the_grader_buffers_a_bounded_number_of_messages_each_of_bounded_size():
    import zmq
    from jupyter_client.asynchronous.client import AsyncKernelClient

    client = capped_client(AsyncKernelClient, 123_456)()
    assert client.context.getsockopt(zmq.MAXMSGSIZE) == 123_456
    assert client.context.getsockopt(zmq.RCVHWM) == QUEUED_MESSAGES
    assert issubclass(type(client), AsyncKernelClient)
    client.context.destroy()


# The wall-clock budget ---------------------------------------------------------------------------------

def test_each_cells_time_limit_is_at_most_what_is_left_of_the_submissions_budget():
    execute = executor(submission_seconds=10)
    execute.timeout = 20
    assert execute._time_limit(execute.nb.cells[0]) == 10
    execute._deadline = time.monotonic() + 3.2
    assert execute._time_limit(execute.nb.cells[0]) == 4


def test_once_the_budget_is_spent_a_judged_test_cell_fails_every_check_and_says_why():
    execute = executor(submission_seconds=10)
    execute._deadline = time.monotonic() - 1
    test_cell = execute.nb.cells[1]
    execute._out_of_time(test_cell)
    assert recorded(test_cell) == engine_meta(test_cell)["score"] == 0
    checks = engine_meta(test_cell)["checks"]
    assert checks and all(not c["passed"] and "submission_seconds" in c["message"] for c in checks)
    answer = execute.nb.cells[0]
    execute._out_of_time(answer)
    assert answer.outputs[0].ename == "GradingTimeBudget"


def test_the_end_of_run_report_names_the_cells_the_budget_left_out():
    from hardened_grading.incidents import incidents

    execute = executor(submission_seconds=10)
    execute._deadline = time.monotonic() - 1
    for cell in execute.nb.cells[:2]:
        execute._out_of_time(cell)
    found = incidents(execute.nb)
    assert [where for _, where, _ in found] == ["cell f", "cell f_test"]
    assert all("submission_seconds" in what and "submission_seconds" in why for what, _, why in found)


ENDLESS = "not run: the submission's code took over 10 s here (an endless loop?)"


def test_the_judges_list_under_a_test_cell_says_repeated_failures_once():
    """An endless loop in the function a test cell's hidden checks call: each check after it says "not run"."""
    cell = grade_cell("check_close(f(1), 1)\n" + "### BEGIN HIDDEN TESTS\n" + "check_close(f(2), 2)\n" * 16
                      + "### END HIDDEN TESTS", "f_test", TEST_POINTS, locked=True)
    checks = judge_checks.routed_checks(cell.source)[1]
    for check in checks:
        check.passed = not check.hidden
        check.message = "" if check.passed else ENDLESS
    record_verdict(cell, checks, "", None, per_check=True)
    said = [line for line in shown_text(cell).splitlines() if "FAILED" in line]
    assert said == [f"  FAILED (16 hidden checks): {ENDLESS}"], said
