"""A student's folder is untrusted input: what the grader does with one, it does without following a link.

A submission's folder is written by people and programs the grader does not trust: the student, an LMS
download, and above all the student's code, which runs in the kernel with that folder as its working
folder (``autograded/STUDENT/ASSIGNMENT``, the only place its sandbox may write). Whatever it leaves there,
nbgrader and this engine then read, write, chmod and copy as the grader's user (root in a container, the
instructor on a hub): a symbolic link named ``exercises.ipynb`` would have nbgrader write the graded
notebook, hidden tests included, wherever the link points; a link to the gradebook would have
``generate_feedback`` copy it into the student's feedback; a FIFO would block the grader for ever.

So, at each boundary, a folder is made of plain entries only: **regular files with one link, and folders**,
each inside the folder. Anything else (a symbolic or hard link, a FIFO, a socket, a device) is refused,
named in the log, and never opened, written or chmodded through.

- :func:`remove_unsafe`: remove the entries that are not plain, in place. For ``submitted/`` when grading
  starts (:func:`hardened_grading.hooks.submission.prepare_submission`), and for ``autograded/`` before feedback
  is made from it.
- :func:`rebuild`: after the kernel has ended, the folder becomes a new one of the grader's own, into which
  its plain entries only are moved, at most ``max_files`` files and ``max_mb`` MiB
  (:class:`hardened_grading.preprocessors.execute.ResilientExecute` calls it; the limits are its traitlets). A process of
  the sandbox that somehow outlived its kernel is left holding the old folder, which is then removed: it
  can no longer reach what the grader writes next.
- :func:`open_regular` and :func:`write_new`: open a file to read only if it is a regular file, never
  blocking on a FIFO; write one without following a link.

Names of entries are shown escaped (:func:`hardened_grading.untrusted.terminal.escape`): a terminal obeys none of them.
"""

import contextlib
import errno
import heapq
import importlib.machinery
import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UnsafeEntry
from ..logs import log
from .terminal import escape as shown

#: The defaults of ``ResilientExecute.max_files`` and ``ResilientExecute.max_folder_mb``: what one graded
#: folder may hold (files and folders; bytes), its notebook and the course's files included. A course's own
#: files count too: raise them for a course whose assignments ship many or large files.
MAX_FILES = 1000

MAX_FOLDER_MB = 256

#: Folders deeper than this in a graded folder are left out (each level holds a file descriptor while it is moved).
MAX_DEPTH = 32

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def why_unsafe(status):
    """Why an entry with ``lstat`` `status` is not plain, in a few words; None for a folder or a regular
    file with one link."""
    mode = status.st_mode
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISREG(mode):
        return None if status.st_nlink == 1 else f"a hard link ({status.st_nlink} names for one file)"
    for test, what in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return what
    return "not a regular file or folder"


def _link_target(path):
    try:
        return f" to {shown(os.readlink(path))}"
    except OSError:
        return ""


@dataclass
class Scan:
    """What :func:`scan` found in a folder: its plain entries (relative paths) and the others."""

    folders: list = field(default_factory=list)  #: plain folders, parents before children
    files: list = field(default_factory=list)  #: (relative path, size) of plain files
    unsafe: list = field(default_factory=list)  #: (relative path, why) of everything else


def scan(folder):
    """The entries of `folder` (which must itself be a real folder), walked without following any link.

    Raise :class:`UnsafeEntry` when `folder` itself is not a real folder (a link to one, say).
    """
    status = os.lstat(folder)
    if not stat.S_ISDIR(status.st_mode):
        raise UnsafeEntry(errno.ENOTDIR, f"not a folder but {why_unsafe(status)}{_link_target(folder)}", str(folder))
    found = Scan()
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            entries = sorted(os.scandir(os.path.join(folder, relative)), key=lambda entry: entry.name)
        except OSError as error:  # removed meanwhile, or unreadable: its entries are not plain ones
            found.unsafe.append((relative, f"unreadable ({error.strerror})"))
            continue
        for entry in entries:
            path = os.path.join(relative, entry.name)
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            why = why_unsafe(status)
            if why is not None:
                found.unsafe.append((path, why + _link_target(entry.path) if stat.S_ISLNK(status.st_mode) else why))
            elif stat.S_ISDIR(status.st_mode):
                found.folders.append(path)
                pending.append(path)
            else:
                found.files.append((path, status.st_size))
    found.folders.sort()
    found.files.sort()
    return found


def not_a_folder(path):
    """Why `path` is not a real folder (a link to one, say), in a few words; None for a real folder, or for
    nothing at all."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(status.st_mode):
        return None
    return (why_unsafe(status) or "a file") + (_link_target(path) if stat.S_ISLNK(status.st_mode) else "")


def remove_entry(path):
    """Remove the entry at `path` without following it (a folder with its contents)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)  # never follows a link: rmtree.avoids_symlink_attacks on Linux
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def remove_unsafe(folder, who="", where=""):
    """Remove every entry of `folder` that is not plain (a link, a FIFO, a socket, a device, a hard link);
    log each one (`who`: the student, `where`: what the folder is). Return the removed entries'
    ``(relative path, why)``.

    A `folder` that is itself a link or a special file is removed (the link, not what it points to).
    """
    try:
        found = scan(folder)
    except FileNotFoundError:
        return []
    except UnsafeEntry as error:
        log.error("hardened_grading: student %r: %s %s is %s: removed, not followed", shown(who), where,
                  shown(folder), error.strerror)
        remove_entry(folder)
        return [(".", error.strerror)]
    for relative, why in found.unsafe:
        log.error("hardened_grading: student %r: %s %s is %s: removed, not followed", shown(who), where,
                  shown(os.path.join(folder, relative)), why)
        remove_entry(os.path.join(folder, relative))
    return found.unsafe


def open_regular(path):
    """Open `path` to read bytes, only if it is a regular file with one link; never follow a link, never
    wait on a FIFO. Raise :class:`UnsafeEntry` (an OSError) otherwise, saying what it is."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError as error:
        if error.errno == errno.ELOOP or os.path.islink(path):
            raise UnsafeEntry(errno.ELOOP, f"a symbolic link{_link_target(path)}, not a file", str(path)) from None
        raise
    try:
        why = why_unsafe(os.fstat(fd))
        if why is not None or stat.S_ISDIR(os.fstat(fd).st_mode):
            raise UnsafeEntry(errno.EINVAL, f"{why or 'a folder'}, not a file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def write_new(path, data):
    """Write `data` (bytes or str) to `path` as a new regular file of its own: whatever was at `path` (a
    link, say) is replaced, never written through."""
    data = data.encode() if isinstance(data, str) else data
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".hardened-grading-")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)  # replaces a link itself, not what it points to
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


#: Entries left out of a graded folder that the log names one by one; the others are counted.
_NAMED = 20


class _LeftOut(list):
    """The entries left out of a folder, ``(relative path, why)``: the first :data:`_NAMED`, then a count by reason."""

    def __init__(self):
        super().__init__()
        self.counted = {}

    def append(self, item):
        if len(self) < _NAMED:
            super().append(item)
        else:
            self.count(1, item[1].split(" to ")[0])

    def count(self, how_many, why):
        if how_many > 0:
            self.counted[why] = self.counted.get(why, 0) + how_many

    def summary(self):
        """The named entries, then one ``("...", "N more: why")`` per reason counted."""
        return [*self, *((f"{n} more entries", why) for why, n in sorted(self.counted.items()))]


def _first_by_name(entries, count):
    """The first `count` of the iterator `entries` by name (in memory for those only), and how many it held."""
    held = [0]

    def counting():
        for entry in entries:
            held[0] += 1
            yield entry
    first = heapq.nsmallest(count, counting(), key=lambda entry: entry.name)
    return first, held[0]


def shadowed_module(name, folder, is_folder=False):
    """The module that the entry `name` at the top of `folder` would stand in for, for a Python started there
    (a kernel opened on the graded notebook: ``python -m ipykernel_launcher`` puts its working folder first on
    ``sys.path``), or None. An ``ipykernel_launcher.py`` there runs as the kernel starts, a ``numpy.py`` at
    ``import numpy``, both as whoever opens the notebook. `is_folder`: a folder, a package if it holds an
    ``__init__`` module (one without is no shadow: the real package comes first)."""
    if is_folder:
        try:
            inside = os.listdir(os.path.join(folder, name))
        except OSError:
            return None
        if not any(_module_name(entry) == "__init__" for entry in inside):
            return None
        module = name
    else:
        module = _module_name(name)
    if not module or not module.isidentifier():
        return None
    if module in sys.builtin_module_names:
        return module
    elsewhere = [path for path in sys.path if path and os.path.abspath(path) != os.path.abspath(folder)]
    return module if importlib.machinery.PathFinder.find_spec(module, elsewhere) is not None else None


def _module_name(filename):
    """The module a file of this name is, imported from its folder (``numpy.py``, ``numpy.cpython-311-....so``), or
    None."""
    for suffix in sorted(importlib.machinery.all_suffixes(), key=len, reverse=True):
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[:-len(suffix)]
    return None


def rebuild(folder, max_files=MAX_FILES, max_mb=MAX_FOLDER_MB, who=""):
    """Make `folder` a new folder of the grader's own that holds its plain entries only, once the code that
    wrote it has ended; return what was left out, ``[(relative path, why)]``, each also logged.

    Its folders are made anew, and its regular files with one link are moved into them (a rename: no data is
    copied): the entries at its top first (the notebooks), then each folder's, in sorted order, at most
    `max_files` files and folders in all, `max_mb` MiB, and no deeper than :data:`MAX_DEPTH` folders. Every
    other entry (:func:`why_unsafe`) and those beyond the limits stay in the old folder, which is then
    removed. The log names the first :data:`_NAMED` entries left out and counts the rest, by reason; a folder
    of a million entries costs the time to list and remove them, and memory for the ones kept only.

    The walk holds each folder open (``O_NOFOLLOW``) and moves its entries by name from there, so it never
    leaves the folder's own tree, even if a process of the sandbox that outlived its kernel swapped a folder
    for a link meanwhile; that process keeps the old folder, and cannot reach the new one. A last scan of
    the new folder, which nothing else can reach, removes whatever came in otherwise than as a plain entry.
    Raise :class:`UnsafeEntry` when `folder` is itself no real folder.
    """
    folder = os.path.abspath(folder)
    try:
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeEntry(errno.ENOTDIR, f"not a folder but {not_a_folder(folder)}", folder) from None
        raise
    parent = os.path.dirname(folder)
    left_out = _LeftOut()
    room = {"files": max_files, "bytes": max_mb * 1024 * 1024}
    beyond = f"beyond the limit of {max_files} files and folders (ResilientExecute.max_files)"

    def move(source, target, relative, depth):
        """Move the plain files of the open folder `source` into the open folder `target`, then its folders'."""
        folders = []
        # no more entries than there is room for, and a few to name: a flood of entries costs time, not memory
        entries, listed = _first_by_name(os.scandir(source), max(room["files"], 0) + _NAMED)
        left_out.count(listed - len(entries), beyond)
        for entry in entries:
            path = os.path.join(relative, entry.name)
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            why = why_unsafe(status)
            if why is None and depth == 0:
                module = shadowed_module(entry.name, folder, stat.S_ISDIR(status.st_mode))
                why = module and f"a stand-in for the module {module}, which a kernel started here would import"
            if why is not None:
                if stat.S_ISLNK(status.st_mode):
                    with contextlib.suppress(OSError):
                        why += f" to {shown(os.readlink(entry.name, dir_fd=source))}"
                left_out.append((path, why))
            elif room["files"] <= 0:
                left_out.append((path, beyond))
            elif stat.S_ISDIR(status.st_mode):
                folders.append((entry.name, path))
                room["files"] -= 1
            elif status.st_size > room["bytes"]:
                left_out.append((path, f"beyond the limit of {max_mb} MiB in all (ResilientExecute.max_folder_mb)"))
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.rename(entry.name, entry.name, src_dir_fd=source, dst_dir_fd=target)
                    room["files"] -= 1
                    room["bytes"] -= status.st_size
        for name, path in folders:
            if depth >= MAX_DEPTH:
                left_out.append((path, f"nested deeper than {MAX_DEPTH} folders"))
                continue
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=source)
            except OSError:
                left_out.append((path, "no longer a folder"))
                continue
            try:
                os.mkdir(name, dir_fd=target)  # as nbgrader makes its folders: umask's mode
                inner_target = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=target)
                try:
                    move(inner, inner_target, path, depth + 1)
                finally:
                    os.close(inner_target)
            finally:
                os.close(inner)

    new = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(folder)}.new-")
    try:
        os.chmod(new, stat.S_IMODE(os.fstat(top).st_mode) & 0o2777)  # mkdtemp made it 0700
        new_fd = os.open(new, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        try:
            move(top, new_fd, "", 0)
        finally:
            os.close(new_fd)
        aside = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(folder)}.old-")
        os.replace(folder, os.path.join(aside, "folder"))
        os.replace(new, folder)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    finally:
        os.close(top)
    try:
        shutil.rmtree(aside)  # never follows a link; drops the moved files' second names
    except Exception as error:  # a tree too deep to remove, say: hidden (a dot folder), and said
        log.error("hardened_grading: student %r: the old graded folder %s could not be removed in full (%s)",
                  shown(who), shown(aside), error)
    for relative, why in left_out:
        log.error("hardened_grading: student %r: %s in the graded folder is %s: left out, not followed",
                  shown(who), shown(os.path.join(folder, relative)), why)
    for why, how_many in sorted(left_out.counted.items()):
        log.error("hardened_grading: student %r: %d more entries of the graded folder %s were left out: %s",
                  shown(who), how_many, shown(folder), why)
    late = scan(folder)
    for relative, why in late.unsafe:
        log.error("hardened_grading: student %r: %s in the graded folder is %s: removed, not followed",
                  shown(who), shown(os.path.join(folder, relative)), why)
        remove_entry(os.path.join(folder, relative))
    return left_out.summary() + late.unsafe


def plain_path(root, path):
    """Whether every folder from `root` (trusted) down to `path` is a real folder, not a link: so that
    opening `path` cannot lead outside `root`. `path` itself is not checked (see :func:`open_regular`)."""
    root, path = Path(root).absolute(), Path(path).absolute()
    try:
        parts = path.parent.relative_to(root).parts
    except ValueError:
        return False
    current = root
    for part in parts:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def open_folder_inside(root, path):
    """A file descriptor of the folder `path` inside `root` (trusted), opened one name at a time from `root` without
    following a link, so that a link swapped in meanwhile cannot lead outside; None when `path` is not inside `root`,
    is `root` itself, or a name on the way is not a real folder. The caller closes it."""
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    parts = Path(relative).parts
    if relative == "." or not parts or any(part in ("", ".", "..") for part in parts) or os.path.isabs(relative):
        return None
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError:
        os.close(fd)
        return None
    return fd
