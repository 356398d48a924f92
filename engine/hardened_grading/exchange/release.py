"""``nbgrader release_assignment`` that never opens the exchange to every user (:class:`ReleaseAssignment`)."""

import os

from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment

from .folders import MODES, ROOT_MODE, problems


class ReleaseAssignment(ExchangeReleaseAssignment):
    """nbgrader's release_assignment (the default exchange), which keeps the exchange's folders private.

    nbgrader's makes the exchange's root writable by every user with no sticky bit (``0777``), even one an
    administrator had made otherwise, and fails when it cannot: any student could then rename the course's
    folder and put another release in its place. This one makes a missing root ``1777`` (sticky, as ``/tmp``:
    every exchange command needs to write there), leaves an existing root's mode as it is,
    makes the course's missing folders with the private modes
    (:data:`hardened_grading.exchange.folders.MODES`), and warns of each hole it finds
    (:func:`hardened_grading.exchange.folders.problems`), with the mode to give.

    Set it in the instructor's configuration (the course's ``nbgrader_config.py``)::

        c.ExchangeFactory.release_assignment = "hardened_grading.exchange.ReleaseAssignment"
    """

    def ensure_root(self):
        if not os.path.exists(self.root):
            self.log.warning("Creating exchange directory: %s", self.root)
            try:
                os.makedirs(self.root)
                os.chmod(self.root, ROOT_MODE)
            except PermissionError:
                self.fail(f"Could not create {self.root}, permission denied.")

    def ensure_directory(self, path, mode):
        """nbgrader's, with the private layout's mode for each of the course's folders (a new one only)."""
        name = os.path.relpath(path, os.path.join(self.root, self.coursedir.course_id))
        super().ensure_directory(path, MODES.get("" if name == "." else name, mode))

    def init_dest(self):
        super().init_dest()
        for path, problem in problems(self.root, self.coursedir.course_id):
            self.log.warning("The exchange is not private: %s has %s", path, problem)
