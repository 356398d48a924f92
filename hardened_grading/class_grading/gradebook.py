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

from pathlib import Path

from ..errors import UsageError


def gradebook_url(config, course, override=None, sqlite_timeout=60.0):
    """The gradebook's SQLAlchemy URL: `override`, else the config's ``CourseDirectory.db_url``, else
    nbgrader's default SQLite file in the course; a SQLite URL gets a busy ``timeout`` unless it has one."""
    from sqlalchemy.engine import make_url

    url = override or config.CourseDirectory.get("db_url") or f"sqlite:///{Path(course).resolve() / 'gradebook.db'}"
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and "timeout" not in parsed.query:
        parsed = parsed.update_query_dict({"timeout": f"{sqlite_timeout:g}"})
    return parsed.render_as_string(hide_password=False)



def prepare_gradebook(url, course_id, assignment):
    """Make the gradebook's tables and course once, before the workers start (two workers making them
    at once would race), and check that the assignment is in it."""
    from nbgrader.api import Gradebook, MissingEntry

    try:
        with Gradebook(url, course_id) as gradebook:
            gradebook.find_assignment(assignment)
    except MissingEntry:
        raise UsageError(f"the gradebook has no assignment {assignment!r}: run `nbgrader generate_assignment "
                         f"{assignment}` in the course directory first") from None
    except Exception as error:  # SQLAlchemy's OperationalError and the like: a server that is down, a bad URL
        raise UsageError(f"cannot open the gradebook {safe_url(url)}: {type(error).__name__}: "
                         f"{str(error).strip().splitlines()[0]}") from None



def safe_url(url):
    """`url` without its password, for messages and logs."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
