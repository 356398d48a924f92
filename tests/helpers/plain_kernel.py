"""A notebook run in a plain ``python3`` kernel, as a student's JupyterLab runs it, for tests to compare with.

The kernel talks over IPC sockets in a private folder, not over TCP: with TCP, jupyter_client picks free ports and
the kernel binds them a moment later, and on a busy test machine another process took one in between (CI, 0bafb65:
``ZMQError: Address already in use``, then "Kernel died before replying to kernel_info"). A socket file in a folder
of the kernel's own cannot be taken.
"""

import shutil
import tempfile

from jupyter_client.manager import KernelManager
from nbclient import NotebookClient


def execute(notebook, folder=None, **options):
    """Run `notebook` in place in a fresh plain ``python3`` kernel started in `folder` (the current one if None);
    `options` are NotebookClient's (``timeout``, ``allow_errors``, ...). Return `notebook`."""
    sockets = tempfile.mkdtemp(prefix="posenc-kernel-")  # short: a socket's path is at most 107 bytes
    try:
        manager = KernelManager(kernel_name="python3", transport="ipc", ip=f"{sockets}/ipc")
        resources = {"metadata": {"path": str(folder)}} if folder is not None else {}
        NotebookClient(notebook, km=manager, resources=resources, **options).execute()
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    return notebook
