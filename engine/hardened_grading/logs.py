"""The engine's logger, and a message said once per grading run."""

import functools
import logging

log = logging.getLogger("hardened_grading")


@functools.lru_cache(maxsize=None)
def _say_once(logger, message):
    """Log `message` as a warning the first time it comes in this process (a grading run)."""
    logger.warning(message)
