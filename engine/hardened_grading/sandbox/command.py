"""The command that starts the grading kernel's launcher (:mod:`hardened_grading.sandbox.launcher`).

Apart from the kernel spec that names it, so that the launcher, which starts twice per submission (outside the
sandbox, then inside), imports none of jupyter_client.
"""

import sys

#: The grading kernel's launcher, as Python runs it. Not ``python -m hardened_grading.sandbox.launcher``: ``-m`` (and ``-c``)
#: put the working folder first on ``sys.path``, and the launcher starts in the student's folder, outside the sandbox
#: the first time: a ``hardened_grading/`` package or a ``runpy.py`` of the student's there would be imported in
#: place of the engine's, as the grader's user; inside the sandbox, in place of the code that sets its limits. The
#: working folder is taken off ``sys.path`` before anything is imported (``sys`` is built in).
LAUNCH = ("import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; import runpy; "
          "runpy.run_module('hardened_grading.sandbox.launcher', run_name='__main__', alter_sys=True)")


def launcher_command():
    """The command that starts the grading kernel's launcher (:data:`LAUNCH`), before its arguments."""
    return [sys.executable, "-c", LAUNCH]
