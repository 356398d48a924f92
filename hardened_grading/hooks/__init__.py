"""nbgrader's hooks around each submission, and the clean-up of runs that did not finish.

- :mod:`.submission`: ``Autograde.pre_convert_hook`` / ``post_convert_hook`` (a submission made plain,
  a renamed notebook adopted, the done-marker);
- :mod:`.unfinished`: a run's half-written folders removed, and the submissions a live run holds locked.
"""
