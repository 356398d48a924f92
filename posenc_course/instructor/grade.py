"""``posenc-grade``: the engine's class grading (:mod:`hardened_grading.class_grading.command`) under this course's
name, with its first assignment as the default.

    posenc-grade                           # every submission of posenc in submitted/, one worker per core
    posenc-grade posenc-advanced --jobs 2 --student 's0*'
"""

import sys

from hardened_grading.class_grading import command

from ..layout import ASSIGNMENT


def main(argv=None):
    return command.main(argv, program="posenc-grade", default_assignment=ASSIGNMENT)


if __name__ == "__main__":
    sys.exit(main())
