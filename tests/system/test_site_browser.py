"""The course site in a real browser (Debian's chromium, driven by Playwright), served over HTTP as a web server
would serve it, in a laptop's window of 1366x768: every page loads with no console error or warning and no failed
request (the theme's mode, the favicon), and its right-hand Contents column is inside the window, entries and all.

The site is built once, as ``make docs`` builds it. Each check is also shown failing on a page made to break it.
Without chromium the module is skipped, with the reason (``make test-tools`` installs it as root).
"""

import shutil

import pytest

from ..helpers.site import served, shared_site

playwright_api = pytest.importorskip("playwright.sync_api")

#: A laptop's window, where the Contents column was cut off.
WINDOW = {"width": 1366, "height": 768}
#: Pixels an element may pass its box by (sub-pixel rounding).
SLACK = 1

#: The right-hand Contents column (pydata-sphinx-theme's secondary sidebar), measured in the page: its box, the window's
#: width, and the right edge of the furthest of its entries (None when the page has no such column).
CONTENTS = """() => {
  const column = document.querySelector('.bd-sidebar-secondary');
  if (!column || getComputedStyle(column).display === 'none') return null;
  const box = column.getBoundingClientRect();
  const rights = [...column.querySelectorAll('a, code, span')].map(e => e.getBoundingClientRect().right);
  return {left: box.left, right: box.right, window: window.innerWidth, furthest: Math.max(box.right, ...rights),
          scrollWidth: column.scrollWidth, clientWidth: column.clientWidth};
}"""


def chromium():
    """The path of a Chromium to drive, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    if chromium() is None:
        pytest.skip("chromium is not installed (on Debian: sudo apt-get install chromium; make test-tools does it as "
                    "root)")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


def visit(browser, url):
    """Open `url` in a new window of :data:`WINDOW`: ``{"console": [...], "failed": [...], "contents": ...}``, what
    the console said at the level of a warning or above, each request that failed or answered 400 or more, and the
    Contents column (:data:`CONTENTS`)."""
    page = browser.new_page(viewport=WINDOW)
    seen = {"console": [], "failed": []}
    page.on("console", lambda message: seen["console"].append(f"{message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: seen["console"].append(f"uncaught: {error}"))
    page.on("requestfailed", lambda request: seen["failed"].append(f"{request.url}: {request.failure}"))
    page.on("response", lambda response: seen["failed"].append(f"{response.url}: {response.status}")
            if response.status >= 400 else None)
    try:
        page.goto(url, wait_until="load")  # the theme's scripts (its mode, the Contents) have run on DOMContentLoaded
        seen["contents"] = page.evaluate(CONTENTS)
    finally:
        page.close()
    return seen


def clipped(contents):
    """What of the Contents column `contents` (:data:`CONTENTS`) is outside the window or cut off, or None."""
    if contents is None:
        return None
    if contents["right"] > contents["window"] + SLACK or contents["left"] < 0:
        return (f"the column spans {contents['left']:.0f} to {contents['right']:.0f} px in a window of "
                f"{contents['window']}")
    if contents["furthest"] > contents["right"] + SLACK or contents["scrollWidth"] > contents["clientWidth"] + SLACK:
        return (f"an entry reaches {contents['furthest']:.0f} px, past the column's right edge at "
                f"{contents['right']:.0f} px (cut off)")
    return None


@pytest.fixture(scope="module")
def visited(browser, tmp_path_factory):
    """Every page of the site, built and served: ``{page: what visit saw}``."""
    out, built = shared_site(tmp_path_factory)  # built once for the session, with tests/system/test_docs.py
    assert built.returncode == 0, built.stderr[-3000:]
    pages = sorted(str(path.relative_to(out)) for path in out.rglob("*.html")
                   if not {"_static", "_sources", "_images"} & set(path.relative_to(out).parts))
    with served(out) as url:
        return {page: visit(browser, url + page) for page in pages}


def test_every_page_loads_with_no_console_warning_and_no_failed_request(visited):
    assert "index.html" in visited and len(visited) > 20, sorted(visited)
    said = {page: seen["console"] + seen["failed"] for page, seen in visited.items()
            if seen["console"] + seen["failed"]}
    assert not said, "\n".join(f"{page}: {line}" for page, lines in said.items() for line in lines)


def test_the_contents_column_is_inside_a_1366_px_window_on_every_page(visited):
    assert sum(seen["contents"] is not None for seen in visited.values()) > 10  # the pages with headings have one
    cut = {page: clipped(seen["contents"]) for page, seen in visited.items() if clipped(seen["contents"])}
    assert not cut, "\n".join(f"{page}: {why}" for page, why in cut.items())


BROKEN = """<!doctype html><html><head><title>broken</title>
<style>.bd-sidebar-secondary {position: fixed; left: 1100px; top: 0; width: 250px; overflow: hidden}</style></head>
<body><div class="bd-sidebar-secondary">
<a href="#"><code>an_entry_far_too_long_for_its_column_of_the_page()</code></a></div>
<img src="missing.png" alt="">
<script>console.error("Got invalid theme mode: . Resetting to auto.")</script></body></html>"""


def test_a_console_error_a_missing_file_and_a_cut_off_entry_are_found(browser, tmp_path):
    (tmp_path / "broken.html").write_text(BROKEN)
    with served(tmp_path) as url:
        seen = visit(browser, url + "broken.html")
    assert "error: Got invalid theme mode: . Resetting to auto." in seen["console"], seen  # the 404 may come first
    assert any(line.endswith("/missing.png: 404") for line in seen["failed"]), seen
    assert "past the column's right edge" in clipped(seen["contents"]), seen["contents"]
    seen["contents"].update(left=1200, right=1400)
    assert "in a window of 1366" in clipped(seen["contents"])
