"""The course site (``make docs``): it builds with no warning, its links hold, it shows no answer, the theory
keeps its figures, and no number the code knows is typed by hand in it or in the README.

The site is built once, as ``make docs`` builds it, into a temporary folder. The checks that read it are
plain functions, each also shown failing on a page made to break it.
"""

import base64
import html
import io
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import numpy as np
import pytest

from posenc_course.authoring import overview
from posenc_course.instructor import demo
from posenc_course.layout import GRADED, ROOT, release_notebook, source_notebook
from posenc_course.authoring.schemes import SCHEMES

from ..helpers.site import shared_site

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import posenc_docs  # noqa: E402
import posenc_facts  # noqa: E402

#: README: a short page, the docs hold the manual.
README_MAX_LINES = 150
#: The hand-written pages, and what they include: where a typed number would hide.
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if not {"_build", "_generated"} & set(p.parts))
TYPED_SOURCES = PAGES + [ROOT / "README.md", ROOT / "authoring" / "README.md", ROOT / "authoring" / "mutants.md"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built as `make docs` builds it (warnings are errors, all reported), once for the session (shared
    with tests/system/test_site_browser.py): ``(html folder, log)``."""
    return shared_site(tmp_path_factory)


class Page(HTMLParser):
    """A page's links, image sources, element ids and visible text."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.links, self.images, self.ids, self.text, self._skip = [], [], set(), [], 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def pages_of(folder):
    return {path: Page(path.read_text()) for path in folder.rglob("*.html")}


def broken_links(folder):
    """``[(page, link)]``: internal links and images whose file, or whose ``#anchor`` in it, is not there."""
    pages = pages_of(folder)
    broken = []
    for path, page in pages.items():
        for link in page.links + page.images:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("mailto:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append((path.relative_to(folder), link))
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else Page(target.read_text()).ids
                if unquote(parts.fragment) not in ids:
                    broken.append((path.relative_to(folder), link))
    return broken


MARKED = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", re.S)


def secret_lines():
    """Every line of a solution or a hidden test of the source notebooks that the released notebooks (what
    students get, and the theory) do not hold anyway: ``{line: grade id}``. Blank lines and lone brackets are left out."""
    public = set()
    for notebook in [release_notebook(a) for a in GRADED] + [ROOT / "release" / "theory" / "theory.ipynb"]:
        for cell in nbformat.read(notebook, as_version=4).cells:
            public.update(line.strip() for line in cell.source.splitlines())
    secrets = {}
    for assignment in GRADED:
        for cell in nbformat.read(source_notebook(assignment), as_version=4).cells:
            for _, body in MARKED.findall(cell.source):
                for line in body.splitlines():
                    line = line.strip()
                    if len(line) >= 6 and line not in public and re.search(r"\w{2}", line):
                        secrets[line] = cell.metadata.get("nbgrader", {}).get("grade_id", "?")
    return secrets


def leaks(texts, secrets):
    """``[(page, secret line, grade id)]``: each line of `secrets` that a page's text holds as a line."""
    found = []
    for name, text in texts.items():
        lines = {line.strip() for line in html.unescape(text).splitlines()}
        found += [(name, line, grade) for line, grade in secrets.items() if line in lines]
    return found


# -- the build ------------------------------------------------------------------------------------------------

def test_the_site_builds_with_no_warning(site):
    out, result = site
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert "WARNING" not in result.stderr and "ERROR" not in result.stderr, result.stderr[-5000:]
    assert (out / "index.html").exists()


def test_every_internal_link_and_anchor_resolves(site):
    out, _ = site
    pages = pages_of(out)
    assert len(pages) > 30, f"only {len(pages)} pages were built"
    assert not broken_links(out)


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "a.html").write_text('<p id="here">x</p><a href="a.html#here">ok</a><a href="b.html">gone</a>'
                                     '<a href="a.html#nowhere">bad anchor</a><a href="https://x.org/">out</a>')
    assert sorted(link for _, link in broken_links(tmp_path)) == ["a.html#nowhere", "b.html"]


# -- what students must not see -------------------------------------------------------------------------------

def test_no_page_shows_a_solution_or_a_hidden_test(site):
    out, _ = site
    secrets = secret_lines()
    assert len(secrets) > 500, "the source notebooks' solutions and hidden tests were not found"
    texts = {str(path.relative_to(out)): "".join(page.text) for path, page in pages_of(out).items()}
    sources = {str(path.relative_to(out)): path.read_text() for path in (out / "_sources").rglob("*") if path.is_file()}
    assert not leaks(texts | sources, secrets)


def test_a_leaked_solution_or_hidden_test_is_found():
    secrets = secret_lines()
    solution = next(line for line, grade in secrets.items() if "answer" not in grade and "return" in line)
    hidden = next(line for line, grade in secrets.items() if grade.endswith("_test") and "check" in line)
    page = f"<pre>x = 1\n  {html.escape(solution)}\n</pre><p>{html.escape(hidden)}</p>"
    text = "".join(Page(page).text)
    assert {line for _, line, _ in leaks({"page": text}, secrets)} == {solution, hidden}


def test_a_concept_answer_is_a_secret():
    """The concept questions' answers (short lines) are among the lines looked for."""
    secrets = secret_lines()
    answers = [line for line, grade in secrets.items() if grade.endswith("_answer")]
    assert len(answers) >= sum(posenc_facts.exercises(a) for a in GRADED)


# -- the theory's figures, and what is generated --------------------------------------------------------------

def figures_per_section():
    """``{section title: plt.show() calls}`` of the theory notebook, in order: what each section draws."""
    counts, current = {}, None
    for cell in nbformat.read(ROOT / "release" / "theory" / "theory.ipynb", as_version=4).cells:
        if cell.cell_type == "markdown":
            for match in posenc_docs.SECTION.finditer(cell.source):
                current = f"{match.group(1)}. {match.group(2)}"
                counts[current] = 0
        elif current:
            counts[current] += cell.source.count("plt.show()")
    return counts


def images_per_section(page_html):
    """``{section title: images}`` of the rendered theory page: the images between one section's heading and the next."""
    parts = re.split(r"<h2[^>]*>(.*?)</h2>", page_html, flags=re.S)
    counts = {}
    for title, body in zip(parts[1::2], parts[2::2]):
        title = html.unescape(re.sub(r"<[^>]+>", "", title)).replace("#", "").replace("\u2019", "'").strip()
        counts[title] = len(re.findall(r"<img [^>]*src=\"[^\"]+\.png\"", body))
    return counts


def test_each_theory_section_shows_its_figures(site):
    out, _ = site
    expected = figures_per_section()
    assert sum(expected.values()) == posenc_facts.theory_figures() > 0
    shown = images_per_section((out / "_generated" / "theory.html").read_text())
    assert {title: shown.get(title) for title in expected} == expected


def test_the_generated_tables_show_the_codes_values(site):
    out, _ = site
    from dataclasses import fields

    from hardened_grading.sandbox.limits import Limits

    safely = "".join(Page((out / "instructors" / "grading-safely.html").read_text()).text)
    for field in fields(Limits):
        assert re.search(rf"{field.name}\s*{field.default}\b", safely), field.name
    from hardened_grading.preprocessors.execute import GRADER_LIMITS, ResilientExecute

    for name in GRADER_LIMITS:
        assert re.search(rf"{name}\s*{ResilientExecute.class_traits()[name].default_value}\b", safely), name
    assignments = "".join(Page((out / "course" / "assignments.html").read_text()).text)
    for assignment in GRADED:
        assert re.search(rf"total\s*{posenc_facts.points(assignment)}\b", assignments)


def test_the_workflow_page_shows_the_demo_s_table_as_make_demo_recorded_it(site):
    """The one score table of the page is the one in ``make demo-record``'s kept output (docs/measured/demo.txt), which
    tests/grading/test_class_report.py holds against a real autograde of the same three students."""
    out, _ = site
    recorded = demo.recorded_table(demo.RECORDED.read_text())
    shown = html.unescape("".join(Page((out / "instructors" / "workflow.html").read_text()).text))
    assert recorded in shown, f"instructors/workflow.html does not show the table of {demo.RECORDED}:\n{recorded}"
    assert shown.count("demo-mistakes ") == 1, "instructors/workflow.html shows a score table typed by hand too"
    assert str(ROOT) not in demo.RECORDED.read_text(), f"{demo.RECORDED} names this machine's folder {ROOT}"


def test_the_self_study_page_says_how_to_get_the_code_with_no_placeholder(site):
    """The clone line names the repository's address when one is known (posenc_facts.repository_url), else the page
    says how else to get the code: never REPOSITORY-URL, which reads as a command and fails."""
    out, _ = site
    shown = html.unescape("".join(Page((out / "learn" / "self-study.html").read_text()).text))
    assert "REPOSITORY-URL" not in shown, "learn/self-study.html shows a placeholder for the repository's address"
    address = posenc_facts.repository_url()
    expected = f"git clone {address} posenc" if address else posenc_docs.NO_ADDRESS.strip()
    assert " ".join(expected.split()) in " ".join(shown.split()), f"learn/self-study.html does not say {expected!r}"


def test_the_repository_address_is_a_public_one_from_one_setting(tmp_path):
    """The setting wins, then pyproject.toml; a local path (a clone of a clone) is no address; no credential shows."""
    assert posenc_facts.public_address("https://user:token@example.org/posenc.git") == "https://example.org/posenc.git"
    assert posenc_facts.public_address("git@example.org:course/posenc.git") == "git@example.org:course/posenc.git"
    for local in ("/work/posenc", "file:///work/posenc", "../posenc", "", None):
        assert posenc_facts.public_address(local) is None, local
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\n\n[project.urls]\nRepository = "https://example.org/from-pyproject"\n')
    empty = tmp_path / "empty"
    empty.mkdir()  # no git repository: no origin
    assert posenc_facts.repository_url({}, pyproject, empty) == "https://example.org/from-pyproject"
    assert posenc_facts.repository_url({posenc_facts.REPOSITORY_SETTING: "https://example.org/set"}, pyproject,
                                       empty) == "https://example.org/set"
    pyproject.write_text('[project]\nname = "x"\n')
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    subprocess.run(["git", "remote", "add", "origin", "/somewhere/local"], cwd=empty, check=True)
    assert posenc_facts.repository_url({}, pyproject, empty) is None
    subprocess.run(["git", "remote", "set-url", "origin", "https://example.org/origin.git"], cwd=empty, check=True)
    assert posenc_facts.repository_url({}, pyproject, empty) == "https://example.org/origin.git"


def test_every_exercise_belongs_to_a_scheme_and_every_scheme_section_exists():
    exercises = {(a, n) for a in GRADED for n, *_ in posenc_docs.exercises_of(a)}
    assert len(exercises) == sum(posenc_facts.exercises(a) for a in GRADED)
    assert {e for s in SCHEMES for e in s.exercises} == exercises
    assert {n for s in SCHEMES for n in s.theory} <= set(posenc_docs.theory_sections())


#: An embedded PNG of the overview figure, and the id matplotlib makes from its bytes.
EMBEDDED_PNG = re.compile(rb'data:image/png;base64,\s*([A-Za-z0-9+/=\s]+)"( id="image[0-9a-f]+")?')


def figure_parts(svg):
    """`svg` (bytes) without its embedded PNGs, and the PNGs' pixels (arrays)."""
    import matplotlib.image

    images = [matplotlib.image.imread(io.BytesIO(base64.b64decode(match.group(1))), format="png")
              for match in EMBEDDED_PNG.finditer(svg)]
    return EMBEDDED_PNG.sub(b'data:image/png"', svg), images


def test_the_overview_figure_is_what_its_module_draws(tmp_path):
    """The same figure, even in a process whose matplotlib settings were changed (as the theory's are): the same
    SVG, and embedded images whose pixels differ by at most 2 levels of 255, in at most 1% of them. numpy's sin
    and exp differ in their last bits from one CPU to another, which moves a few pixels of the heat maps by a
    level or two (and so their PNG bytes, and the ids matplotlib makes from them): what this machine drew had
    0.07% of one map's pixels 2 levels off what CI's had."""
    import matplotlib.pyplot as plt

    with plt.rc_context({"figure.dpi": 90, "axes.grid": True, "font.size": 14}):
        drawn, drawn_images = figure_parts(overview.write(tmp_path / "overview.svg").read_bytes())
    kept, kept_images = figure_parts(overview.FIGURE.read_bytes())
    stale = "docs/_static/overview.svg is stale: python -m posenc_course.authoring.overview"
    assert drawn == kept, stale
    assert drawn_images and [image.shape for image in drawn_images] == [image.shape for image in kept_images], stale
    for new, old in zip(drawn_images, kept_images):
        off = np.abs(new - old)
        assert off.max() <= 2.5 / 255 and (off > 0).mean() <= 0.01, (stale, off.max() * 255, (off > 0).mean())


# -- numbers typed by hand ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", TYPED_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_fact_of_the_code_is_typed_by_hand(path):
    found = posenc_facts.typed_by_hand(path.read_text())
    assert not found, "\n".join(f"{path.relative_to(ROOT)}:{line}: {text!r} is fact {name}: write {{fact}}`{name}`"
                                for name, line, text in found)


def test_a_typed_fact_is_found():
    limits = posenc_facts.facts()
    text = ("A fine line: {fact}`limits.memory_mb` MiB.\n"
            f"The kernel has {limits['limits.memory_mb'].text()} MiB.\n"
            f"There are {posenc_facts.word(posenc_facts.exercises('posenc'))} graded exercises.\n"
            "```text\nquoted output: 3072 MiB\n```\n"
            f"bound: `{posenc_facts.system_files()[0]}`\n")
    assert sorted((name, line) for name, line, _ in posenc_facts.typed_by_hand(text)) == [
        ("limits.memory_mb", 2), ("posenc.exercises", 3), (f"system_file:{posenc_facts.system_files()[0]}", 7)]


def test_the_readme_names_the_supported_pythons_of_pyproject():
    """The README cannot read the code, so the one range it types is checked against the classifiers."""
    versions = posenc_facts.python_versions()
    assert f"CPython {versions[0]} to {versions[-1]}" in (ROOT / "README.md").read_text()


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; the manual goes in docs/"
