"""The engine's old dotted paths, kept working for a course's ``nbgrader_config.py``, with a warning.

Until 2026-11 the engine was a flat package: ``hardened_grading.grading.ResilientExecute``,
``hardened_grading.kernel.Limits`` and so on. Its modules are now folders by part (docs/engine.md, "Where
things are"). A configuration or an import that names an old path still works: the old module is made on
first import, and each name taken from it is the new object itself. The first old path a process uses
is said once, as a ``FutureWarning``, with its new name and where to find the others.

:data:`OLD_PATHS` is the whole table: an old module, and either the module it moved to whole or, for a
module split in parts, each of its names and the module that holds it now (under ``hardened_grading.``).
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

PACKAGE = "hardened_grading"

OLD_PATHS = {
    "agent": "judge.agent",
    "ahead": "sandbox.ahead",
    "export": "exporters.grades_csv",
    "feedback": {
        **dict.fromkeys(('SummaryFirstHTMLExporter',), "exporters.feedback_html"),
        **dict.fromkeys(('FeedbackSummary', 'due_date', 'full_messages', 'points_by_hand', 'utc_now'), "preprocessors.feedback_summary"),
        **dict.fromkeys(('FAILED_HIDDEN', 'HIDDEN_MESSAGES', 'MESSAGE_LENGTH', 'WHAT_LENGTH', 'WITHHELD', 'check_message', 'checks_by_exercise', 'checks_of', 'each_test_cell', 'failed_assert', 'hide_hidden_tests', 'part_by_pattern', 'shorten', 'summary', 'summary_html', 'summary_text', 'tested_name', 'unreadable_html', 'what_was_tried'), "summary"),
    },
    "grade_class": {
        **dict.fromkeys(('GradeClass', 'default_jobs', 'main', 'parser', 'run'), "class_grading.command"),
        **dict.fromkeys(('gradebook_url', 'prepare_gradebook', 'safe_url'), "class_grading.gradebook"),
        **dict.fromkeys(('Worker', 'grade_in_parallel'), "class_grading.pool"),
        **dict.fromkeys(('PROGRAM', 'Progress', 'duration', 'summary'), "class_grading.progress"),
        **dict.fromkeys(('parse_shard', 'select_students', 'shard_of'), "class_grading.students"),
        **dict.fromkeys(('Outcome', 'STOP_GRACE', 'Stopped', 'course_parts', 'failure_reason', 'graded_marker', 'problems_of', 'work'), "class_grading.worker"),
        **dict.fromkeys(('UsageError',), "errors"),
    },
    "grading": {
        **dict.fromkeys(('SandboxUnavailable',), "errors"),
        **dict.fromkeys(('TolerantNotebookExporter', 'UNREADABLE_WHAT_TO_DO'), "exporters.notebook"),
        **dict.fromkeys(('GRADED_MARKER', 'adopt_renamed_notebook', 'mark_graded', 'prepare_submission', 'secure_graded_folder'), "hooks.submission"),
        **dict.fromkeys(('KERNEL_FOLDER', 'lock_submissions_while_graded', 'remove_if_unfinished', 'remove_kernel_folders', 'remove_unfinished'), "hooks.unfinished"),
        **dict.fromkeys(('log',), "logs"),
        **dict.fromkeys(('GRADER_LIMITS', 'QUEUED_MESSAGES', 'ResilientExecute', 'capped_client', 'refuse_without_sandbox'), "preprocessors.execute"),
        **dict.fromkeys(('CheckCellMetadata', 'OnceCheckedSchemaValidator'), "preprocessors.metadata"),
    },
    "inert": "preprocessors.inert",
    "judge": {
        **dict.fromkeys(('SetupError',), "errors"),
        **dict.fromkeys(('Check', 'HIDDEN_BEGIN', 'HIDDEN_END', 'RECORD', 'hidden_lines', 'routed_checks', 'score_of'), "judge.checks"),
        **dict.fromkeys(('Judge', 'PRINT_OPTION_TYPES'), "judge.judge"),
        **dict.fromkeys(('elide',), "judge.messages"),
        **dict.fromkeys(('AGENT_SOURCE', 'Abort', 'Fallback', 'KernelFunction', 'PRINT_OPTIONS', 'ReplyTooLarge', 'SERVE_CODE', 'StudentError', 'WARNING_TYPES', 'answer_functions', 'cell_label', 'free_names', 'in_folder', 'judged_source', 'kernel_code', 'magic_fallbacks', 'predicted_calls', 'reference_namespace', 'setup_namespace', 'setup_problem', 'test_filters', 'trusted_fallbacks', 'trusted_setup'), "judge.setup"),
    },
    "kernel": {
        **dict.fromkeys(('CPUTimeLimitExceeded', 'SandboxError'), "errors"),
        **dict.fromkeys(('INHERITED_ENVIRONMENT', 'KERNEL_PACKAGES', 'NEVER_INHERITED', 'SYSTEM_FILES', 'SYSTEM_PATHS', 'connection_folder', 'enter_sandbox', 'inherited', 'never_inherited', 'read_only_problem', 'sandbox_command', 'sandbox_environment'), "sandbox.bwrap"),
        **dict.fromkeys(('cap_processes', 'process_cap_problem', 'remove_stale_cgroups'), "sandbox.cgroup"),
        **dict.fromkeys(('LAUNCH', 'launcher_command'), "sandbox.command"),
        **dict.fromkeys(('apply_limits', 'end_strays', 'limit_cpu_per_cell'), "sandbox.inside"),
        **dict.fromkeys(('GradingKernelSpecManager', 'KERNEL_NAME'), "sandbox.kernelspec"),
        **dict.fromkeys(('INTERRUPT_CAUGHT', 'Options', 'main', 'parse_options', 'without_debugger'), "sandbox.launcher"),
        **dict.fromkeys(('Limits', 'SANDBOX_MODES', 'limit_memory'), "sandbox.limits"),
        **dict.fromkeys(('bind_to_grader', 'die_with_parent', 'watch_grader'), "sandbox.parent"),
        **dict.fromkeys(('PROBE_SECONDS', 'SANDBOX_ADVICE', 'UNSANDBOXED_MEANS', '_TRIAL', 'sandbox_problem'), "sandbox.probe"),
    },
    "kernel_link": "judge.link",
    "magics": "judge.magics",
    "release": "preprocessors.release",
    "restore": "preprocessors.restore",
    "student_folder": {
        **dict.fromkeys(('UnsafeEntry',), "errors"),
        **dict.fromkeys(('MAX_DEPTH', 'MAX_FILES', 'MAX_FOLDER_MB', 'Scan', 'log', 'not_a_folder', 'open_folder_inside', 'open_regular', 'plain_path', 'rebuild', 'remove_entry', 'remove_unsafe', 'scan', 'shadowed_module', 'why_unsafe', 'write_new'), "untrusted.folder"),
    },
    "terminal": "untrusted.terminal",
}

_warned = []


def new_module(old, name):
    """The dotted path of the module that now holds `name` of old module `old` (both without the package)."""
    moved = OLD_PATHS[old]
    return f"{PACKAGE}.{moved if isinstance(moved, str) else moved[name]}"


def _say_moved(old_path, new_path):
    if not _warned:
        _warned.append(old_path)
        warnings.warn(f"{old_path} is now {new_path}: change it in your nbgrader_config.py (or import). The engine's "
                      f"old dotted paths still work for now; every one and its new name: docs/engine.md, \"Old "
                      "dotted paths\", or hardened_grading.moved.OLD_PATHS.", FutureWarning, stacklevel=3)


def old_attribute(old, name):
    """`name` of old module `old` (without the package): the new object, said once."""
    moved = OLD_PATHS[old]
    if isinstance(moved, str) or name in moved:
        target = new_module(old, name)
    else:  # a name the old module had but did not define (an import of its own): any of its parts that has it
        target = next((f"{PACKAGE}.{part}" for part in dict.fromkeys(moved.values())
                       if hasattr(importlib.import_module(f"{PACKAGE}.{part}"), name)), None)
        if target is None:
            raise AttributeError(f"module '{PACKAGE}.{old}' has no attribute {name!r}")
    value = getattr(importlib.import_module(target), name)
    _say_moved(f"{PACKAGE}.{old}.{name}", f"{target}.{name}")
    return value


class _OldModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return old_attribute(self.__name__.rpartition(".")[2], name)

    def __dir__(self):
        moved = OLD_PATHS[self.__name__.rpartition(".")[2]]
        return sorted(moved) if not isinstance(moved, str) else dir(importlib.import_module(f"{PACKAGE}.{moved}"))


class _OldPathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``hardened_grading.OLD`` for an old module that is no longer a file or folder of the package."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, old = fullname.rpartition(".")
        if package != PACKAGE or old not in OLD_PATHS or old in _STILL_THERE:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return _OldModule(spec.name)

    def exec_module(self, module):
        module.__doc__ = f"Moved: see hardened_grading.moved.OLD_PATHS[{module.__name__.rpartition('.')[2]!r}]."


#: Old names that are a module or package of today's engine too (``hardened_grading.judge``): their old names are
#: served by that package's ``__getattr__`` (:func:`old_attribute`), not by the finder.
_STILL_THERE = {"judge"}


def install():
    """Let old dotted paths be imported (done once, when the package is imported)."""
    if not any(isinstance(finder, _OldPathFinder) for finder in sys.meta_path):
        sys.meta_path.append(_OldPathFinder())
