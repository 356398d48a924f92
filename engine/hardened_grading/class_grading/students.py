"""Which students a run grades: the submitted ones that match ``--student`` patterns, and one shard of them."""

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
