"""``ResilientExecute``: nbgrader's ``Execute`` in the sandboxed kernel, with the trusted judge.

In place of ``Execute`` in ``Autograde.autograde_preprocessors``, it runs the student's cells in the kernel
``hardened-grading`` (:mod:`hardened_grading.sandbox`, sandboxed and memory-limited) and the test cells in this
process, out of the student code's reach (:mod:`hardened_grading.judge`). A cell that kills the kernel or
exhausts its memory limit costs only the tests that need it. Without a sandbox it refuses to grade, unless told
otherwise (:func:`refuse_without_sandbox`).
"""

import dataclasses
import json
import math
import os
import shutil
import tempfile
import time

import nbformat
import zmq
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbgrader.preprocessors import Execute
from traitlets import Bool, Enum, Integer, List, TraitError, Unicode, validate

from ..cells import META, course_root, engine_meta, is_test_cell
from ..cells import grade_id as _grade_id
from ..cells import nbgrader_meta as _meta
from ..sandbox import ahead
from ..errors import SandboxUnavailable
from ..hooks.submission import GRADED_MARKER
from ..hooks.unfinished import KERNEL_FOLDER, _remove_orphaned_kernel_folders
from ..judge import agent, magics
from ..judge.checks import routed_checks
from ..judge.link import KernelLink, record_verdict
from ..judge.setup import Abort, judged_source, setup_problem, trusted_fallbacks, trusted_setup
from ..logs import _say_once
from ..sandbox import probe
from ..sandbox.bwrap import INHERITED_ENVIRONMENT, never_inherited, read_only_problem
from ..sandbox.cgroup import remove_stale_cgroups
from ..sandbox.kernelspec import KERNEL_NAME, GradingKernelSpecManager
from ..sandbox.limits import SANDBOX_MODES, Limits
from ..sandbox.probe import SANDBOX_ADVICE, UNSANDBOXED_MEANS
from ..untrusted import folder as student_folder
from .restore import course_notebook

#: The grader's own limits on what a kernel sends it and leaves in its folder, each a ``ResilientExecute`` traitlet
#: (the kernel's own limits are :class:`hardened_grading.sandbox.limits.Limits`); the site's table of limits lists both.
GRADER_LIMITS = ("max_output_kb", "max_comm_kb", "max_reply_kb", "submission_seconds", "max_files", "max_folder_mb")


class ResilientExecute(Execute):
    """nbgrader's Execute, with trusted test cells, which survives a kernel that dies.

    A test cell (a graded cell that is not an answer) is not sent to the kernel: it runs here,
    in a namespace made of the released notebook's setup cells, and calls the submission's
    functions in the kernel (:mod:`hardened_grading.judge`; :mod:`hardened_grading.judge.link` carries
    the calls). This class's own job is recovery. Its verdict is the same error output
    nbgrader would see from the kernel, so ``SaveAutoGrades`` records it as usual. The whole
    cell gets the usual time limit (``Execute.timeout``).

    When a cell kills the kernel (``os._exit``, a segfault, the memory limit) or raises
    ``MemoryError``, the cell gets an error output that says so, a fresh kernel is started,
    the earlier answer and setup cells are run again in it (test cells need not be), and
    grading goes on with the next cell. Only the tests that need that cell lose points.
    """

    sandbox = Enum(SANDBOX_MODES, default_value="require", help=(
        "Run the grading kernel in the bubblewrap sandbox (Linux only). 'require': a submission is not "
        "graded without it, and the error says what to do; 'if-available': sandboxed where bubblewrap "
        "works, otherwise not (for a course's own checker, on a learner's own notebook); 'off': never, only for "
        "submissions you trust (on macOS, say).")).tag(config=True)
    # The kernel's limits (hardened_grading.sandbox.limits.Limits holds the defaults; docs/instructors/grading-safely.md).
    memory_mb = Integer(Limits.memory_mb, min=256, help=(
        "The grading kernel's address-space limit in MiB: a cell that needs more gets a MemoryError "
        "(Linux; macOS does not enforce it).")).tag(config=True)
    processes = Integer(Limits.processes, min=32, help=(
        "Processes and threads the sandboxed kernel may have, its own included: a fork bomb gets "
        "BlockingIOError and costs only its exercise.")).tag(config=True)
    cpu_seconds_per_cell = Integer(Limits.cpu_seconds_per_cell, min=1, help=(
        "CPU seconds one cell may use in the sandboxed kernel (a backstop to Execute.timeout, which is "
        "wall-clock time): beyond it, CPUTimeLimitExceeded.")).tag(config=True)
    cpu_seconds_total = Integer(Limits.cpu_seconds_total, min=1, help=(
        "CPU seconds the sandboxed kernel, and each process it starts, may use in all: beyond it the "
        "process is killed (a fresh kernel goes on).")).tag(config=True)
    file_mb = Integer(Limits.file_mb, min=1, help=(
        "The largest file (MiB) the sandboxed kernel may write: beyond it, OSError.")).tag(config=True)
    tmp_mb = Integer(Limits.tmp_mb, min=1, help=(
        "Size (MiB) of the sandboxed kernel's private /tmp, which vanishes with it.")).tag(config=True)
    blas_threads = Integer(Limits.blas_threads, min=1, help=(
        "Threads numpy's BLAS may use in the sandboxed kernel (OMP_NUM_THREADS and the like).")).tag(config=True)
    kernel_log_kb = Integer(Limits.kernel_log_kb, min=1, help=(
        "What a kernel may write to its own stdout and stderr (KiB; not its cells' outputs, which go to the graded "
        "notebook) that reaches the grader's, each line escaped and marked as the kernel's: the rest is dropped, "
        "and a line says how much.")).tag(config=True)
    max_output_kb = Integer(1024, min=16, help=(
        "Output (KiB) a cell may send back while grading, of every kind: printed text, displays, results, "
        "errors, and updates of earlier displays (each counted at its size times the outputs it would change); "
        "the rest is dropped, with a line that says so. A test cell's calls of the submission share its "
        "allowance. nbgrader's LimitOutput then trims what is kept for the graded notebook.")).tag(config=True)
    max_comm_kb = Integer(1024, min=16, help=(
        "Comm messages (KiB) a submission's kernel may send the grader in all, its widgets' state included "
        "(the judge's own replies do not count): the rest are ignored, and the log says so once.")).tag(config=True)
    max_reply_kb = Integer(8192, min=64, help=(
        "The largest reply (KiB) to one call of the trusted judge (the value a student's function returns, as "
        "sent): a larger one fails that call, and its check says so. It also bounds every message the grader "
        "accepts from the kernel (this plus 64 KiB; a larger one is dropped unread), and so the grader's memory "
        "per submission.")).tag(config=True)
    submission_seconds = Integer(300, min=10, help=(
        "Wall-clock seconds one submission's cells may take in all, kernel restarts and the cells run again "
        "after a crash included: each cell's time limit is at most what is left, and once it is spent the "
        "remaining cells fail with a line that says so, and grading goes on with the next submission."
    )).tag(config=True)

    max_files = Integer(student_folder.MAX_FILES, min=1, help=(
        "Files and folders a graded folder (autograded/STUDENT/ASSIGNMENT) may keep once its kernel has ended, the "
        "notebook and the course's own files included: the folder becomes a new one of the grader's own, into "
        "which its regular files and folders are moved, the first this many in sorted order (the notebooks at "
        "the top first); links, FIFOs, sockets, devices, hard links and the entries beyond are left out and "
        "logged (the first 20 by name, the rest counted). Feedback copies the folder, so this bounds its work "
        "too.")).tag(config=True)
    max_folder_mb = Integer(student_folder.MAX_FOLDER_MB, min=1, help=(
        "MiB that a graded folder may keep in all once its kernel has ended (see max_files): the files that "
        "would take it over are left out and logged.")).tag(config=True)

    kernel_name = Unicode(KERNEL_NAME, help=(
        "The grading kernel's name: the engine serves it (hardened_grading.sandbox, sandboxed as set here) and "
        "installs it nowhere, so a student's JupyterLab never offers it. Change it only to tell this "
        "course's grading kernels apart from another's in a process list or a log.")).tag(config=True)

    shutdown_kernel = Enum(["graceful", "immediate"], default_value="immediate", help=(
        "How a kernel is stopped once its notebook is graded. 'immediate' (the default here): it is killed, "
        "with its process group (and with the sandbox, every process in it), so that the next submission "
        "does not wait; its outputs are all in by then. 'graceful' (nbclient's default): it is asked to shut "
        "down, and waited for.")).tag(config=True)

    read_only_paths = List(Unicode(), help=(
        "More files or folders the sandboxed kernel may read, bound read-only at the same absolute path: a "
        "data set, another library's files. None may hold the course folder or lie inside it (files the "
        "notebooks open go beside them, and nbgrader copies them into each student's folder).")).tag(config=True)

    inherited_environment = List(Unicode(), default_value=list(INHERITED_ENVIRONMENT), help=(
        "The grader's environment variables that reach the sandboxed kernel, as stock nbgrader's kernel inherits "
        "them: names or glob patterns (LC_*). By default those that change how the notebook's code behaves, the same "
        "for every student, and reveal nothing: PYTHONDONTWRITEBYTECODE (no __pycache__ left in the graded "
        "folder), PYTHONHASHSEED, PYTHONWARNINGS, PYTHONUTF8, PYTHONIOENCODING, LANG, LANGUAGE, LC_* and TZ. Every "
        "other variable (a token, a password, the grader's paths) stays out. Whatever the patterns, the variables "
        "the sandbox sets itself (HOME, PATH, TMPDIR, PYTHONPATH, the BLAS thread counts) and those that would change "
        "what the kernel runs (LD_*, PYTHONSTARTUP, PYTHONHOME, JUPYTER_*, hardened_grading.sandbox.bwrap.NEVER_INHERITED) "
        "never pass; LANG, C.UTF-8 by default, is the grader's when it has one. A kernel without the sandbox "
        "(sandbox = 'off') inherits the whole environment, as stock's does.")).tag(config=True)

    @validate("inherited_environment")
    def _no_variable_the_sandbox_sets(self, proposal):
        refused = [name for name in proposal["value"] if never_inherited(name)]
        if refused:
            raise TraitError(f"c.ResilientExecute.inherited_environment: {', '.join(refused)} never reaches the "
                             "sandboxed kernel: the sandbox sets it itself, or it would change what the kernel runs")
        return proposal["value"]

    trusted_tests = Bool(False, help=(
        "Run test cells in the grader, out of the submission's reach (the trusted judge, "
        "hardened_grading.judge), in a namespace made of the released notebook's set-up cells: the code "
        "cells that are neither answers nor tests. Each name a test uses that it does not define is the "
        "kernel's: a function is called there, any other value is copied here. A test runs as it would in the "
        "kernel, in the state the student's code left there: numpy's error state and print options, the warning "
        "filters, the global random generators once the test seeds them, the working folder; what the function "
        "prints comes back in order, and anything on stderr fails the cell, as in nbgrader (docs/engine.md). "
        "Off (the default): test "
        "cells run in the sandboxed kernel, as stock nbgrader runs them. Set-up and test cells are turned into "
        "Python as IPython turns them, and the judge carries out in the grader the magics that make sense there "
        "(%matplotlib, %config, %load_ext, %autoreload, %reset, %%html and the other display cell magics, which "
        "show nothing, %%capture, %%time) and leaves out those that only show something (%timeit, !ls, %pip list; "
        "hardened_grading.judge.magics). Any other magic (%run, %pip install, %cd, !shell commands that may write, an "
        "unknown one) is not carried out: a test cell with one runs in the kernel; a set-up cell with one ends the "
        "judge's set-up there, and the test cells below it run in the kernel (one log line per notebook names "
        "each cell and its magic). A notebook whose set-up cells cannot run in the grader for another reason "
        "(one uses an answer) has its test cells run in the kernel, and the log says why.")).tag(config=True)

    credit_per_check = Bool(False, help=(
        "With trusted_tests: a test cell scores the weighted share of its checks that passed (a call "
        "of a check_* function, or an assert statement, is one check; '# weight N' at the end of its "
        "line weighs it N), and its output lists the failed ones. Off (the default): a test cell scores "
        "all its points or none, as in stock nbgrader.")).tag(config=True)

    start_ahead = Bool(True, help=(
        "In a hardened-grade worker, start the next submission's kernel, in a fresh sandbox of its own, while this "
        "one's cells run (hardened_grading.sandbox.ahead): its start-up no longer makes the next submission wait. Only "
        "sandboxed kernels. `make bench` measures it.")).tag(config=True)
    predict_calls = Bool(True, help=(
        "Ask the kernel, in one round trip per test cell, for the calls the cell makes when the answers "
        "are right (found once from the source notebook's reference answers); each real call uses that "
        "reply only if it is exactly the predicted call. Off: every call is its own round trip. "
        "`make bench` measures both.")).tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._poisoned = set()
        self._info = {}
        self._setup = None  # trusted_setup(...) for the notebook (False: none), made at its first test cell
        self._in_kernel = set()  # grade ids of its test cells that run in the kernel (trusted_fallbacks)
        self._link = KernelLink(self, self._run_code_cell)
        self._time_limits = {}  # id(cell) -> seconds, for the cells the kernel link runs
        self._output_used = {}  # cell index -> bytes of output sent for it (its test cell's calls included)
        self._comm_used = 0  # bytes of comm messages the kernel sent (not the judge's replies)
        self._deadline = None  # time.monotonic() by which the submission's cells must be done (submission_seconds)
        self._index = None  # the index of the cell whose messages are being processed
        self._replied = set()  # msg ids of the kernel link's cells whose reply to the judge came
        self._kept_past_cap = set()  # (cell index, "error" or "execute_result") kept, cut short, past max_output_kb
        self._said_out_of_time = False
        self._kernel_folder = None
        self._adopted = False  # the kernel was started ahead (hardened_grading.sandbox.ahead)
        self._folder = None  # the notebook's folder (where its kernel runs), while one is graded
        self.timeout_func = self._time_limit
        self._configured_arguments = list(self.extra_arguments)  # the instructor's (Execute.extra_arguments)

    def preprocess(self, nb, resources=None, km=None):
        self._info = (resources or {}).get("nbgrader", {})
        self._setup, self._in_kernel = None, set()
        self._output_used, self._comm_used, self._deadline, self._said_out_of_time = {}, 0, None, False
        self._replied, self._kept_past_cap = set(), set()
        self.extra_arguments = self.kernel_arguments()
        folder = ((resources or {}).get("metadata") or {}).get("path") or None
        self._folder = os.path.abspath(folder) if folder else None
        for path in self.read_only_paths if folder else ():
            problem = read_only_problem(path, course_root(folder))
            if problem:
                raise ValueError(f"c.ResilientExecute.read_only_paths in nbgrader_config.py: {problem}")
        graded = super().preprocess(nb, resources, km=km)
        if self._folder:
            # The kernel has ended: what its code left in the folder is untrusted. The folder becomes a new one of
            # the grader's own, with its plain files only, before nbgrader writes, chmods or copies anything there.
            student_folder.rebuild(self._folder, self.max_files, self.max_folder_mb,
                                   who=self._info.get("student", ""))
            # The done-marker is the grader's alone: one the submission brought or made would have an interrupted
            # run take this half-graded folder for a finished one (remove_unfinished).
            student_folder.remove_entry(os.path.join(self._folder, GRADED_MARKER))
        return graded

    def kernel_arguments(self):
        """The grading kernel's command-line arguments: the instructor's ``extra_arguments``, then the
        sandbox's mode, the limits and this grader's pid (a kernel whose grader dies while it starts ends
        at once: :func:`hardened_grading.sandbox.parent.bind_to_grader`). Raise SandboxUnavailable as
        :meth:`_sandbox_mode` does."""
        return [*self._configured_arguments, f"--sandbox={self._sandbox_mode()}", self.limits().argument(),
                f"--grader-pid={os.getpid()}", *(f"--read-only={path}" for path in self.read_only_paths),
                *(f"--inherit-env={pattern}" for pattern in self.inherited_environment)]

    def limits(self):
        """The kernel's :class:`hardened_grading.sandbox.limits.Limits`, from this object's traitlets."""
        return Limits(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Limits)})

    def create_kernel_manager(self):
        """nbclient's kernel manager, on the ``ipc`` transport in a folder private to this kernel, and
        knowing the grading kernel (:class:`hardened_grading.GradingKernelSpecManager`).

        The sandboxed kernel has no network: Unix sockets in this folder, bound into its sandbox, are
        its only way out. (Without the sandbox, too, nothing listens on a TCP port.)
        """
        self._adopted = False
        if self._folder and self._ahead_mode():
            taken = ahead.take(self._folder, self.kernel_name, self.extra_arguments)
            if taken:
                self.km, self._kernel_folder = taken
                self._adopted = True
                self.log.info("hardened_grading: student %r: the kernel started ahead is used", self._info.get("student"))
                return self.km
        self.km, self._kernel_folder = self._new_kernel_manager()
        return self.km

    def _new_kernel_manager(self):
        """A kernel manager as :meth:`create_kernel_manager` describes, and its private folder (None off POSIX)."""
        km = super().create_kernel_manager()
        km.client_factory = capped_client(km.client_factory, self.message_bytes())
        km.kernel_spec_manager = GradingKernelSpecManager(parent=km)
        km.kernel_spec_manager.grading_kernel_name = self.kernel_name
        folder = None
        if os.name == "posix":
            _remove_orphaned_kernel_folders()
            folder = tempfile.mkdtemp(prefix=f"{KERNEL_FOLDER}{os.getpid()}-")
            km.transport = "ipc"
            km.connection_file = os.path.join(folder, "kernel.json")
            km.ip = os.path.join(folder, "kernel-ipc")
        return km, folder

    def _ahead_mode(self):
        """Whether kernels may be started ahead: when ``start_ahead`` is on, and for sandboxed kernels only (the working
        folder is bound where the student's folder will be: :mod:`hardened_grading.sandbox.ahead`). Whether one is, is
        :func:`hardened_grading.sandbox.ahead.expected`'s: only a grading worker says what comes next."""
        return self.start_ahead and "--sandbox=require" in self.extra_arguments

    async def async_start_new_kernel_client(self):
        """nbclient's, then the next submission's kernel started (:mod:`hardened_grading.sandbox.ahead`). A kernel that was
        started ahead and does not answer is replaced by one started now."""
        try:
            client = await super().async_start_new_kernel_client()
        except Exception as error:
            if not self._adopted:
                raise
            self._adopted = False
            self.log.warning("hardened_grading: the kernel started ahead did not answer (%s); a new one is started",
                             error)
            self.km, self._kernel_folder = self._new_kernel_manager()  # nbclient removed the other
            await self.async_start_new_kernel()
            client = await super().async_start_new_kernel_client()
        self._adopted = False
        if self._ahead_mode() and ahead.expected():
            current = self.km
            await ahead.start(self._new_kernel_manager, self.kernel_name, self.extra_arguments)
            self.km = current  # nbclient's create_kernel_manager sets it
        return client

    start_new_kernel_client = run_sync(async_start_new_kernel_client)  # nbclient's setup_kernel calls this one

    async def _async_cleanup_kernel(self):
        try:
            await super()._async_cleanup_kernel()
        finally:
            if getattr(self, "_kernel_folder", None):
                shutil.rmtree(self._kernel_folder, ignore_errors=True)
                self._kernel_folder = None
            remove_stale_cgroups()

    _cleanup_kernel = run_sync(_async_cleanup_kernel)  # as execute_cell: nbclient binds its own

    def message_bytes(self):
        """The largest message the grader accepts from the kernel, on any channel: a reply to the judge, with
        room for its envelope. zmq drops a larger one unread (``MAXMSGSIZE``)."""
        return self.max_reply_kb * 1024 + 64 * 1024

    def _judged(self, cell_index):
        """Whether the cell at `cell_index` is a test cell the judge runs: then nothing the kernel sends is read
        as its score."""
        cells = self.nb.cells if getattr(self, "nb", None) is not None else []
        return 0 <= cell_index < len(cells) and is_test_cell(cells[cell_index]) and self.trusted_tests \
            and self._setup is not False

    def process_message(self, msg, cell, cell_index):
        """nbclient's handler of one iopub message of the running cell, with every channel capped: comm
        messages count against ``max_comm_kb`` (beyond it they are ignored: nbclient would keep a widget's
        state in memory and in the notebook), outputs and display updates against ``max_output_kb``."""
        self._index, self._running = cell_index, cell
        if msg["msg_type"].startswith("comm"):
            size = len(json.dumps(msg["content"], default=str)) + sum(len(b) for b in msg.get("buffers") or ())
            self._comm_used += size
            if self._comm_used > self.max_comm_kb * 1024:
                if self._comm_used - size <= self.max_comm_kb * 1024:
                    self.log.warning("hardened_grading: student %r: comm messages beyond %d KiB were ignored",
                                     self._info.get("student"), self.max_comm_kb)
                return None
        return super().process_message(msg, cell, cell_index)

    def admit(self, cell_index, size, outs=None):
        """Count `size` bytes of output for the cell at `cell_index`; whether they fit in ``max_output_kb``.
        The first time they do not, a line that says so is appended to `outs` (and returned). It is a display, not
        a stream: nbgrader's ``LimitOutput``, next in the pipeline, drops every stream after a cell's first
        ``max_lines`` lines, and a flood of short lines passes them before it passes ``max_output_kb``."""
        used = self._output_used.get(cell_index, 0)
        self._output_used[cell_index] = used + size
        limit = self.max_output_kb * 1024
        if used + size <= limit:
            return True
        if used <= limit:
            self.log.warning("hardened_grading: student %r: a cell's output beyond %d KiB was dropped",
                             self._info.get("student"), self.max_output_kb)
            if outs is not None:
                notice = nbformat.v4.new_output("display_data", data={"text/plain": (
                    f"[output beyond {self.max_output_kb} KiB was dropped while grading]")})
                outs.append(notice)
                return notice
        return False

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's handler of one output message: past ``max_output_kb`` for one cell, outputs are
        dropped, and a line says so. In a judged test cell (the kernel runs only the judge's calls there), no
        display id is kept, so that no later message can change what the cell shows. The judge's reply to
        its call does not count: the first of each call, up to ``max_reply_kb``."""
        data = msg["content"].get("data") or {}
        size = len(json.dumps(msg["content"], default=str))
        call = msg["parent_header"].get("msg_id")
        if agent.MIME in data and call not in self._replied and size <= self.message_bytes():
            self._replied.add(call)
            return super().output(outs, msg, None, cell_index)
        if self._judged(cell_index):
            display_id = None
        admitted = self.admit(cell_index, size, outs)
        if admitted is not True:
            # Past the cap, a cell's error and its result are still kept, once each and cut short: nbgrader reads
            # a test cell's score from them (a cell run in the kernel: trusted_tests off, or a flood then a failure).
            kind = msg["msg_type"]
            if kind in ("error", "execute_result") and (cell_index, kind) not in self._kept_past_cap:
                self._kept_past_cap.add((cell_index, kind))
                out = _cut_short(msg["content"], kind)
                outs.append(out)
                return out
            return admitted or None
        return super().output(outs, msg, display_id, cell_index)

    def _update_display_id(self, display_id, msg):
        """nbclient's update of the outputs shown under `display_id`, refused in test cells the judge runs
        (their score is the judge's alone), and counted against the running cell's ``max_output_kb`` at its size
        times the outputs it changes: past it, the update is dropped."""
        places = {index: outputs for index, outputs in self._display_id_map.get(display_id, {}).items()
                  if outputs and not self._judged(index)}
        if not places:
            return
        size = len(json.dumps(msg["content"], default=str)) * sum(len(outputs) for outputs in places.values())
        index = self._index if self._index is not None else -1
        running = getattr(self, "_running", None)
        if self.admit(index, size, running.outputs if running is not None else None) is not True:
            return
        kept = self._display_id_map[display_id]
        self._display_id_map[display_id] = places
        try:
            super()._update_display_id(display_id, msg)
        finally:
            self._display_id_map[display_id] = kept

    def _sandbox_mode(self):
        """The kernel's ``--sandbox`` mode; raise SandboxUnavailable if it is required and cannot be had."""
        if self.sandbox == "off":
            _say_once(self.log, "hardened_grading: grading without the sandbox (c.ResilientExecute.sandbox = 'off'): "
                                f"{UNSANDBOXED_MEANS}. Grade only submissions you trust this way.")
            return "off"
        problem = probe._sandbox_problem()
        if problem is None:
            cap_problem = probe._process_cap_problem()
            if cap_problem:
                _say_once(self.log, f"hardened_grading: the sandbox does not cap processes: {cap_problem}.")
            return "require"
        if self.sandbox == "require":
            raise SandboxUnavailable(f"hardened_grading: no submission is graded without the sandbox, and {problem}. "
                                     f"{SANDBOX_ADVICE}")
        _say_once(self.log, f"hardened_grading: grading without the sandbox, because {problem}: {UNSANDBOXED_MEANS}.")
        return "off"

    def _judging_setup(self):
        """:func:`trusted_setup` of the notebook being graded, or None: without ``trusted_tests``,
        without a release or source notebook, or when its set-up cells cannot run in the grader (logged once
        per notebook; its test cells then run in the kernel, as stock nbgrader runs them)."""
        if not self.trusted_tests:
            return None
        if self._setup is None:
            assignment, notebook_id = self._info.get("assignment"), self._info.get("notebook")
            found = {folder: path for folder in ("release", "source")
                     if (path := course_notebook(folder, assignment, notebook_id)).exists()}
            if not found:
                self.log.error("hardened_grading: no release/%s/%s.ipynb: its test cells are run in the student's kernel",
                               assignment, notebook_id)
            try:
                self._setup = trusted_setup(found.get("release"), found.get("source"), self.predict_calls) \
                    if found else False
            except Exception as problem:  # a set-up cell that needs the kernel (it uses an answer, a file)
                self._setup = False
                _say_once(self.log, f"hardened_grading: {assignment}/{notebook_id}.ipynb: its test cells are run in the "
                                    f"kernel, as stock nbgrader runs them, because a set-up cell cannot run in "
                                    f"the grader ({setup_problem(problem)})")
            fallbacks = trusted_fallbacks(found.get("release"), found.get("source")) if self._setup else []
            self._in_kernel = {test for fallback in fallbacks for test in fallback.tests}
            if fallbacks:
                _say_once(self.log, f"hardened_grading: {assignment}/{notebook_id}.ipynb has IPython magics the trusted "
                                    "judge cannot carry out in the grader; the cells that need them run in the kernel, "
                                    f"as stock nbgrader runs them: {'; '.join(map(str, fallbacks))}")
        return self._setup or None

    def _judged_source(self, cell):
        """The test `cell`'s code as the judge runs it (:func:`judged_source`), or None when it runs in the
        kernel: it, or a set-up cell above it, has a magic the judge cannot carry out (logged once per notebook)."""
        code = judged_source(cell.source)
        if code is None or _grade_id(cell) in self._in_kernel:
            if _grade_id(cell) not in self._in_kernel:  # not as released: said once
                _say_once(self.log, f"hardened_grading: {self._info.get('assignment')}/{self._info.get('notebook')}"
                                    f".ipynb: test cell {_grade_id(cell) or '(no id)'} has a magic the trusted judge "
                                    f"cannot carry out ({', '.join(magics.translate(cell.source).unsupported)}): "
                                    "it runs in the kernel")
            return None
        return code

    def _seconds_left(self):
        """Wall-clock seconds left of the submission's ``submission_seconds`` (its clock starts at its first cell)."""
        if self._deadline is None:
            self._deadline = time.monotonic() + self.submission_seconds
        return self._deadline - time.monotonic()

    def _out_of_time(self, cell):
        """Fail `cell`, which the submission's time budget leaves no time to run, saying so."""
        message = (f"not run: this submission's cells took the {self.submission_seconds} s that grading gives "
                   "one submission (c.ResilientExecute.submission_seconds), the cells run again after a crash "
                   "included")
        if not self._said_out_of_time:
            self._said_out_of_time = True
            self.log.warning("hardened_grading: student %r: %s; its remaining cells fail", self._info.get("student"),
                             message.removeprefix("not run: "))
        if is_test_cell(cell) and self._judging_setup() is not None:
            try:
                checks = routed_checks(magics.translate(cell.source).code)[1]
            except SyntaxError:
                checks = []
            for check in checks:
                check.fail(message)
            cell.outputs, cell.execution_count = [], None
            record_verdict(cell, checks, "", None, abort=f"GradingTimeBudget: {message}",
                           per_check=self.credit_per_check)
            cell.outputs.append(nbformat.v4.new_output("error", ename="GradingTimeBudget", evalue=message,
                                                       traceback=[f"GradingTimeBudget: {message}"]))
            cell.metadata[META]["score"] = 0.0
        elif cell.cell_type == "code" and cell.source.strip():
            cell.outputs = [nbformat.v4.new_output("error", ename="GradingTimeBudget", evalue=message,
                                                   traceback=[f"GradingTimeBudget: {message}"])]

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if self._seconds_left() <= 0:
            self._out_of_time(cell)
            return cell
        if is_test_cell(cell):
            setup = self._judging_setup()
            code = self._judged_source(cell) if setup is not None else None
            if code is not None:
                original, cell.source = cell.source, code  # the cell as Python (its magics: hardened_grading.judge.magics)
                try:
                    left = max(1, self._seconds_left())  # the submission's budget, in wall-clock time
                    await self._link.judge_cell(cell, cell_index, setup, min(self.timeout or 10**6, left),
                                                self.credit_per_check, self._folder, self.nb.cells[:cell_index],
                                                wall_seconds=left)
                except Abort as abort:  # the kernel died, ran out of memory or ran over time
                    cell.source = original
                    # the checks that passed before it keep their points: then the cell says so as text
                    partial = engine_meta(cell).get("score", 0) > 0
                    self._note(cell, None if partial else abort.ename, abort.message)
                    await self._restart_and_replay(cell_index)
                finally:
                    cell.source = original
                return cell
        started, limit = time.monotonic(), self._time_limit(cell)
        try:
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except DeadKernelError:
            self._note(cell, "KernelDied", "the kernel died while running this cell (a crash, os._exit, "
                                           "or the memory limit)")
            await self._restart_and_replay(cell_index)
            return cell
        except CellTimeoutError as error:
            if "IOPub" in str(error) and time.monotonic() - started < limit:  # in time, but its outputs never
                # ended: a message zmq dropped unread (message_bytes)
                self._note(cell, "OutputLost", "the kernel's outputs of this cell did not all arrive: a message "
                                               f"over {self.message_bytes() // 1024} KiB (max_reply_kb + 64 KiB, the "
                                               "largest the grader takes) is dropped unread")
            else:  # the kernel did not even answer the interrupt
                self._note(cell, "CellTimeoutError", f"this cell ran over the time limit of {limit} s "
                                                     "and did not stop when interrupted")
            await self._restart_and_replay(cell_index)
            return cell
        enames = {o.get("ename") for o in cell.get("outputs", [])} if cell.cell_type == "code" else set()
        if "MemoryError" in enames:
            self._note(cell, "MemoryError", "this cell ran out of memory (the grading kernel's limit)")
            await self._restart_and_replay(cell_index)
        elif "CellTimeoutError" in enames:  # interrupted; a fresh kernel, in case the loop goes on
            self._note(cell, None, "this cell ran over its time limit")
            await self._restart_and_replay(cell_index)
        return cell

    # nbclient binds execute_cell to its own async_execute_cell: bind it to this one.
    execute_cell = run_sync(async_execute_cell)

    async def _run_code_cell(self, code, index, seconds):
        """Run `code` as a cell of its own at `index` within `seconds` (for the kernel link); return
        its outputs. nbclient stores the cell it ran at ``nb.cells[index]``: the test cell is put back."""
        call = nbformat.v4.new_code_cell(code)
        test_cell = self.nb.cells[index]
        self._time_limits[id(call)] = max(1, math.ceil(seconds))
        try:
            await super().async_execute_cell(call, index, store_history=False)
        finally:
            del self._time_limits[id(call)]
            self.nb.cells[index] = test_cell
        return call.outputs

    def _time_limit(self, cell):
        """nbclient's ``timeout_func``: a call's own deadline, else the configured ``timeout``; never more than
        what is left of the submission's ``submission_seconds``."""
        limit = self._time_limits.get(id(cell), self.timeout)
        left = max(1, math.ceil(self._seconds_left()))
        return min(limit, left) if limit else left

    def _note(self, cell, ename, what):
        """Say in `cell` (unless `ename` is None: it says so already) and in the log what happened."""
        self._poisoned.add(id(cell))
        if is_test_cell(cell):
            message = f"{what}. Grading went on in a fresh kernel, with the answer cells above run again."
        else:
            message = (f"{what}. Grading went on in a fresh kernel, with the cells above this one run again; "
                       "only the tests that need this cell lose points.")
        self.log.warning("hardened_grading: cell %s: %s", _grade_id(cell) or "(no id)", message)
        if ename is not None:
            cell.outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=message,
                                                       traceback=[f"{ename}: {message}"]))

    async def _restart_and_replay(self, cell_index):
        """A fresh kernel, with the answer and set-up cells before `cell_index` run again in it, each within its
        time limit and all within what is left of ``submission_seconds``. A cell that kills the kernel or runs
        over its limit when run again is left out from then on, and the replay starts over in a fresh kernel."""
        while self._seconds_left() > 0:
            await self._fresh_kernel()
            for earlier in self.nb.cells[:cell_index]:
                if earlier.cell_type != "code" or _meta(earlier).get("grade") or id(earlier) in self._poisoned:
                    continue
                if self._seconds_left() <= 0:
                    return
                msg_id = await ensure_async(self.kc.execute(earlier.source, silent=True, store_history=False))
                try:
                    reply = await self.async_wait_for_reply(msg_id, earlier)
                except (DeadKernelError, CellTimeoutError):
                    reply = None
                if reply is None:  # it died, or ran over its time (interrupted: it may not have stopped)
                    self._poisoned.add(id(earlier))
                    self.log.warning("hardened_grading: student %r: cell %s, run again after a crash, killed the "
                                     "kernel or ran over its time limit: it is left out", self._info.get("student"),
                                     _grade_id(earlier) or "(no id)")
                    break
            else:
                return

    async def _fresh_kernel(self):
        self.kc.stop_channels()
        await ensure_async(self.km.restart_kernel(now=True))
        await self.async_start_new_kernel_client()


def _cut_short(content, kind, limit=2000):
    """An error or a result, from its message's `content`, in a few KiB: its name, its message and the end of its
    traceback; or its text."""
    if kind == "error":
        traceback = content.get("traceback") if isinstance(content.get("traceback"), list) else []
        return nbformat.v4.new_output("error", ename=str(content.get("ename"))[:200],
                                      evalue=str(content.get("evalue"))[:limit],
                                      traceback=[str(line)[:limit] for line in traceback[-5:]])
    text = (content.get("data") or {}).get("text/plain", "")
    text = "".join(map(str, text)) if isinstance(text, list) else str(text)
    count = content.get("execution_count")
    return nbformat.v4.new_output("execute_result", data={"text/plain": text[:limit]},
                                  execution_count=count if isinstance(count, int) else None)


#: Messages the grader's side of each kernel channel holds before the kernel's side must wait (zmq's
#: ``RCVHWM``): with ``ResilientExecute.message_bytes``, what bounds the grader's memory per submission.
QUEUED_MESSAGES = 8


def capped_client(base, message_bytes, queued=QUEUED_MESSAGES):
    """A subclass of the kernel client class `base` whose sockets refuse messages over `message_bytes` (zmq
    drops them unread, ``MAXMSGSIZE``) and hold at most `queued` messages the grader has not read (``RCVHWM``;
    the kernel's side holds the rest, in its own memory): the grader buffers at most about
    ``3 * (queued + 1) * message_bytes`` of a kernel's messages (iopub, shell, stdin)."""

    class CappedKernelClient(base):
        def _context_default(self):
            context = super()._context_default()
            context.setsockopt(zmq.MAXMSGSIZE, int(message_bytes))
            context.setsockopt(zmq.RCVHWM, int(queued))
            return context

    CappedKernelClient.__name__ = CappedKernelClient.__qualname__ = f"Capped{base.__name__}"
    return CappedKernelClient


def refuse_without_sandbox(config):
    """Stop the grading run, saying what to do, if `config` requires a sandbox that cannot be made."""
    mode = config.ResilientExecute.get("sandbox", ResilientExecute.sandbox.default_value)
    if mode == "require" and probe._sandbox_problem():
        raise SystemExit(f"hardened_grading: nbgrader autograde stopped before grading anything: {probe._sandbox_problem()}. "
                         f"{SANDBOX_ADVICE}")
