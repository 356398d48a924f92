"""The judge's link to the grading kernel: one judged test cell, and the requests it makes.

A test cell runs in the grader (:mod:`hardened_grading.judge`); each call of a student's function
becomes a request that the kernel's agent (:mod:`hardened_grading.judge.agent`) carries out. This module
carries the requests:

- over a Jupyter comm, opened once per kernel: the fast path, about a third of a cell's round trip;
- as a cell of its own when the request passes a function of the tests: while it runs, the agent asks
  for that function's results over the kernel's stdin, and :class:`KernelLink` answers them here.

Everything one test cell's requests share (its index, deadline, what the kernel printed, who answers
callbacks) is one :class:`TestCellRun`. A kernel that dies, runs out of memory or overruns the
deadline ends the cell with :class:`hardened_grading.judge.setup.Abort`; recovering from it is the caller's job
(:class:`hardened_grading.preprocessors.execute.ResilientExecute`).
"""

import asyncio
import json
import queue
import time
import uuid
from dataclasses import dataclass, field

import nbformat
from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async
from nbgrader.utils import get_partial_grade

from .. import cpu_wait
from ..cells import META, grade_id
from . import agent
from .checks import score_of
from .judge import Judge
from .messages import counted, repeated_together
from .setup import SERVE_CODE, Abort, ReplyTooLarge, StudentError, cell_label, in_folder, kernel_code


@dataclass
class TestCellRun:
    """One judged test cell: what its requests to the kernel share."""

    index: int  #: the cell's index in the notebook
    seconds: float  #: the cell's time limit: its requests must all be answered within it
    #: the seconds its threads have waited for a CPU since it started (:mod:`hardened_grading.cpu_wait`): not charged
    waited: object = lambda: 0.0
    answer_callback: object = None  #: runs a function of the tests that the kernel asks for
    printed: list = field(default_factory=list)  #: stream outputs the kernel printed meanwhile
    started: float = field(default_factory=time.monotonic)
    #: wall-clock seconds the cell may take whatever it waited (what is left of the submission's budget), or None
    wall_seconds: float = None

    def remaining(self):
        """Seconds left of the limit: wall-clock time less the waits for a CPU, stretched at most
        ``cpu_wait.MAX_STRETCH`` times, and never past `wall_seconds`."""
        elapsed = time.monotonic() - self.started
        left = self.seconds - cpu_wait.charged(elapsed, self.waited())
        return left if self.wall_seconds is None else min(left, self.wall_seconds - elapsed)

    def timed_out(self):
        return Abort("CellTimeoutError", f"the tests of this cell took over {self.seconds:g} s, not counting waits "
                                               "for a busy CPU (an endless loop?), and were stopped")


def kernel_died():
    return Abort("KernelDied", "the kernel died while the tests called the submission's functions "
                                     "(a crash, os._exit, or the memory limit)")


def out_of_memory():
    return Abort("MemoryError", "the submission's code ran out of memory (the grading kernel's limit)")


class KernelLink:
    """Carries a judge's requests to the kernel of `client`, an nbclient ``NotebookClient``.

    `run_code(code, index, seconds)` runs `code` as a cell of its own at `index` within `seconds`
    and returns the cell's outputs; it may raise nbclient's DeadKernelError.
    """

    def __init__(self, client, run_code):
        self._client, self._run_code = client, run_code
        self._comm = None  # (kernel client, comm id) of the agent's comm in the current kernel
        self._kernel_stat = None  # (kernel client, its main thread's schedstat file) of the current kernel

    async def judge_cell(self, cell, index, setup, seconds, per_check=True, folder=None, cells=(), wall_seconds=None):
        """Run test cell `cell` in this process against the kernel; fill its outputs.

        `setup` is ``(namespace, answer function names, predict)`` (:func:`trusted_setup`);
        `per_check`: the cell scores the share of its checks that passed (else all or nothing); `folder`:
        the notebook's folder, where the kernel runs, and so where the test's relative paths lead (a data
        file beside the notebook); `cells`: the notebook's cells above it, whose answer cells say why a name the test
        needs is not defined when one of them does not compile (:mod:`hardened_grading.judge.syntax`).
        `seconds` is the cell's time limit, less the waits for a CPU (:mod:`hardened_grading.cpu_wait`);
        `wall_seconds`, if given, bounds its wall-clock time all the same (what is left of the submission's budget).
        Raises :class:`Abort` (after filling what was printed) when the kernel gives out.
        """
        namespace, functions, predict = setup
        loop = asyncio.get_running_loop()
        # what carries the cell: this event loop's thread, the kernel's main thread, and the tests' thread (below)
        count, waited = cpu_wait.counter(cpu_wait.this_thread(), self._kernel_thread())
        run = TestCellRun(index, seconds, waited, wall_seconds=wall_seconds)

        def ask(request):
            return asyncio.run_coroutine_threadsafe(self.ask(request, run), loop).result()

        def judged(*args):
            count(cpu_wait.this_thread())
            return in_folder(*args)

        the_judge = Judge(ask, folder, getattr(self._client, "max_output_kb", 1024) * 1024, cells)
        run.answer_callback = the_judge.answer_callback
        cell.outputs, cell.execution_count = [], None
        try:
            stdout, error = await asyncio.to_thread(judged, folder, the_judge.run, cell.source, namespace,
                                                    cell_label(grade_id(cell)), functions, predict(cell.source))
        except Abort as abort:
            record_verdict(cell, the_judge.checks, inert(run.printed) + the_judge.streams, None,
                           abort=f"{abort.ename}: {abort.message}", per_check=per_check)
            raise
        except Exception as problem:  # not the test's own failure: this cell fails, grading goes on
            self._client.log.error("hardened_grading: test cell %s could not be judged: %r", grade_id(cell), problem)
            stdout, error = "", {"output_type": "error", "ename": "GradingError", "traceback": [],
                                 "evalue": f"the tests could not be run ({type(problem).__name__}: {problem})"}
            for check in the_judge.checks:
                check.fail("not run: the tests could not be run")
        record_verdict(cell, the_judge.checks, inert(run.printed) + (the_judge.streams or [["stdout", stdout]]), error,
                       per_check=per_check, result=None if error else the_judge.result)

    async def ask(self, request, run):
        """Carry out one request of the judge in the kernel; return the agent's reply."""
        if run.remaining() <= 0:
            raise run.timed_out()
        request = {**request, "max_reply": self.max_reply()}
        if request.get("passes_callbacks"):
            return await self._ask_by_running_a_cell(request, run)
        return await self._ask_by_comm(request, run)

    def _kernel_thread(self):
        """The ``schedstat`` file of the current kernel's main thread, found once per kernel; None if unknown."""
        kc = self._client.kc
        if self._kernel_stat is None or self._kernel_stat[0] is not kc:
            provisioner = getattr(self._client.km, "provisioner", None)
            self._kernel_stat = (kc, cpu_wait.kernel_thread(getattr(provisioner, "pid", None)))
        return self._kernel_stat[1]

    def max_reply(self):
        """The largest reply (characters of JSON) the judge takes from the kernel: the client's ``max_reply_kb``."""
        return getattr(self._client, "max_reply_kb", 8192) * 1024

    def _checked_reply(self, text):
        """The reply `text` as JSON, or :class:`ReplyTooLarge` when it is over :meth:`max_reply`."""
        if not isinstance(text, str) or len(text) > self.max_reply():
            raise ReplyTooLarge(reply_too_large(len(text) if isinstance(text, str) else 0,
                                                      self.max_reply()))
        return json.loads(text)

    def _printed(self, run, output):
        """Keep `output`, a stream the kernel sent during a call, within the cell's ``max_output_kb``."""
        admit = getattr(self._client, "admit", None)
        kept = admit(run.index, len(json.dumps(output, default=str)), run.printed) if admit else True
        if kept is True:
            run.printed.append(output)

    async def _serve(self, run):
        """Run the agent in the current kernel and open its comm, once per kernel; return (kernel
        client, comm id)."""
        kc = self._client.kc
        if self._comm is None or self._comm[0] is not kc:
            await self._run(SERVE_CODE, run)
            comm_id = uuid.uuid4().hex
            kc.shell_channel.send(kc.session.msg(
                "comm_open", {"comm_id": comm_id, "target_name": agent.TARGET, "data": {}}))
            self._comm = (kc, comm_id)
        return self._comm

    async def _ask_by_comm(self, request, run):
        """Send the request over the agent's comm (opened on first use in each kernel)."""
        kc, comm_id = await self._serve(run)
        request_id = uuid.uuid4().hex
        message = kc.session.msg("comm_msg", {"comm_id": comm_id,
                                              "data": {"request": json.dumps({**request, "id": request_id})}})
        kc.shell_channel.send(message)
        while True:
            if run.remaining() <= 0:
                await ensure_async(self._client.km.interrupt_kernel())
                raise run.timed_out()
            try:
                reply = await ensure_async(kc.iopub_channel.get_msg(timeout=min(run.remaining(), 1.0)))
            except queue.Empty:
                if not await ensure_async(self._client.km.is_alive()):
                    raise kernel_died() from None
                continue
            content = reply["content"]
            if reply["msg_type"] == "stream" and reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
                self._printed(run, nbformat.v4.output_from_msg(reply))
            elif reply["msg_type"] == "comm_msg" and content.get("comm_id") == comm_id:
                answer = self._checked_reply(content.get("data", {}).get("reply", "{}"))
                if isinstance(answer, dict) and answer.get("id") == request_id:
                    return answer

    async def _ask_by_running_a_cell(self, request, run):
        """Run the request as a cell; while it runs, the submission's function may call a function
        of the tests: the kernel asks for it over stdin, and ``run.answer_callback`` runs it here."""
        kc, _ = await self._serve(run)
        replies, outputs = [], []
        # The served agent, called in one short line; if the submission's code took it away (it could), the
        # agent's whole source again. A reply comes back either way: the agent answers whatever the call does.
        for served in (True, False):
            callbacks = asyncio.ensure_future(self._answer_input_requests(kc, run.answer_callback))
            kc.allow_stdin = True
            try:
                outputs = await self._run(kernel_code(request, served=served), run)
            finally:
                callbacks.cancel()
                kc.allow_stdin = False
            replies = [o.data[agent.MIME] for o in outputs if agent.MIME in o.get("data", {})]
            if replies:
                break
        if not replies:
            errors = [f"{o.ename}: {o.evalue}" for o in outputs if o.output_type == "error"]
            raise StudentError("the grading kernel could not run the submission's code "
                                     f"({errors[0] if errors else 'no answer'})")
        return self._checked_reply(replies[-1])

    async def _run(self, code, run):
        """Run `code` as a cell of its own within the run's deadline; return its non-stream outputs."""
        try:
            outputs = await self._run_code(code, run.index, max(1, run.remaining()))
        except DeadKernelError:
            raise kernel_died() from None
        run.printed.extend(o for o in outputs if o.output_type == "stream")
        for output in outputs:
            if output.get("ename") == "CellTimeoutError":
                raise run.timed_out()
            if output.get("ename") == "MemoryError":
                raise out_of_memory()
        return [o for o in outputs if o.output_type != "stream"]

    @staticmethod
    async def _answer_input_requests(kc, answer_callback):
        while True:
            message = await ensure_async(kc.stdin_channel.get_msg(timeout=None))
            if message["header"]["msg_type"] == "input_request":
                kc.input(answer_callback(message["content"].get("prompt", "")))


def reply_too_large(size, limit):
    return (f"the submission's reply to this call was {size / 1024:,.0f} KiB as sent to the grader, over the "
            f"{limit // 1024} KiB a reply may be (c.ResilientExecute.max_reply_kb)")


def inert(outputs):
    """What the kernel printed in a judged test cell (outside the calls, which bring their own: the agent's cell, a
    message sent straight to the grader), as ``[[name, text], ...]`` that nbgrader cannot read as a score:
    text on stdout or stderr, as printed (stderr fails the cell, as in nbgrader: :func:`record_verdict`), and
    every other output as its plain text, named ``display`` (no error, no result, and no display id a later
    message could update): the grader's notice of a cap among them, which nbgrader's ``LimitOutput`` would drop
    as a stream after the cell's first lines. The cell's score is otherwise the judge's alone."""
    kept = []
    for output in outputs:
        stream = output.get("output_type") == "stream"
        text = output.get("text") if stream else (output.get("data") or {}).get("text/plain")
        if isinstance(text, list):
            text = "".join(text)
        if isinstance(text, str) and text:
            kept.append([("stderr" if output.get("name") == "stderr" else "stdout") if stream else "display", text])
    return kept


def record_verdict(cell, checks, printed, error, abort=None, per_check=True, result=None):
    """Give a judged test cell its outputs and score, from its checks (:class:`Check`).

    All checks passed: only what the cell printed (silence means passed). Some failed: a summary of
    the failed ones on stdout, then the score as the cell's result, which nbgrader records as partial
    credit. None passed (or no checks and an error): the summary and the error, which scores 0.
    `abort` (the kernel died or ran over time) is said in the summary; the caller restarts the kernel.
    The checks are kept in the cell's metadata (``hardened_grading.checks``) for the feedback and reports.
    Without `per_check`, the cell scores all its points, or none when it raised or the kernel gave out.
    `result`, the value of the cell's last expression when it passed, is its result as IPython shows it: a
    number there is the cell's own partial credit, as stock nbgrader reads it.

    `printed` is what the cell printed: text on stdout, or ``[[stream name, text], ...]`` in order
    (:attr:`Judge.streams`: the test's own lines and what the submission's code printed while the test
    called it). Anything on stderr fails the cell, 0 points, as nbgrader fails a test cell that writes there.
    """
    points = float(cell.metadata.get("nbgrader", {}).get("points", 0))
    failed = [check for check in checks if not check.passed]
    if per_check and checks:
        score = score_of(checks, points)
    else:  # all or nothing, as stock nbgrader scores a test cell: it fails when it raises
        score = 0.0 if error or abort else points
    streams = printed if isinstance(printed, list) else [["stdout", printed]] if printed else []
    on_stderr = any(name == "stderr" and text for name, text in streams)
    if on_stderr:
        score = 0.0
    cell.metadata[META] = {"checks": [check.as_dict() for check in checks], "score": score, "points": points}
    if on_stderr:
        _said(cell, "This cell scores 0: something was written to standard error while its tests ran (below),\n"
                    "and nbgrader fails a test cell that writes there, as Validate does.\n"
                    "Print to standard output instead, or remove the print.\n")
        _printed_under(cell, streams)
        # nbgrader reads the 0 from the stderr stream, which LimitOutput drops after a cell's first lines
        cell.outputs.append(nbformat.v4.new_output(**error) if error is not None else nbformat.v4.new_output(
            "error", ename="WroteToStandardError", evalue="something was written to standard error: 0 points",
            traceback=["WroteToStandardError: something was written to standard error: 0 points"]))
        return
    if not failed and error is None and abort is None:
        _printed_under(cell, streams)
        if result is not None:
            shown = nbformat.v4.new_output("execute_result", data={"text/plain": repr(result)}, execution_count=None)
            cell.outputs.append(shown)
            try:  # the score nbgrader reads from that result (SaveAutoGrades: nbgrader.utils.get_partial_grade)
                cell.metadata[META]["score"] = get_partial_grade(shown, points)
            except ValueError:  # above the cell's points: nbgrader refuses it, and the judge does not guess
                cell.metadata[META]["score"] = points
        return
    lines = [f"{len(checks) - len(failed)} of {len(checks)} checks passed: {score:g} of {points:g} points."]
    if abort:
        lines.append(f"The kernel gave out: {abort}")
    for group in repeated_together(failed, alike=lambda check: (check.hidden, check.message)):
        lines.append(f"  FAILED ({_where(group)}): {group[0].message}")
    _said(cell, "\n".join(lines) + "\n")
    _printed_under(cell, streams)
    if score > 0 and (failed or abort):
        cell.outputs.append(nbformat.v4.new_output("execute_result", data={"text/plain": f"{score:g}"},
                                                   execution_count=None))
    elif error is not None:
        cell.outputs.append(nbformat.v4.new_output(**error))
    elif score < points:  # no error to show, yet no points: nbgrader reads 0 only from an error
        cell.outputs.append(nbformat.v4.new_output("error", ename="ChecksFailed", evalue=lines[0],
                                                   traceback=[f"ChecksFailed: {lines[0]}"]))


def _where(group):
    """Where the failed checks of `group` (:func:`~.messages.repeated_together`) are, in the judge's list under a
    test cell: ``line 3``, ``lines 3, 4, 5``, ``hidden check``, ``16 hidden checks``."""
    if group[0].hidden:
        return counted(len(group), "hidden check") if len(group) > 1 else "hidden check"
    return ("lines " if len(group) > 1 else "line ") + ", ".join(str(check.line) for check in group)


def _said(cell, text):
    """The grader's own words under a test cell: first, on stdout, so that nbgrader's ``LimitOutput`` (which keeps
    a cell's first lines of stream output) never drops them after what the submission printed."""
    cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=text))


def _printed_under(cell, streams):
    """What the cell printed (:func:`inert`'s ``[[name, text], ...]``) as the cell's outputs, in order."""
    for name, text in streams:
        if text and name == "display":
            cell.outputs.append(nbformat.v4.new_output("display_data", data={"text/plain": text}))
        elif text:
            cell.outputs.append(nbformat.v4.new_output("stream", name=name, text=text))
