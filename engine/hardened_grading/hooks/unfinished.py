"""Runs that did not finish: their half-written folders removed, and a live run's submissions left alone.

:func:`remove_unfinished` runs when ``nbgrader autograde`` starts (``nbgrader_config.py``); a folder that a live run
holds locked (:func:`lock_submissions_while_graded`, :mod:`hardened_grading.locks`) is never touched.
"""

import functools
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .. import locks, processes
from ..cells import course_root
from ..logs import _say_once, log
from ..untrusted import folder as student_folder
from .submission import GRADED_MARKER

#: The start of a kernel's private folder's name, in the temporary folder: then the grader's pid, a dash, random.
KERNEL_FOLDER = "hardened-grading-kernel-"


def remove_kernel_folders(pid=None):
    """Remove the kernels' private folders (connection file, sockets) that graders left: those of graders that
    are gone, or, given `pid`, that grader's (a worker about to end). A grader killed outright cannot remove
    its own; the next run does."""
    for folder in Path(tempfile.gettempdir()).glob(f"{KERNEL_FOLDER}*-*"):
        owner = folder.name.removeprefix(KERNEL_FOLDER).partition("-")[0]
        if owner.isdigit() and (int(owner) == pid if pid is not None else processes.ended(owner)):
            shutil.rmtree(folder, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def _remove_orphaned_kernel_folders():
    """:func:`remove_kernel_folders` of graders that are gone, once per grading run, before its first kernel."""
    if sys.platform.startswith("linux"):  # it reads /proc
        remove_kernel_folders()


def remove_unfinished(root=None, students=None):
    """Remove the ``autograded/STUDENT/ASSIGNMENT`` folders of the course at `root` that a run left half-graded
    (:func:`remove_if_unfinished`): never one that a live run is grading, of any assignment, by any command.

    `students` (ids) limits it to theirs: a shard of a class (:mod:`hardened_grading.class_grading`) looks at its own
    students only, which holds even on a shared file system whose locks do not reach across machines.
    """
    for folder in sorted(course_root(root).glob("autograded/*/*")):
        if folder.parent.name.startswith(".") or folder.name.startswith("."):
            continue  # not a submission: a kernel's staging folder (hardened_grading.sandbox.ahead), a lock file
        if students is not None and folder.parent.name not in students:
            continue
        if folder.is_dir() and not folder.is_symlink():
            remove_if_unfinished(folder)


def remove_if_unfinished(folder):
    """Remove the graded folder `folder` (``autograded/STUDENT/ASSIGNMENT``) if its grading never finished (no
    done-marker) and no live run is grading it (nobody holds its lock: :mod:`hardened_grading.locks`); say so.
    Return whether it was removed. Whatever it holds: a run killed before it wrote the notebook leaves the
    files it copied, which nbgrader would take for a graded submission and skip."""
    if (folder / GRADED_MARKER).exists():
        return False
    path = locks.lock_file(folder)
    try:
        fd = locks.try_lock(path)
    except OSError as error:  # a file system without locks, a folder this user may not write
        _say_once(log, f"hardened_grading: {folder} has no done-marker, and whether a live run is grading it cannot "
                       f"be told (its lock file {path.name}: {error}): it is left as it is. If no run is grading it, "
                       "remove it, or grade it with --force")
        return False
    if fd is None:
        who = locks.holder(path)  # once per process: nbgrader loads nbgrader_config.py, which calls this, thrice
        _say_once(log, f"hardened_grading: {folder} is being graded by a live run{f' ({who})' if who else ''}: "
                       "it is left alone")
        return False
    try:
        return _remove_unfinished_folder(folder)
    finally:
        locks.release(fd)


def _remove_unfinished_folder(folder):
    """Remove `folder` if it has no done-marker, saying so; the caller holds its lock. Return whether it did."""
    if not folder.is_dir() or (folder / GRADED_MARKER).exists():  # finished since it was looked at
        return False
    log.warning("hardened_grading: %s was left half-graded by an interrupted run: it is graded again", folder)
    student_folder.remove_entry(folder)
    return True


def lock_submissions_while_graded():
    """Have nbgrader's ``Autograde`` hold each submission's lock (:mod:`hardened_grading.locks`) while it grades
    it, in every process that grades (``nbgrader autograde``, a ``hardened-grade`` worker); once per process.

    Before nbgrader looks at a submission's graded folder (``Autograde.init_destination``, which skips one that
    exists and, with ``--force``, removes it), the run takes the submission's lock, waiting, and logging for whom,
    while another run holds it; then it removes the folder if a run that ended left it half-graded
    (:func:`_remove_unfinished_folder`), and nbgrader goes on as it does. :func:`mark_graded` lets go of the lock
    once the folder is marked graded; a submission that is skipped lets go at once; one whose grading fails, when
    the run comes to the next or ends. nbgrader's pre-convert hook comes too late for this: after
    ``init_destination``.
    """
    from nbgrader.converters import Autograde

    if getattr(Autograde.init_destination, "holds_submission_locks", False):
        return
    init_destination, convert_notebooks = Autograde.init_destination, Autograde.convert_notebooks

    @functools.wraps(init_destination)
    def locked_init_destination(self, assignment_id, student_id):
        _let_go_of_submission(self)  # the one before, if its grading failed (mark_graded lets go of one graded)
        if student_id in (self.coursedir.student_id_exclude or "").split(","):
            return init_destination(self, assignment_id, student_id)
        folder = Path(self._format_dest(assignment_id, student_id)).absolute()
        path = locks.lock_file(folder)

        waited = []

        def say_waiting(who):
            waited.append(time.monotonic())
            self.log.warning("hardened_grading: student %r, assignment %r: another run is grading it (%s): waiting "
                             "for it to finish", student_id, assignment_id, who or "its pid unknown")

        try:
            locks.hold(path, say_waiting)
            if waited:
                self.log.warning("hardened_grading: student %r, assignment %r: the other run let go of it after %.0f s: nbgrader "
                                 "skips it if that run graded it (unless --force), or grades it", student_id,
                                 assignment_id, time.monotonic() - waited[0])
        except KeyboardInterrupt:  # nbgrader's own handler of Ctrl-C would remove the folder: the other run's
            raise SystemExit(f"hardened_grading: interrupted while waiting for another run to finish grading student "
                             f"{student_id!r}, assignment {assignment_id!r}; its folder is left to it") from None
        except OSError as error:
            self.log.warning("hardened_grading: student %r, assignment %r: graded without its lock (%s: %s): another "
                             "run that starts now may take its folder for one left half-graded", student_id,
                             assignment_id, path, error)
            return init_destination(self, assignment_id, student_id)
        self.hardened_grading_lock = path
        _remove_unfinished_folder(folder)
        go_on = init_destination(self, assignment_id, student_id)
        if not go_on:
            _let_go_of_submission(self)
        return go_on

    def convert_notebooks_then_let_go(self):
        try:
            return convert_notebooks(self)
        finally:
            _let_go_of_submission(self)

    locked_init_destination.holds_submission_locks = True
    Autograde.init_destination = locked_init_destination
    Autograde.convert_notebooks = convert_notebooks_then_let_go


def _let_go_of_submission(converter):
    """Let go of the lock of the submission that nbgrader's Autograde `converter` graded last, if it still holds it."""
    path, converter.hardened_grading_lock = getattr(converter, "hardened_grading_lock", None), None
    if path is not None:
        locks.let_go(path)

