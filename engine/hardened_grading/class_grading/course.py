"""What the class report, the grade table and Slurm grading read of a course when not told: its assignment, its
notebook, its parts and its gradebook, all from nbgrader's own layout and ``nbgrader_config.py``.

- the assignment: the only one in ``source/`` (else ``release/``);
- the notebook: the only one of that assignment there, as nbgrader names it (the file's name without ``.ipynb``);
- the parts: ``c.FeedbackSummary.part_pattern`` and ``c.FeedbackSummary.part_name``, the feedback's own (empty: each
  test cell is a part of its own, :func:`hardened_grading.summary.each_test_cell`);
- the gradebook: ``c.CourseDirectory.db_url``, else the course's ``gradebook.db``
  (:func:`~.gradebook.gradebook_url`).

A course with several assignments or notebooks is told which by its command's options, or by its own wrapper.
"""

import re
from pathlib import Path

from ..cells import CONFIG_FILE, course_root
from ..errors import UsageError
from ..nbgrader_app import load_config
from ..summary import part_by_pattern
from .gradebook import gradebook_url

PART_NAME = "part"  #: what a part is called when the course's FeedbackSummary.part_name says nothing


def course_folder(course=None):
    """The course directory that holds `course` (default: the working folder), checked to have an
    ``nbgrader_config.py``; else :class:`UsageError`."""
    folder = course_root(course)
    if not (folder / CONFIG_FILE).exists():
        raise UsageError(f"{folder}: not a course directory (no {CONFIG_FILE}); run this in the course directory, "
                         "or give the course's folder")
    return folder


def _assignment_folders(course):
    """The folders of ``source/`` (else ``release/``) that hold a notebook, by name."""
    for top in ("source", "release"):
        found = sorted(p.name for p in (Path(course) / top).glob("*") if p.is_dir() and any(p.glob("*.ipynb")))
        if found:
            return top, found
    return "source", []


def default_assignment(course):
    """The course's only assignment (a folder of ``source/``, else of ``release/``, with a notebook in it).

    Raises
    ------
    UsageError
        When there is none, or more than one: it names them and says to give ``--assignment``.
    """
    top, found = _assignment_folders(course)
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageError(f"no assignment in {Path(course) / top}: give --assignment, as nbgrader names it")
    raise UsageError(f"{len(found)} assignments in {Path(course) / top} ({', '.join(found)}): give --assignment")


def default_notebook(course, assignment):
    """The only notebook of `assignment` in ``source/`` (else ``release/``), as nbgrader names it: ``problem1`` for
    ``problem1.ipynb``.

    Raises
    ------
    UsageError
        When there is none, or more than one: it names them and says to give ``--notebook``.
    """
    for top in ("source", "release"):
        found = sorted(p.stem for p in (Path(course) / top / assignment).glob("*.ipynb"))
        if len(found) == 1:
            return found[0]
        if found:
            raise UsageError(f"{len(found)} notebooks in {Path(course) / top / assignment} ({', '.join(found)}): "
                             "give --notebook")
    raise UsageError(f"no notebook of {assignment} in {Path(course) / 'source' / assignment}: give --assignment "
                     "(one in source/), or --notebook")


def configured_parts(course):
    """``(part_pattern, part_name)`` of the course's ``FeedbackSummary``: the parts its feedback shows."""
    settings = load_config(course).FeedbackSummary
    return settings.get("part_pattern", ""), settings.get("part_name", "") or PART_NAME


def part_function(pattern):
    """``part_of(grade id)`` of a part `pattern` (:func:`hardened_grading.summary.part_by_pattern`); a pattern that is
    not a regular expression raises :class:`UsageError`, saying so."""
    try:
        return part_by_pattern(pattern)
    except re.error as error:
        raise UsageError(f"the part pattern {pattern!r} is not a regular expression ({error}): give another "
                         "--part-pattern, or mend c.FeedbackSummary.part_pattern in nbgrader_config.py") from None


def gradebook_of(course, db_url=None):
    """The course's gradebook URL, as ``hardened-grade`` finds it: `db_url`, else ``CourseDirectory.db_url`` of its
    nbgrader_config.py (a PostgreSQL gradebook shared by machines), else its ``gradebook.db``."""
    return gradebook_url(load_config(course), course, db_url)
