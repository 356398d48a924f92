"""nbgrader's convert hooks around one submission (``Autograde.pre_convert_hook`` and ``post_convert_hook``).

- :func:`prepare_submission`: the submission made plain (links, FIFOs and the like removed), and a notebook
  submitted under another name (``exercises (1).ipynb``) adopted under the released name;
- :func:`mark_graded`: the done-marker, which tells a finished submission from a half-graded one.
"""

import os
import shutil
from pathlib import Path

from .. import locks
from ..cells import course_root
from ..logs import log
from ..untrusted import folder as student_folder

#: Notebooks that :func:`prepare_submission` removed from ``submitted/`` (a link, a FIFO): absolute path -> what it was.
_removed_at_start = {}


def prepare_submission(assignment, student, notebooks):
    """Pre-convert hook of ``nbgrader autograde``: make the submission's folder in ``submitted/`` safe to read,
    then :func:`adopt_renamed_notebook`.

    The folder is untrusted input (an LMS download, files placed by hand, links that ``nbgrader collect``
    kept): every entry that is not a regular file with one link, or a folder, is removed and logged
    (:func:`_make_plain`), before nbgrader copies anything from it. So is a student's folder, or the
    submission's folder, that is itself a link. A notebook removed so is graded as an unreadable one: 0 points,
    the reason in its feedback.
    """
    if not notebooks:
        return
    submission = Path(notebooks[0]).absolute().parent
    folder_was, removed = _make_plain(submission, "submitted")
    for path in notebooks:
        why = removed.get(os.path.relpath(os.path.abspath(path), submission))
        if folder_was or why:
            _removed_at_start[os.path.abspath(path)] = folder_was or f"it was {why}; it was removed, not read"
    if not folder_was:
        adopt_renamed_notebook(assignment, student, notebooks)


def secure_graded_folder(assignment, student, notebooks):
    """Pre-convert hook of ``nbgrader generate_feedback``: remove from the graded folder
    (``autograded/STUDENT/ASSIGNMENT``), before nbgrader copies it into the feedback, every entry that is
    not a regular file with one link, or a folder (:func:`_make_plain`). Folders graded by this engine hold
    none (:meth:`ResilientExecute.preprocess`); one graded otherwise may."""
    if notebooks:
        _make_plain(Path(notebooks[0]).absolute().parent, "graded")


def _make_plain(folder, what):
    """Make ``STUDENT/ASSIGNMENT`` `folder` (`what`: submitted, graded) hold plain entries only: a student's
    folder or `folder` that is itself a link is removed (the link, not what it points to), and so is every
    entry of `folder` that is not a regular file with one link or a folder; each is logged. Return why `folder`
    itself was removed (or None), and ``{relative path: why}`` of the entries removed in it."""
    who = student_folder.shown(folder.parent.name)
    for level in (folder.parent, folder):
        why = student_folder.not_a_folder(level)
        if why:
            log.error("hardened_grading: student %r: the %s folder %s is %s: removed, not followed", who, what,
                      student_folder.shown(level), why)
            student_folder.remove_entry(level)
            return f"the folder it is in, {level.name}, was {why}", {}
    return None, dict(student_folder.remove_unsafe(folder, folder.parent.name, f"the {what} file"))


def adopt_renamed_notebook(assignment, student, notebooks):
    """Pre-convert hook: grade a lone, renamed notebook as the assignment's one notebook.

    It acts only when the released assignment has exactly one notebook, and the submission has exactly one
    notebook, under another name (``exercises (1).ipynb``): that one is copied to the released name, and the
    file the student sent is left as it is. Anything else (several notebooks, a known name among them) is
    graded as nbgrader grades it. `notebooks` is nbgrader's own list of the submission's notebooks; it is
    updated in place.
    """
    paths = [Path(p) for p in notebooks]
    released = sorted(path.name for path in (course_root() / "release" / str(assignment)).glob("*.ipynb"))
    if len(paths) != 1 or len(released) != 1 or paths[0].name == released[0]:
        return
    student = paths[0].parents[1].name  # nbgrader passes the --student pattern, not the id
    adopted = paths[0].with_name(released[0])
    shutil.copyfile(paths[0], adopted)
    log.warning("hardened_grading: student %r submitted %r instead of %r: it is graded as %s (the original is kept)",
                student, paths[0].name, released[0], adopted.name)
    notebooks[:] = [str(adopted)]


GRADED_MARKER = ".hardened-grading-done"


def mark_graded(assignment, student, notebooks):
    """Post-convert hook: mark a submission's grading as finished, then let go of its lock.

    A grading run that is interrupted (Ctrl-C, a reboot) leaves a half-made folder in
    ``autograded/``, which nbgrader would skip on the next run; :func:`remove_unfinished`
    removes such folders first, so that running ``nbgrader autograde`` again finishes the class. The
    submission's lock (:mod:`hardened_grading.locks`), held since before nbgrader looked at the folder
    (:func:`lock_submissions_while_graded`), tells a live run's folder from a dead one's; once the marker is
    written, it is let go.
    """
    if not notebooks:
        return
    student = Path(notebooks[0]).absolute().parents[1].name  # nbgrader passes the --student pattern, not the id
    folder = course_root() / "autograded" / student / assignment
    if student_folder.plain_path(course_root(), folder / GRADED_MARKER) and folder.is_dir():
        student_folder.write_new(folder / GRADED_MARKER, "graded\n")  # never through a link
    locks.let_go(locks.lock_file(folder))
