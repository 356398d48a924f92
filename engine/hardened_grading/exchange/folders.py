"""The exchange's folders on a shared machine, and who may do what in them.

nbgrader's default exchange is made for many Unix users on one machine (a JupyterHub): students write
their submissions into it and read releases and feedback from it. Its folders' modes leave holes there:

- ``release_assignment`` makes the exchange's root writable by everyone with no sticky bit (``0777``): any
  student can rename the course's folder and put another one, with another release, in its place (every
  other exchange command, a student's ``fetch_assignment`` and ``submit`` included, refuses a root it cannot
  write to, so the root stays writable: with the sticky bit, as ``/tmp`` is, nobody renames what is not theirs);
- ``submit`` makes each submission's folder writable by everyone, its files readable by everyone
  (``0777``, ``0644``): only a name nobody can list (``inbound`` is ``0733``), with a random part, keeps
  another student out; whoever learns it (a shared screen, a log, a path in an error) can read the
  submission, change it, or remove it.

The private layout (:data:`MODES`) closes them. Its folders belong to the grading user, and their group
is the graders' (the instructor, the TAs, the grading service), never a group a student is in:

=================  =========  =================================================================
folder             mode       who may do what
=================  =========  =================================================================
``ROOT``           ``1777``   everyone reads and adds; nobody renames or removes a course's folder
                              but its owner (sticky, as ``/tmp``)
``ROOT/COURSE``    ``2775``   everyone reads; the graders change it
``outbound``       ``2775``   releases: everyone reads and fetches; the graders release
``inbound``        ``3773``   submissions: a student adds one, and cannot list the folder, nor
                              rename or remove another's (sticky); the graders list and collect
``feedback``       ``2771``   feedback: a student fetches their own page by its name (a hash of
                              their submission's secret); nobody else can list it
=================  =========  =================================================================

A submission (:class:`hardened_grading.exchange.Submit`) is ``0750`` and its files ``0640``: its student
and the graders (the group it inherits from ``inbound``, set-group-ID) read it; no other student can,
whatever they know of its name.

:func:`prepare` makes the layout; :func:`problems` says where an exchange differs from it, and why that
matters (``hardened-exchange check``).
"""

import grp
import os
import stat
from pathlib import Path

#: ``{folder under the course's exchange folder ("" for the course's own): mode}``; the root's is :data:`ROOT_MODE`.
MODES = {"": 0o2775, "outbound": 0o2775, "inbound": 0o3773, "feedback": 0o2771}
ROOT_MODE = 0o1777
#: A submission's folders and files, once submitted (:class:`hardened_grading.exchange.Submit`).
SUBMISSION_FOLDER_MODE = 0o750
SUBMISSION_FILE_MODE = 0o640
#: Permission bits that let others in (read, write, or list).
_OTHERS = stat.S_IROTH | stat.S_IWOTH | stat.S_IXOTH


def course_folders(root, course_id):
    """``[(path, mode)]`` of the private layout for `course_id` in the exchange `root`, the root first."""
    course = Path(root) / course_id
    return [(Path(root), ROOT_MODE)] + [(course / name if name else course, mode) for name, mode in MODES.items()]


def prepare(root, course_id, group=None):
    """Make the private layout of `course_id`'s exchange under `root`: each folder made if missing, given
    `group` (a group name; default: leave the group) and its mode (:data:`MODES`). Run it as the user who
    will own the folders, the grading user, or as root, then give them to that user (``chown -R``).

    Returns the folders, as :func:`course_folders` does.

    Raises
    ------
    PermissionError
        When a folder belongs to someone else: its owner must run it.
    KeyError
        When `group` is not a group of this machine.
    """
    gid = grp.getgrnam(group).gr_gid if group is not None else -1
    folders = course_folders(root, course_id)
    for path, mode in folders:
        path.mkdir(exist_ok=True)
        if gid != -1:
            os.chown(path, -1, gid)
        os.chmod(path, mode)  # after chown, which clears the set-group-ID bit
    return folders


def problems(root, course_id):
    """What in `course_id`'s exchange under `root` lets a student at another student's work, or at a release:
    ``[(path, what a student can do there)]``, empty when the layout is private (:data:`MODES`)."""
    found = []
    for path, wanted in course_folders(root, course_id):
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            continue  # made, with its mode, by the first release (hardened_grading.exchange.ReleaseAssignment)
        extra, shown = mode & _OTHERS & ~wanted, f"mode {stat.S_IMODE(mode):04o}"
        if extra & stat.S_IWOTH:
            found.append((path, f"{shown}: any user can rename or remove what is in it, and put something else in "
                                f"its place (make it {wanted:04o})"))
        if extra & stat.S_IROTH:
            found.append((path, f"{shown}: any user can list it (make it {wanted:04o})"))
        if wanted & _OTHERS & ~mode:
            found.append((path, f"{shown}: students lack what nbgrader's fetch_assignment, submit and fetch_feedback "
                                f"need there, and those commands fail (make it {wanted:04o})"))
        if wanted & stat.S_IWOTH and not mode & stat.S_ISVTX:
            found.append((path, f"{shown}: with no sticky bit, any user can rename or remove what another made in it "
                                f"(make it {wanted:04o})"))
    return found
