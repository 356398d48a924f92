"""``posenc``: every command of the course, listed by audience, and run by name.

    posenc                            # the commands, under Student, Instructor, Authoring, Quality assurance
    posenc --help                     # the same
    posenc NAME [ARGS ...]            # run one: posenc check exercises.ipynb, posenc mutants --sample 40
    posenc NAME --help                # that command's own options

:data:`COMMANDS` is the registry: each name with the module whose ``main(argv)`` runs it, a one-line summary and
its audience. A command's module is imported only when it runs, so the list costs no import of nbgrader, numpy
or matplotlib (pip's ``pip._internal.commands`` keeps its commands the same way). Each command stays runnable as
before too: as ``python -m MODULE``, and ``posenc-check``, ``posenc-lab`` and ``posenc-grade`` as console scripts.
This module sits at the top of :mod:`posenc_course` because it serves every audience.
"""

import difflib
import importlib
import sys
from typing import NamedTuple


class Command(NamedTuple):
    """A command of the registry: where its ``main`` is, what it does in a line, and whom it is for."""

    module: str
    summary: str
    audience: str


#: The audiences, in the order ``posenc --help`` lists them.
AUDIENCES = ("Student", "Instructor", "Authoring", "Quality assurance")

#: Every command, by name, in the order it is listed within its audience.
COMMANDS = {
    "check": Command("posenc_course.student.check",
                     "grade your exercises.ipynb with the full hidden tests (also: posenc-check)", "Student"),
    "lab": Command("posenc_course.student.lab",
                   "JupyterLab for this course, a student's; --instructor: with formgrader (also: posenc-lab)",
                   "Student"),
    "grade": Command("posenc_course.instructor.grade",
                     "grade the class's submissions in parallel (also: posenc-grade; make grade)", "Instructor"),
    "slurm": Command("posenc_course.slurm", "grade the class on a Slurm cluster, from its login node "
                                            "(make grade-slurm)", "Instructor"),
    "report": Command("posenc_course.report", "per-student, per-exercise scores from a gradebook", "Instructor"),
    "class-report": Command("posenc_course.class_report",
                            "the class report: what to teach again, from the gradebook and the graded notebooks",
                            "Instructor"),
    "venv-extras": Command("posenc_course.venv_extras",
                           "what the venv holds that a lock does not name, which make install uninstalls",
                           "Instructor"),
    "demo": Command("posenc_course.instructor.demo",
                    "the instructor's workflow end to end, on three demo students, in demo/ (make demo)",
                    "Instructor"),
    "notebook": Command("posenc_course.authoring.notebook",
                        "build the source notebooks from authoring/*.md, checked against the reference (make notebook)",
                        "Authoring"),
    "generate": Command("posenc_course.authoring.generate",
                        "release the assignments named, the old release kept if nbgrader refuses (make release)",
                        "Authoring"),
    "overview": Command("posenc_course.authoring.overview",
                        "draw the site's overview figure again, docs/_static/overview.svg", "Authoring"),
    "mutants": Command("posenc_course.qa.mutants",
                       "mutation testing of the graded notebooks' tests (make mutants)", "Quality assurance"),
}

USAGE = "usage: posenc COMMAND [ARGS ...]    (posenc COMMAND --help: that command's own options)"


def command_list():
    """The text of ``posenc --help``: the usage, then each audience's commands with their summaries.

    Returns
    -------
    str
        One heading per audience of :data:`AUDIENCES`, each command under it as ``  NAME  SUMMARY``.
    """
    width = max(len(name) for name in COMMANDS) + 2
    lines = [USAGE]
    for audience in AUDIENCES:
        lines += ["", f"{audience}:"]
        lines += [f"  {name:<{width}}{command.summary}" for name, command in COMMANDS.items()
                  if command.audience == audience]
    lines += ["", "The grading engine's own command, for any nbgrader course: hardened-grade --help"]
    return "\n".join(lines)


def unknown_command(name):
    """What ``posenc NAME`` says when no command is called NAME: the closest names, then every name.

    Parameters
    ----------
    name : str
        The name that was asked for.

    Returns
    -------
    str
        The error, one line, starting with ``posenc:``.
    """
    close = difflib.get_close_matches(name, COMMANDS, n=1)
    maybe = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"posenc: no command {name!r}{maybe}; the commands are {', '.join(COMMANDS)} "
            "(posenc --help says what each does)")


def run(name, argv):
    """Run the command `name` with the arguments `argv`, importing its module only now.

    ``sys.argv`` is the command's own while it runs, as with ``python -m``: its usage line reads
    ``posenc NAME``.

    Parameters
    ----------
    name : str
        A key of :data:`COMMANDS`.
    argv : list of str
        The command's arguments, without its name.

    Returns
    -------
    int
        The command's exit status (0 when its ``main`` returns None).
    """
    main = importlib.import_module(COMMANDS[name].module).main
    saved, sys.argv = sys.argv, [f"posenc {name}", *argv]
    try:
        status = main(list(argv))
    finally:
        sys.argv = saved
    return 0 if status is None else status


def main(argv=None):
    """``posenc``: the list of commands (no argument, ``-h`` or ``--help``), or one command run.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``posenc`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 after the list; the command's status after a command; 2 for an unknown command.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(command_list())
        return 0
    name, args = argv[0], argv[1:]
    if name not in COMMANDS:
        print(unknown_command(name), file=sys.stderr)
        return 2
    return run(name, args)


if __name__ == "__main__":
    sys.exit(main())
