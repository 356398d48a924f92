"""``hardened-exchange``: make a course's exchange private, or say where it is not.

Examples::

    hardened-exchange prepare /srv/nbgrader/exchange course101 --group graders-course101
    hardened-exchange check /srv/nbgrader/exchange course101 --homes alice bob --course-folder /srv/course101

``check`` exits 1 when it finds a hole, naming each folder, what a student could do there, and the mode to
give it (:mod:`hardened_grading.exchange.folders`).
"""

import argparse
import os
import pwd
import stat
import sys

from . import folders


def _open_to_others(folder, who_reads_what, fix):
    """``[(folder, problem)]`` when other users can list or enter `folder`, else ``[]``."""
    mode = os.stat(folder).st_mode
    if mode & (stat.S_IROTH | stat.S_IXOTH):
        return [(folder, f"mode {stat.S_IMODE(mode):04o}: {who_reads_what} ({fix})")]
    return []


def home_problems(users):
    """``[(home, problem)]`` for each of `users` (account names) whose home folder other users can read or enter:
    there, another student reads their notebooks, whatever the exchange's modes."""
    found = []
    for user in users:
        try:
            home = pwd.getpwnam(user).pw_dir
            found += _open_to_others(home, f"other users can read {user}'s work there", f"chmod 0700 {home}")
        except (KeyError, FileNotFoundError) as error:
            found.append((user, f"no such account or home folder ({error})"))
    return found


def course_folder_problems(folder):
    """``[(folder, problem)]`` when other users can list or enter the course's folder `folder`, which holds its
    source notebooks (solutions, hidden tests), the graded work and the gradebook."""
    return _open_to_others(folder, "students can read the course's source notebooks, graded work and gradebook",
                           f"chmod 2770 {folder}, its group the graders'")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="hardened-exchange", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    actions = parser.add_subparsers(dest="action", required=True)
    prepare = actions.add_parser("prepare", help="make the course's exchange folders, with private modes")
    check = actions.add_parser("check", help="say where the course's exchange lets a student at others' work")
    for action in (prepare, check):
        action.add_argument("root", help="the exchange's root (c.Exchange.root)")
        action.add_argument("course", help="the course's id (c.CourseDirectory.course_id)")
    prepare.add_argument("--group", help="the graders' group (the instructor, the TAs, the grading service); "
                                         "no student may be in it")
    check.add_argument("--homes", nargs="*", default=[], metavar="USER",
                       help="also check that these users' home folders are private")
    check.add_argument("--course-folder", help="also check that students cannot enter the course's folder")
    arguments = parser.parse_args(argv)
    if arguments.action == "prepare":
        try:
            made = folders.prepare(arguments.root, arguments.course, arguments.group)
        except (PermissionError, KeyError) as error:
            parser.exit(2, f"hardened-exchange: error: {error}\n")
        for path, mode in made:
            print(f"{mode:04o}  {path}")
        return 0
    found = folders.problems(arguments.root, arguments.course) + home_problems(arguments.homes)
    if arguments.course_folder:
        found += course_folder_problems(arguments.course_folder)
    for path, problem in found:
        print(f"{path}: {problem}")
    if not found:
        print(f"{os.path.join(arguments.root, arguments.course)}: private")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
