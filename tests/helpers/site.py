"""The course site, built as ``make docs`` builds it, and served over HTTP on the loopback as a web server would
(tests/system/test_docs.py reads the built pages, tests/system/test_site_browser.py opens them in chromium)."""

import contextlib
import fcntl
import functools
import json
import os
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from posenc_course.layout import ROOT


def build_site(out):
    """Build the site into the folder `out` (warnings are errors, all reported); return the finished ``sphinx``."""
    try:
        import sphinx  # noqa: F401
    except ImportError:
        pytest.fail("Sphinx is not installed: `make test` installs docs/requirements.lock (or run `make docs`)")
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-d",
                           str(out.parent / "doctrees"), str(ROOT / "docs"), str(out)],
                          capture_output=True, text=True, cwd=ROOT)


def shared_site(tmp_path_factory):
    """The site built once for the whole test session (:func:`build_site`), whichever module asks first and on
    whichever xdist worker (the others wait for it, on a lock in the session's common temporary folder): ``(html
    folder, the finished build)``. Its pages are read, never changed."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker has a folder of its own in the session's
        root = root.parent
    folder, record = root / "shared-site", root / "shared-site.json"
    with open(root / "shared-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes, however the test ends
        if not record.exists():
            built = build_site(folder / "html")
            record.write_text(json.dumps({"args": built.args, "returncode": built.returncode, "stdout": built.stdout,
                                          "stderr": built.stderr}))
    return folder / "html", subprocess.CompletedProcess(**json.loads(record.read_text()))


class QuietHandler(SimpleHTTPRequestHandler):
    """A static file server that logs nothing (a 404 is the browser's to report, and the test's to find)."""

    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def served(folder):
    """Serve `folder` at its root on a free port of 127.0.0.1, in a thread; yield its URL (``http://.../``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
