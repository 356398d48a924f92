"""Hardened autograding for any nbgrader course, plugged into nbgrader through its configuration hooks.

``nbgrader_config.py`` installs these pieces; ``nbgrader autograde ASSIGNMENT`` stays the command.

- :class:`TolerantNotebookExporter` (``Autograde.exporter_class``): a submission that cannot be
  read (corrupt, truncated, empty, not JSON) is graded as the blank release with a first cell
  that says why, so it is recorded with 0 points and the rest of the class is graded.
- :func:`adopt_renamed_notebook` (``Autograde.pre_convert_hook``): a student who submitted the
  assignment's one notebook under another name (``exercises (1).ipynb``) has it graded under the
  released name; the file they sent is left as it is.
- :class:`hardened_grading.preprocessors.restore.RestoreReleaseCells` (first of ``Autograde.sanitize_preprocessors``):
  the graded notebook is the student's own, run once from top to bottom as stock nbgrader runs it,
  with the release's locked cells restored; deleted, edited, reordered or duplicated test cells and
  changed cell metadata therefore cannot change what is run.
- :class:`ResilientExecute` (in place of ``Execute`` in ``Autograde.autograde_preprocessors``):
  runs the student's cells in the kernel ``hardened-grading`` (:mod:`hardened_grading.sandbox`,
  sandboxed and memory-limited) and the test cells in this process, out of the student code's
  reach (:mod:`hardened_grading.judge`). A cell that kills the kernel or exhausts its memory limit
  costs only the tests that need it.
- :func:`mark_graded` (``Autograde.post_convert_hook``) and :func:`remove_unfinished` (which
  ``nbgrader_config.py`` calls when ``nbgrader autograde`` starts): a folder that a run left half-graded is
  graded again by the next run, and a folder that a live run is grading is never touched, whatever the
  assignment. Importing this module has nbgrader's Autograde hold each submission's lock while it grades it
  (:func:`lock_submissions_while_graded`, :mod:`hardened_grading.locks`).
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
