"""The course site, built as ``make docs`` builds it, and served over HTTP on the loopback as a web server would
(tests/system/test_docs.py reads the built pages, tests/system/test_site_browser.py opens them in chromium)."""

import contextlib
import functools
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
