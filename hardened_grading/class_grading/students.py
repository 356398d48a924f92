"""Grade a whole class at once: submissions graded in parallel, with progress, resumable, shardable.

    hardened-grade ps1                     # every submission of ps1 in submitted/, one worker per core
    hardened-grade ps1 --jobs 2 --student 's0*' --student s123,s124
    hardened-grade ps1 --force             # grade again those already graded
    hardened-grade ps1 --shard 3/8         # the 4th of 8 equal parts of the class (one machine's share)

A course may ship it under its own name, with its assignment as the default (``posenc-grade`` is
``main(program="posenc-grade", default_assignment="posenc")``).

Run it in the course directory (or give ``--course``). It is ``nbgrader autograde ASSIGNMENT`` for many
students at once, and nothing else: each worker process imports nbgrader once and calls its own
``Autograde`` (through ``NbGraderAPI.autograde``) for one student after another, with the course's
``nbgrader_config.py``, so every submission is graded exactly as a serial run grades it, sandbox and
hardening included, into the same ``autograded/`` folders and gradebook.

- A submission that crashes its worker costs only itself: the worker is replaced, and the submission is
  reported as failed.
- Ctrl-C, or a run killed part-way, leaves the submissions graded so far; running the same command again
  finishes the class (half-graded folders are removed first, as ``nbgrader autograde`` does here), and
  skips what was graded unless ``--force``.
- Another run may grade in the same course at once (``nbgrader autograde``, another ``hardened-grade``, of any
  assignment): each worker holds the lock of the submission it grades (:mod:`hardened_grading.locks`), so no
  clean-up removes a live run's folder, and two runs that come to the same submission take turns.
- The gradebook is nbgrader's ``CourseDirectory.db_url``: the course's SQLite file by default, which every
  worker writes to with a busy timeout (``GradeClass.sqlite_timeout``), or a PostgreSQL database
  (``postgresql://...``) shared by shards on several machines.

A progress bar (count, rate, time left, of the submissions graded: skipped ones take no time) on a terminal;
otherwise one line per submission. At the end: how many were graded, skipped and failed (and why); every
graded submission that could not be read (graded as the blank release), had a cell that timed out, crashed
its kernel or ran out of memory, with the cell and the grader's message (read from its graded notebook);
and where the log is. Exit code 0 when none failed,
1 when some did, 2 when nothing could be graded.
"""

import fnmatch
from pathlib import Path

from ..errors import UsageError


def parse_shard(text):
    """``"i/N"`` -> ``(i, N)``, for shard `i` (counted from 0) of `N`."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text}: give it as INDEX/COUNT, e.g. 0/4 for the first of 4 shards") from None
    if not 0 <= index < count:
        raise UsageError(f"--shard {text}: INDEX counts from 0 and is below COUNT (0/{count} to {count - 1}/{count})")
    return index, count



def shard_of(students, index, count):
    """Part `index` of `count` of the sorted `students`: as equal in size as can be, contiguous, and the
    same on every machine that lists the same class."""
    students = sorted(students)
    return students[index * len(students) // count:(index + 1) * len(students) // count]



def select_students(course, assignment, patterns=()):
    """The students with a submission of `assignment` in ``submitted/``, sorted; `patterns` (nbgrader's
    ``--student`` globs, each may be a comma-separated list) keep only those that match one."""
    folders = Path(course).glob(f"submitted/*/{assignment}")
    submitted = sorted(folder.parent.name for folder in folders if folder.is_dir())
    wanted = [p.strip() for pattern in patterns for p in pattern.split(",") if p.strip()]
    if not wanted:
        return submitted
    return [student for student in submitted if any(fnmatch.fnmatchcase(student, p) for p in wanted)]
