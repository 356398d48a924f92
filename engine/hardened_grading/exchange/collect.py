"""``nbgrader collect`` that collects only what each student submitted themselves, and only its plain entries
(:class:`Collect`)."""

import os
import shutil
import sys

from nbgrader.exchange.default import exchange as default_exchange
from nbgrader.exchange.default.collect import ExchangeCollect

from ..untrusted import folder as student_folder

if sys.platform != "win32":
    import pwd
else:  # pragma: no cover - nbgrader's own check is off on Windows too
    pwd = None


class Collect(ExchangeCollect):
    """nbgrader's collect (the default exchange), which copies a submission's plain entries only.

    A student writes their submission into the exchange's inbound folder, so they can leave there a symbolic
    link to any file the instructor can read (the course's source notebooks, the gradebook), a FIFO that
    would block the copy for ever, or a hard link. nbgrader's collect copies with ``shutil.copytree``, which
    copies what links point to, with the instructor's permissions. This one copies only regular files with
    one link, and folders (:func:`hardened_grading.untrusted.folder.why_unsafe`); each other entry is left out
    and logged. nbgrader's own rules (``CourseDirectory.ignore``, ``include``, ``max_file_size``,
    ``max_dir_size``) apply as before.

    A submission's folder name says whose it is (``STUDENT+ASSIGNMENT+TIME+RANDOM``), and any student can
    make a folder in ``inbound`` under any name: bob can submit as alice, later than she did, and nbgrader's
    collect takes it as her latest submission (it only logs "cheating attempt?"). This one collects a
    student's latest submission among those their own account made (the folder's owner is the student's
    account), and logs each one made by another account as an error, naming both. ``check_owner = False``
    (``c.ExchangeCollect.check_owner``, nbgrader's setting) turns that off, where every student's files
    have one owner (a hub whose students share one Unix account, as in Docker images).
    """

    def _path_to_record(self, path):
        record = super()._path_to_record(path)
        record["made_by"] = _owner_name(path)
        if not self._theirs(record):
            self.log.error("Not collecting %s: it names %s, but the account %s made it (a submission in another "
                           "student's name); if every student's files have one owner, set "
                           "c.ExchangeCollect.check_owner = False", student_folder.shown(record["filename"]),
                           record["username"], record["made_by"])
        return record

    def _theirs(self, record):
        return not self.check_owner or pwd is None or record["made_by"] == record["username"]

    def _sort_by_timestamp(self, records):
        # a student's own submissions first, the latest first: nbgrader's init_src takes the first
        return sorted(super()._sort_by_timestamp(records), key=lambda record: not self._theirs(record))

    def copy_files(self):
        # a student none of whose submissions their own account made has nothing to collect
        self.src_records = [record for record in self.src_records if self._theirs(record)]
        super().copy_files()

    def do_copy(self, src, dest, log=None):
        why = student_folder.not_a_folder(src)
        if why:
            raise student_folder.UnsafeEntry(f"the submission {student_folder.shown(src)} is {why}: not collected")
        dir_size = self.get_size(src)
        if dir_size > 1000 * self.coursedir.max_dir_size:
            self.log.error("Directory size is too big")
            raise RuntimeError(f"Directory size is too big. Size is {dir_size}, maximum size is "
                               f"{1000 * self.coursedir.max_dir_size}")
        nbgrader_ignore = default_exchange.ignore_patterns(
            exclude=self.coursedir.ignore, include=self.coursedir.include,
            max_file_size=self.coursedir.max_file_size, log=self.log)

        def ignore(folder, names):
            left_out = set(nbgrader_ignore(folder, names))
            for name in sorted(set(names) - left_out):
                try:
                    why = student_folder.why_unsafe(os.lstat(os.path.join(folder, name)))
                except OSError as error:
                    why = f"unreadable ({error.strerror})"
                if why:
                    self.log.error("Not collecting %s: it is %s (a submission holds regular files and folders only)",
                                   student_folder.shown(os.path.join(folder, name)), why)
                    left_out.add(name)
            return left_out

        # symlinks=True: a link that appears after the check above is copied as a link, and removed below
        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
        student_folder.remove_unsafe(dest, os.path.basename(os.path.dirname(dest)), "the collected folder")
        if self.coursedir.groupshared:  # as nbgrader's: copytree copied the modes, give the group rw back
            for dirname, _, filenames in os.walk(dest):
                for path, wanted in [(dirname, 0o2770), *((os.path.join(dirname, f), 0o660) for f in filenames)]:
                    mode = os.stat(path).st_mode
                    if mode & wanted != wanted:
                        try:
                            os.chmod(path, (mode | wanted) & 0o2777)
                        except PermissionError:
                            self.log.warning("Could not update permissions of %s to make it groupshared", path)


def _owner_name(path):
    """The name of the account that owns `path` (not following a link), or ``uid N`` when it has none."""
    if pwd is None:
        return None
    uid = os.lstat(path).st_uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
