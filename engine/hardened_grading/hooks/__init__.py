"""nbgrader's hooks around each submission, and the clean-up of runs that did not finish.

- :mod:`.submission`: ``Autograde.pre_convert_hook`` / ``post_convert_hook`` (a submission made plain,
  a renamed notebook adopted, the done-marker);
- :mod:`.unfinished`: a run's half-written folders removed, and the submissions a live run holds locked;
- :mod:`.timestamps`: a submission's ``timestamp.txt`` that is not a time, a warning (nbgrader's own code fails).
"""

from ..nbgrader_app import linear_ignore_globs
from .timestamps import tolerate_unreadable_timestamps
from .unfinished import lock_submissions_while_graded

# In every process that imports the engine's hooks (a course's nbgrader_config.py names them, and ResilientExecute
# imports them): nbgrader's copies of a student's folder take time linear in its files (nbgrader_app), and
# nbgrader's Autograde holds each submission's lock while it grades it, and a timestamp.txt that is not a time is
# a warning, the submission graded.
linear_ignore_globs()
lock_submissions_while_graded()
tolerate_unreadable_timestamps()
