"""A submission's ``timestamp.txt`` that cannot be read as a time: a warning, and the submission graded.

nbgrader reads ``timestamp.txt`` beside a submission (``CourseDirectory.get_existing_timestamp``) when it decides
whether to grade it again (``init_destination``) and when it records it in the gradebook (``Autograde
.init_assignment``). An empty file is a warning there; one it cannot parse calls ``self.fail``, which
``CourseDirectory`` does not have: ``'CourseDirectory' object has no attribute 'fail'``, and the submission is not
graded. :func:`tolerate_unreadable_timestamps` puts :func:`existing_timestamp` in its place: a file that is not a
time (or not text, or not a regular file) is a warning that names it and says what to do, and the submission is
graded without a submission time, as one without ``timestamp.txt`` is (no late penalty).
"""

import functools
import os

from ..judge.messages import elide
from ..untrusted import folder as student_folder

TIMESTAMP_FILE = "timestamp.txt"
MOST_BYTES = 1000  #: read of a timestamp file: nbgrader's own are about 30
#: What an instructor does about a timestamp file that cannot be read, as nbgrader collect writes one.
WHAT_TO_DO = ("put the time the student submitted in it, as nbgrader writes it (2026-11-20 10:00:00.000000 UTC), "
              "and grade the submission again (--force) for its late penalty")


def timestamp_text(path):
    """The text of the timestamp file at `path`, without blank space at its ends.

    Raises
    ------
    OSError
        When it is not a regular file with one link (a link, a FIFO: :func:`~..untrusted.folder.open_regular`), or
        cannot be read.
    UnicodeDecodeError
        When it is not UTF-8 text.
    """
    with student_folder.open_regular(path) as stream:
        return stream.read(MOST_BYTES).decode("utf-8").strip()


def read_timestamp(path, log):
    """The time in the timestamp file at `path`, as nbgrader's ``parse_utc`` reads it (UTC, without time zone), or
    None when there is no such file, it is empty, or it cannot be read as a time: each of those last, a warning to
    `log` naming the file (and, when it is not a time, what to do)."""
    from nbgrader.utils import parse_utc

    if not os.path.lexists(path):
        return None
    try:
        text = timestamp_text(path)
        if not text:
            log.warning("Empty timestamp file: %s", path)  # nbgrader's own words
            return None
        return parse_utc(text)
    except (OSError, ValueError, OverflowError) as error:  # not UTF-8 and dateutil's ParserError: ValueErrors
        log.warning("The timestamp file %s cannot be read as a time (%s: %s): the submission is graded without a "
                    "submission time, so with no late penalty. To fix it, %s.", path, type(error).__name__,
                    elide(error, 200), WHAT_TO_DO)
        return None


def existing_timestamp(coursedir, dest_path):
    """``CourseDirectory.get_existing_timestamp`` that never fails: :func:`read_timestamp` of ``timestamp.txt`` in
    the folder `dest_path`."""
    return read_timestamp(os.path.join(dest_path, TIMESTAMP_FILE), coursedir.log)


def tolerate_unreadable_timestamps():
    """Put :func:`existing_timestamp` in place of nbgrader's ``CourseDirectory.get_existing_timestamp``, once per
    process."""
    from nbgrader.coursedir import CourseDirectory

    if getattr(CourseDirectory.get_existing_timestamp, "tolerant", False):
        return

    @functools.wraps(CourseDirectory.get_existing_timestamp)
    def get_existing_timestamp(self, dest_path):
        return existing_timestamp(self, dest_path)

    get_existing_timestamp.tolerant = True
    CourseDirectory.get_existing_timestamp = get_existing_timestamp
