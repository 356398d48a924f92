"""``nbgrader submit`` whose submission only its student and the graders can read (:class:`Submit`)."""

import os
import stat

from nbgrader.exchange.default.submit import ExchangeSubmit

from .folders import SUBMISSION_FILE_MODE, SUBMISSION_FOLDER_MODE


class Submit(ExchangeSubmit):
    """nbgrader's submit (the default exchange), with the submission private to its student and the graders.

    nbgrader leaves the submission's folder writable by every user and its files readable by every user
    (``0777``, ``0644``): in an ``inbound`` folder nobody can list, its random name is all that keeps
    another student from reading it, changing it, or removing it. This one then makes it ``0750`` and its
    files ``0640`` (:mod:`hardened_grading.exchange.folders`): the student, and the group the folder takes
    from ``inbound`` (the graders'), read it. Its student's cache of the submission, which holds the secret
    that names their feedback, is made ``0700``.

    Set it in the students' configuration (on a hub: ``/etc/jupyter/nbgrader_config.py``)::

        c.ExchangeFactory.submit = "hardened_grading.exchange.Submit"
    """

    def do_copy(self, src, dest, log=None):
        super().do_copy(src, dest, log)
        regroup(dest)

    def copy_files(self):
        super().copy_files()
        # nbgrader's modes were set a moment ago: between the two, the submission was in a folder nobody can
        # list, under a name with 12 random characters (ExchangeSubmit.add_random_string)
        make_private(os.path.join(self.inbound_path, self.assignment_filename))
        os.chmod(self.cache, 0o700)  # ~/.local/share/jupyter/nbgrader_cache: the submissions' secrets


def regroup(folder):
    """Give `folder` the group and set-group-ID bit of its parent again, when the parent has that bit (``inbound``),
    so that the files nbgrader writes into it next (``timestamp.txt``, ``submission_secret.txt``) take the
    graders' group too.

    ``shutil.copytree`` gave the folder its source's mode, and Linux takes a folder's set-group-ID bit away when
    a user outside its group changes its mode: a student is outside the graders' group. The folder is made again
    in its parent, which gives the new one the bit, and what was copied is moved into it.
    """
    parent = os.path.dirname(folder)
    if not os.stat(parent).st_mode & stat.S_ISGID or os.stat(folder).st_mode & stat.S_ISGID:
        return
    fresh = os.path.join(parent, f".{os.path.basename(folder)}.regrouping")  # a name collect's pattern never matches
    os.mkdir(fresh)
    for name in os.listdir(folder):
        os.rename(os.path.join(folder, name), os.path.join(fresh, name))
    os.rmdir(folder)
    os.rename(fresh, folder)


def make_private(folder):
    """Give `folder`, its folders and its files the modes of a submission (:data:`SUBMISSION_FOLDER_MODE`,
    :data:`SUBMISSION_FILE_MODE`), the folder itself last."""
    for parent, folders, files in os.walk(folder, topdown=False):
        for names, mode in ((files, SUBMISSION_FILE_MODE), (folders, SUBMISSION_FOLDER_MODE)):
            for path in (os.path.join(parent, name) for name in names):
                if not os.path.islink(path):  # a link's own mode means nothing; what it points to is the student's
                    os.chmod(path, mode)
    os.chmod(folder, SUBMISSION_FOLDER_MODE)
