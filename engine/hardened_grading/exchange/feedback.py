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

from ..untrusted import folder as student_folder


def _read(path):
    with student_folder.open_regular(path) as handle:  # never through a link (student_folder)
        return handle.read().decode("utf-8", errors="replace")


class ReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release_feedback (the default exchange), tolerant of each submission's files."""

    def copy_files(self):
        exclude = set(self.coursedir.student_id_exclude.split(",")) if self.coursedir.student_id_exclude else set()
        pattern = re.escape(os.path.sep).join([
            self.coursedir.format_path(self.coursedir.feedback_directory, "(?P<student_id>.*)",
                                       self.coursedir.assignment_id, escape=True),
            "(?P<notebook_id>.*).html"])
        by_hand, failed = [], []
        notebooks = self._notebook_ids()
        for html_file in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            match = re.match(pattern, html_file)
            if match is None:
                self.log.error("Could not match '%s' with regexp '%s'", html_file, pattern)
                continue
            student_id, notebook_id = match.group("student_id"), match.group("notebook_id")
            if student_id in exclude:
                self.log.debug("Skipping student '%s'", student_id)
                continue
            if notebooks is not None and notebook_id not in notebooks:
                # a page the student's own code left in its folder, which generate_feedback copied: not feedback
                self.log.warning("Not releasing %s: no notebook of %s is called %s", student_folder.shown(html_file),
                                 self.coursedir.assignment_id, student_folder.shown(notebook_id))
                continue
            try:
                feedback_dir = self._submission_files(student_id, os.path.dirname(html_file))
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
                _copy_plain(html_file, temporary, self.coursedir.root)
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

    def _notebook_ids(self):
        """The assignment's notebooks, by name, from its source (or release) folder: a feedback page is released
        only if it is one of theirs. None (release every page) when the course holds neither folder."""
        for directory in (self.coursedir.source_directory, self.coursedir.release_directory):
            folder = self.coursedir.format_path(directory, ".", self.coursedir.assignment_id)
            found = _notebook_ids_of(_folder_or_none(folder))
            if found:
                return found
        return None

    def _submission_files(self, student_id, feedback_dir):
        """Where the submission's ``submission_secret.txt`` and ``timestamp.txt`` are read: the student's folder in
        ``submitted/``, which nbgrader's commands and ``collect`` wrote, when it has them; else the feedback folder
        (where generate_feedback copies them from the graded folder, in which the student's code ran, and could
        have changed them)."""
        submitted = self.coursedir.format_path(self.coursedir.submitted_directory, student_id,
                                               self.coursedir.assignment_id)
        secret = os.path.join(submitted, "submission_secret.txt")
        if os.path.isfile(secret) and student_folder.plain_path(self.coursedir.root, secret):
            return submitted
        return feedback_dir


def _folder_or_none(path):
    return path if os.path.isdir(path) and not os.path.islink(path) else None


def _copy_plain(source, destination, root):
    """Copy the feedback file `source` to `destination`, only if it is a regular file with one link, in real
    folders under the course folder `root`: feedback made from a student's folder is never a way to read
    another file (:mod:`hardened_grading.untrusted.folder`)."""
    if not student_folder.plain_path(root, source):
        raise student_folder.UnsafeEntry(f"a folder on the way to {source} is a link, not a folder")
    with student_folder.open_regular(source) as stream, open(destination, "wb") as target:
        shutil.copyfileobj(stream, target)


def _notebook_ids_of(folder):
    """The names (without ``.ipynb``) of the notebooks in `folder`, or None when there is no such folder."""
    if folder is None:
        return None
    return {os.path.basename(path)[:-len(".ipynb")] for path in glob.glob(os.path.join(folder, "*.ipynb"))}
