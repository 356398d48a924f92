"""``nbgrader release_feedback`` that releases everyone's feedback it can, whoever comes before them.

nbgrader's release_feedback reads ``timestamp.txt`` and ``submission_secret.txt`` beside each student's
feedback (``feedback/STUDENT/ASSIGNMENT/``), which come from the submission: ``nbgrader submit`` writes
them and ``nbgrader collect`` keeps them. A submission put in ``submitted/STUDENT/ASSIGNMENT/`` by hand
(from an LMS, say: docs/instructors/workflow.md, step 4) has neither, and nbgrader stops at it
with a FileNotFoundError: nobody after it alphabetically gets feedback.

:class:`ReleaseFeedback` (``c.ExchangeFactory.release_feedback`` in ``nbgrader_config.py``) instead
releases every feedback file it can:

- without ``timestamp.txt``, the feedback is released all the same (the timestamp is only logged);
- without ``submission_secret.txt``, the submission did not come through the exchange, and its
  student cannot fetch feedback from it (``nbgrader fetch_feedback`` finds feedback by the secret its
  own submission kept): it is named, with the file to hand to the student, and skipped;
- any other error with one student's feedback is logged, and the others are released; the command
  then fails, naming them.
"""

import glob
import os
import re
import shutil

from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash


def _read(path):
    with open(path) as handle:
        return handle.read()


class ReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release_feedback (the default exchange), tolerant of each submission's files."""

    def copy_files(self):
        exclude = set(self.coursedir.student_id_exclude.split(",")) if self.coursedir.student_id_exclude else set()
        pattern = re.escape(os.path.sep).join([
            self.coursedir.format_path(self.coursedir.feedback_directory, "(?P<student_id>.*)",
                                       self.coursedir.assignment_id, escape=True),
            "(?P<notebook_id>.*).html"])
        by_hand, failed = [], []
        for html_file in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            match = re.match(pattern, html_file)
            if match is None:
                self.log.error("Could not match '%s' with regexp '%s'", html_file, pattern)
                continue
            student_id, notebook_id = match.group("student_id"), match.group("notebook_id")
            if student_id in exclude:
                self.log.debug("Skipping student '%s'", student_id)
                continue
            try:
                feedback_dir = os.path.dirname(html_file)
                secret_path = os.path.join(feedback_dir, "submission_secret.txt")
                if not os.path.exists(secret_path):
                    by_hand.append(student_id)
                    self.log.warning(
                        "Not releasing feedback for student '%s': the submission was not made through the exchange "
                        "(no submission_secret.txt), so the student cannot fetch it; hand them %s",
                        student_id, html_file)
                    continue
                timestamp_path = os.path.join(feedback_dir, "timestamp.txt")
                timestamp = _read(timestamp_path).strip() if os.path.exists(timestamp_path) else "no timestamp"
                checksum = notebook_hash(secret=_read(secret_path), notebook_id=notebook_id)
                self.log.info("Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)", student_id,
                              self.coursedir.course_id, self.coursedir.assignment_id, notebook_id, timestamp)
                temporary = os.path.join(self.dest_path, f"{checksum}-tmp.html")
                shutil.copy(html_file, temporary)
                # Copied under a temporary name, then moved: the student never sees half a file.
                shutil.move(temporary, os.path.join(self.dest_path, f"{checksum}.html"))
                self.log.info("Feedback released to: %s", os.path.join(self.dest_path, f"{checksum}.html"))
            except Exception as error:  # one student's broken files must not stop the others' feedback
                failed.append(student_id)
                self.log.error("Could not release feedback for student '%s' (%s): %s: %s",
                               student_id, html_file, type(error).__name__, error)
        if by_hand:
            self.log.warning("Feedback not released through the exchange (submissions placed by hand), to hand out "
                             "as files from %s: %s", self.coursedir.feedback_directory, ", ".join(by_hand))
        if failed:
            message = f"could not release the feedback of {', '.join(failed)} (see above); everyone else's was released"
            self.log.error(message)  # nbgrader's app says only "nbgrader release_feedback failed"
            raise ExchangeError(message)
