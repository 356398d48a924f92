"""A JupyterLab that a test started, stopped with its kernels (tests/system/test_browser.py,
tests/system/test_inert_browser.py)."""

import os
import signal
import subprocess


def stop_lab(process):
    """Stop JupyterLab as Ctrl-C does (it shuts its kernels down), then whatever is left of its group."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
