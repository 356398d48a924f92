"""The gradebook a run writes to: nbgrader's ``CourseDirectory.db_url`` (SQLite, or PostgreSQL shared by shards)."""

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
