"""Run nbgrader from Python: its commands in a subprocess, or its API in this process, with a course's
configuration loaded as nbgrader loads it."""

import fnmatch
import glob
import os
import subprocess
import sys
from pathlib import Path


def nbgrader_env(**extra):
    env = dict(os.environ)
    # nbgrader runs `alembic` in a subprocess: put this Python's bin/ first on PATH.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def run_nbgrader(cwd, *args, env=None, capture=True, timeout=1800):
    """Run ``nbgrader ARGS`` in `cwd` with this Python; return the CompletedProcess.

    With `capture`, its output is kept as text in ``stdout`` and ``stderr``; otherwise it
    goes to the terminal.
    """
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=cwd, env=env or nbgrader_env(), capture_output=capture, text=True, timeout=timeout,
    )


def load_config(course):
    """The course's ``nbgrader_config.py``, loaded as nbgrader loads it, with the course as its root."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    return config


def quiet_dependency_warnings():
    """Silence the warnings of nbgrader's dependencies that mean nothing to an instructor, each by its
    category and message. ``nbgrader_config.py`` calls this, so every nbgrader command of the course is
    quiet; :func:`nbgrader_api` calls it too.

    - nbgrader's gradebook (``nbgrader/api.py``) adds a new submission to its student and assignment in a
      way SQLAlchemy 2 warns about on every autograde: ``SAWarning: Object of type <SubmittedAssignment>
      not in session, add operation along 'Student.submissions' will not proceed``, three per submission.
      The rows are written all the same (nbgrader's own code, not ours to fix).
    """
    import warnings

    try:
        from sqlalchemy.exc import SAWarning
    except ImportError:  # no SQLAlchemy, no such warning
        return
    warnings.filterwarnings("ignore", category=SAWarning, message=SA_SUBMISSION_WARNING)


#: SQLAlchemy's warning about nbgrader's way of adding a submission (a regular expression, from its start).
SA_SUBMISSION_WARNING = r"Object of type <Submitted\w+> not in session, add operation along '\w+\.submissions'"


def nbgrader_api(config):
    """nbgrader's Python API (``NbGraderAPI``) on the course that `config` (:func:`load_config`) is of.

    nbgrader is imported here, once per process: its commands are then method calls, with no new
    start-up each.
    """
    quiet_dependency_warnings()
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def is_ignored(filename, ignore_globs=None):
    """nbgrader's ``utils.is_ignored``, in time linear in the files of a folder.

    nbgrader lists `filename`'s whole folder (``glob.glob`` of each pattern) for every file it checks, so that
    copying a folder of n files (``autograde`` from ``submitted/``, ``generate_feedback`` from ``autograded/``)
    takes time in n squared: 5,000 small files, 26 s of generate_feedback; a student's 100,000, hours. The
    verdict is the same: a pattern without a folder part matches the file's name as ``glob`` matches it
    (``fnmatch``, case as the platform's, and a name starting with a dot only by a pattern that does); a
    pattern with a folder part is left to nbgrader's own way.
    """
    if ignore_globs is None:
        return False
    name = os.path.basename(filename)
    for pattern in ignore_globs:
        if os.sep in pattern or (os.altsep and os.altsep in pattern):
            if _nbgrader_is_ignored(filename, [pattern]):
                return True
        elif not glob.has_magic(pattern):
            if name == pattern:
                return True
        elif (not name.startswith(".") or pattern.startswith(".")) and fnmatch.fnmatch(name, pattern):
            return True
    return False


_nbgrader_is_ignored = None


def linear_ignore_globs():
    """Put :func:`is_ignored` in place of nbgrader's (``nbgrader.utils.is_ignored``, which its ``find_all_files``
    calls), once per process."""
    global _nbgrader_is_ignored
    import nbgrader.utils

    if _nbgrader_is_ignored is None:
        _nbgrader_is_ignored = nbgrader.utils.is_ignored
        nbgrader.utils.is_ignored = is_ignored
