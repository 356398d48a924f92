"""The course site's Sphinx extension: pages made from the repository when the site is built.

- ``{fact}`name```: a number or name read from the code (:mod:`posenc_facts`).
- ``{exercise-table} ASSIGNMENT``: an assignment's exercises, with their difficulty and points, from its notebook.
- ``{limits-table}``: the grading kernel's limits, each default and meaning from ``hardened_grading.sandbox.limits.Limits``,
  and the grader's (``hardened_grading.preprocessors.execute.GRADER_LIMITS``, traitlets of ``ResilientExecute``).
- ``{solutions-table}``: the reference modules and the functions of each exercise.
- ``{engine-settings}``: every setting of the engine (each configurable trait of its classes): its class, default
  and ``help=``, as nbgrader's documentation generates its own.
- ``{get-the-code}``: its content, shell commands run in the course's folder, after the ``git clone`` of the
  repository's public address (:func:`posenc_facts.repository_url`); with no address known, a sentence saying how
  else to get the code, in place of the clone.
- ``{moved-table}``: the engine's old dotted paths and where each name is now (``hardened_grading.moved``).
- ``_generated/``: the release notebooks (the theory, executed here with its figures; each assignment as students
  get it), a page per position scheme (``posenc_course.authoring.schemes``), and what is where (``layout.md``, from
  the tree: :mod:`posenc_layout`), which ``maintainers/layout.md`` includes. Made afresh by every build, never
  edited.
"""

import hashlib
import inspect
import re
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import posenc_facts
import posenc_layout

ROOT = posenc_facts.ROOT
DOCS = ROOT / "docs"
GENERATED = DOCS / "_generated"
log = logging.getLogger(__name__)

HEADING = re.compile(r"^## Exercise (\d+) (★+) (.*?) \(([\d +]+) = (\d+) points\)\s*$", re.M)
SECTION = re.compile(r"^## (\d+)\. (.*)$", re.M)


# -- the role and the tables ------------------------------------------------------------------------------

def fact_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    try:
        value = posenc_facts.value(text.strip())
    except KeyError as error:
        message = inliner.reporter.error(str(error), line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    return [nodes.Text(value)], []


def table(rows, header, widths=None):
    """A docutils table of strings (inline markdown is not parsed: cells are plain or literal)."""
    table_node = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table_node += group
    for width in widths or [1] * len(header):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for parent, cells in [(head, header)] + [(body, row) for row in rows]:
        row_node = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph("", "", *(cell if isinstance(cell, list) else [nodes.Text(str(cell))]))
            row_node += entry
        parent += row_node
    return table_node


def literal(text):
    return [nodes.literal(text, text)]


def exercises_of(assignment):
    """``[(number, stars, title, points)]`` of an assignment, from its release notebook's headings."""
    nb = posenc_facts.notebook(assignment)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return [(int(n), stars, title, int(points)) for n, stars, title, _, points in HEADING.findall(text)]


class ExerciseTable(SphinxDirective):
    """The exercises of an assignment: number, title (a link to it), difficulty, points; and the total."""

    required_arguments = 1

    def run(self):
        assignment = self.arguments[0]
        rows = []
        for number, stars, title, points in exercises_of(assignment):
            ref = nodes.reference("", title, internal=True,
                                  refuri=f"{self.env.app.builder.get_relative_uri(self.env.docname, f'_generated/{assignment}')}"
                                         f"#{label(assignment, number)}")
            rows.append([f"ex{number:02d}", [ref], stars, points])
        rows.append(["", [nodes.strong("", "total")], "", [nodes.strong("", str(posenc_facts.points(assignment)))]])
        return [table(rows, ["#", "topic", "difficulty", "points"], [1, 8, 2, 1])]


class LimitsTable(SphinxDirective):
    """The grading kernel's limits: each ``ResilientExecute`` setting, its default and what it limits."""

    def run(self):
        from dataclasses import fields

        from sphinx.pycode import ModuleAnalyzer

        from hardened_grading.sandbox.limits import Limits

        comments = ModuleAnalyzer.for_module("hardened_grading.sandbox.limits").find_attr_docs()
        from hardened_grading.preprocessors.execute import ResilientExecute

        rows = [[literal(f.name), [nodes.Text(str(f.default))], " ".join(comments.get(("Limits", f.name), [""]))]
                for f in fields(Limits)]
        from hardened_grading.preprocessors.execute import GRADER_LIMITS

        for name in GRADER_LIMITS:
            trait = ResilientExecute.class_traits()[name]
            rows.append([literal(name), [nodes.Text(str(trait.default_value))], trait.help.split(": ")[0] + "."])
        return [table(rows, ["setting", "default", "what it limits"], [3, 1, 8])]


def engine_configurables():
    """``[(class, {name: trait})]``: the engine's classes that have settings (configurable traits of their own), in
    the order of its modules."""
    import importlib
    import pkgutil

    import hardened_grading
    from traitlets import HasTraits

    found = []
    for module_info in pkgutil.walk_packages(hardened_grading.__path__, "hardened_grading."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, HasTraits) and value.__module__ == module.__name__:
                own = {name: trait for name, trait in value.class_own_traits(config=True).items()}
                if own:
                    found.append((value, own))
    return found


class EngineSettings(SphinxDirective):
    """Every setting of the engine, generated from its traitlets' ``help=``: ``c.Class.name``, default, help."""

    def run(self):
        rows = []
        for cls, traits in engine_configurables():
            for name, trait in sorted(traits.items()):
                default = trait.default_value_repr() if hasattr(trait, "default_value_repr") else repr(trait.default_value)
                rows.append([literal(f"c.{cls.__name__}.{name}"), literal(default[:60]),
                             " ".join((trait.help or "(no help)").split()) + f" ({cls.__module__})"])
        return [table(rows, ["setting", "default", "what it does"], [3, 2, 8])]


class MovedTable(SphinxDirective):
    """The engine's old dotted paths (a flat package until 2026-11), and each name's module now."""

    def run(self):
        from hardened_grading.moved import OLD_PATHS, PACKAGE

        rows = []
        for old, moved in sorted(OLD_PATHS.items()):
            if isinstance(moved, str):
                rows.append([literal(f"{PACKAGE}.{old}"), "(the whole module)", literal(f"{PACKAGE}.{moved}")])
            else:
                for module in sorted(set(moved.values())):
                    names = ", ".join(sorted(name for name, where in moved.items() if where == module))
                    rows.append([literal(f"{PACKAGE}.{old}"), names, literal(f"{PACKAGE}.{module}")])
        return [table(rows, ["old module", "names", "now in"], [3, 6, 4])]


class SolutionsTable(SphinxDirective):
    """The reference modules: each with the exercises it answers and their functions."""

    required_arguments = 1

    def run(self):
        import posenc_solutions

        modules = {}
        for exercise, names in posenc_facts.functions_by_exercise(self.arguments[0]).items():
            for name in names:
                module = getattr(posenc_solutions, name).__module__.rsplit(".", 1)[1]
                entry = modules.setdefault(module, ([], []))
                if exercise not in entry[0]:
                    entry[0].append(exercise)
                entry[1].append(name)
        rows = [[literal(module), ", ".join(exercises), sum(([nodes.literal(n, n), nodes.Text(" ")] for n in names), [])]
                for module, (exercises, names) in modules.items()]
        return [table(rows, ["module", "exercises", "functions"], [2, 2, 8])]


#: What the site says where it knows no public address of the repository (:func:`posenc_facts.repository_url`).
NO_ADDRESS = ("Get the code the way your instructor, or the site that sent you here, gave it to you: a clone of the "
              "posenc repository or an archive of it. In its folder, ")


class GetTheCode(SphinxDirective):
    """The commands that get the course and set it up: ``git clone ADDRESS posenc && cd posenc`` first when the
    repository's public address is known, else :data:`NO_ADDRESS` above the commands (never a placeholder that
    reads as a command and fails)."""

    has_content = True

    def run(self):
        address = self.config.posenc_repository_url
        commands = list(self.content)
        found = []
        if address:
            commands.insert(0, f"git clone {address} posenc && cd posenc")
        else:
            found.append(nodes.paragraph("", NO_ADDRESS + "run:"))
        text = "\n".join(commands)
        block = nodes.literal_block(text, text, language="bash")
        self.set_source_info(block)
        return found + [block]


# -- the generated pages -----------------------------------------------------------------------------------

def label(assignment, number):
    return f"{assignment}-ex{number:02d}"


def theory_label(section):
    return f"theory-{section:02d}"


def labelled(nb, pattern, make_label):
    """`nb` with a MyST target line above each heading `pattern` matches (its first group is the number)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = pattern.sub(lambda m: f"({make_label(int(m.group(1)))})=\n{m.group(0)}", cell.source)
    return nb


def executed_theory(cache_folder):
    """The released theory notebook, run top to bottom in a kernel (ipc, like the grader's); cached by content."""
    source = ROOT / "release" / "theory" / "theory.ipynb"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    cached = Path(cache_folder) / f"theory-{digest}.ipynb"
    if cached.exists():
        return nbformat.read(cached, as_version=4)
    import os
    import tempfile

    from nbclient import NotebookClient

    log.info("posenc: running the theory notebook for its figures (once per change of it)")
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(source.parent)}})
    with tempfile.TemporaryDirectory() as folder:  # over Unix sockets: over TCP the kernel warns on every start
        client.km = client.create_kernel_manager()
        client.km.transport, client.km.ip = "ipc", os.path.join(folder, "kernel-ipc")
        client.km.connection_file = os.path.join(folder, "kernel.json")
        client.execute()
    cached.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, cached)
    return nb


def write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def theory_sections():
    """``{number: title}`` of the released theory notebook's numbered sections."""
    nb = nbformat.read(ROOT / "release" / "theory" / "theory.ipynb", as_version=4)
    return {int(n): title for n, title in SECTION.findall("\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))}


def scheme_page(scheme, theory):
    """The page of `scheme`; `theory` is :func:`theory_sections`."""
    import posenc_solutions

    lines = [f"# {scheme.name}", "", scheme.summary, "", "## Read", ""]
    lines += [f"- Theory, {{ref}}`§{n}. {theory[n]} <{theory_label(n)}>`" for n in scheme.theory]
    lines += ["", "## Practise", ""]
    modules = {}
    for assignment, number in scheme.exercises:
        title = dict((n, t) for n, _, t, _ in exercises_of(assignment))[number]
        lines.append(f"- `{assignment}`, {{ref}}`exercise {number}: {title} <{label(assignment, number)}>`")
        for name in posenc_facts.functions_by_exercise(assignment)[f"ex{number:02d}"]:
            function = getattr(posenc_solutions, name)
            modules.setdefault(function.__module__, []).append(
                f"{{py:func}}`{name}{inspect.signature(function)} <posenc_solutions.{name}>`")
    lines += ["", "## Compare, when you are done", "",
              "The reference solutions, in the repository (the site does not show them: work the exercise first). "
              "Each function links to its contract:", ""]
    for module, signatures in modules.items():
        path = module.replace(".", "/") + ".py"
        lines.append(f"- `{path}`: {', '.join(signatures)}")
    return "\n".join(lines) + "\n"


def contract_page(assignment):
    """The functions of `assignment`, exercise by exercise: each signature and docstring (autodoc)."""
    titles = {n: t for n, _, t, _ in exercises_of(assignment)}
    lines = [f"# The functions of `{assignment}`", ""]
    for exercise, names in posenc_facts.functions_by_exercise(assignment).items():
        number = int(exercise[2:])
        lines += [f"## {exercise}: {titles[number]}", "",
                  f"In the notebook: {{ref}}`exercise {number} <{label(assignment, number)}>`.", ""]
        for name in names:
            lines += [f"```{{eval-rst}}", f".. autofunction:: posenc_solutions.{name}", "```", ""]
    return "\n".join(lines)


#: The project's parts, bottom layer first: a part may import only parts of lower layers. The bottom two do not
#: import each other: the engine knows no course, and the reference solutions are plain numpy.
LAYERS = (
    ("the engine, the reference solutions", ("hardened_grading", "posenc_solutions")),
    ("the course's tooling", ("posenc_course",)),
    ("the proofs and the site", ("tests", "benchmarks", "docs")),
)
#: Where a part's code is in the repository, where it is not the folder of its name: the engine is a distribution
#: of its own, in engine/.
FOLDER_OF = {"hardened_grading": "engine/hardened_grading"}


def imports_between_parts(root=ROOT):
    """``{(importer, imported): number of import statements}`` between the project's parts in the repository at
    `root`, read with ``ast``."""
    import ast

    parts = [p for _, names in LAYERS for p in names]
    counts = {}
    for part in parts:
        for path in (Path(root) / FOLDER_OF.get(part, part)).rglob("*.py"):
            if "_build" in path.parts or "_generated" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
                for name in names:
                    top = name.split(".")[0]
                    if top in parts and top != part:
                        counts[(part, top)] = counts.get((part, top), 0) + 1
    return counts


def layer_of(part):
    """The row of :data:`LAYERS` that `part` is in, 0 at the bottom."""
    return next(row for row, (_, parts) in enumerate(LAYERS) if part in parts)


def layer_breaks(counts):
    """The imports of `counts` (:func:`imports_between_parts`) that break the layers, each a sentence that says where
    and what to do: a part imports only parts of lower layers (the tests and the benchmarks share what both need
    through the course's tooling, ``posenc_course/qa/``, not through each other)."""
    return [f"{importer}/ imports {imported} ({count} import statement{'s' * (count != 1)}), which is not in a layer "
            f"below it: move what it needs into a lower layer (what tests/ and benchmarks/ share goes in "
            f"posenc_course/qa/), or the import out"
            for (importer, imported), count in sorted(counts.items()) if layer_of(imported) >= layer_of(importer)]


#: The picture's geometry, in data units: the distance between rows, a box's half height (with its padding), the
#: width the parts of a row spread over, the vertical handle of the arrows' curves, and the clearance of a lane.
ROW, HALF, WIDTH, HANDLE, CLEAR = 1.8, 0.3, 6.0, 0.55, 0.3


def draw_layers(path):
    """The architecture's picture (:func:`layers_figure` of the code's imports), into the SVG `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.style.context("default"), plt.rc_context({"svg.hashsalt": "posenc", "font.size": 10}):
        fig = layers_figure(imports_between_parts())
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close(fig)


def layers_figure(counts):
    """The picture of `counts` (:func:`imports_between_parts`): each layer a row of boxes, bottom first; each import
    an arrow from the importer's box to the imported's, labelled with its count. An arrow down one layer is a curve
    between the two boxes; one that skips a layer goes down a lane beside that layer's boxes, never across them; an
    import that breaks the layers (:func:`layer_breaks`) is red, over the row or up. The figure is returned open."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.6))
    ax.set(xlim=(-3.6, WIDTH + 0.2), ylim=(-0.6, ROW * (len(LAYERS) - 1) + 1.0))
    ax.axis("off")
    boxes = draw_boxes(ax)
    fig.canvas.draw()  # the boxes' extents, from their text, in data units
    extents = {part: box_extent(ax, text) for part, text in boxes.items()}
    for route in arrow_routes(counts, extents):
        draw_arrow(ax, route)
    return fig


def draw_boxes(ax):
    """Each layer's title and its parts' boxes, a row per layer; ``{part: its text}``."""
    boxes = {}
    for row, (title, parts) in enumerate(LAYERS):
        y = row * ROW
        ax.text(-0.2, y, title, ha="right", va="center", fontsize=10, style="italic")
        for i, part in enumerate(parts):
            x = (i + 0.5) * WIDTH / len(parts)
            boxes[part] = ax.text(x, y, part, ha="center", va="center", family="monospace",
                                  bbox={"boxstyle": "round,pad=0.5", "facecolor": f"C{row}", "alpha": 0.25})
    return boxes


def box_extent(ax, text):
    """``(x0, y0, x1, y1)`` of `text`'s box, in data units (the figure drawn once)."""
    extent = text.get_bbox_patch().get_window_extent().transformed(ax.transData.inverted())
    return extent.x0, extent.y0, extent.x1, extent.y1


def spread(extent, index, count):
    """The x of the `index`-th of `count` arrows that leave or reach a box of `extent`, spread over its middle."""
    x0, _, x1, _ = extent
    middle, reach = (x0 + x1) / 2, (x1 - x0) * 0.3
    return middle if count == 1 else middle - reach + 2 * reach * index / (count - 1)


def lanes(counts, extents):
    """``{(importer, imported): x}``: where each arrow that skips a layer passes the layers between, beside their
    boxes (left of them for a part on the left, else right), spread over the free width, ordered by importer."""
    skipping = sorted((key for key in counts if layer_of(key[0]) - layer_of(key[1]) >= 2),
                      key=lambda key: (extents[key[0]][0], extents[key[1]][0]))
    sides = {"left": [], "right": []}
    for importer, imported in skipping:
        between = [extents[p] for row in range(layer_of(imported) + 1, layer_of(importer)) for p in LAYERS[row][1]]
        left, right = min(e[0] for e in between) - CLEAR, max(e[2] for e in between) + CLEAR
        target = (extents[imported][0] + extents[imported][2]) / 2
        if target < (left + right) / 2:
            sides["left"].append(((importer, imported), (0.2, left)))
        else:
            sides["right"].append(((importer, imported), (right, WIDTH - 0.2)))
    return {key: low + (high - low) * (i + 1) / (len(keys) + 1)
            for keys in sides.values() for i, (key, (low, high)) in enumerate(keys)}


def arrow_routes(counts, extents):
    """``[(start, handles, end, label point, count, breaks)]``: each arrow of `counts` as points in data units, its
    start on the importer's box edge and its end on the imported's (spread when a box has several), the handles of
    its curve (through a lane beside a skipped layer), where its count goes, and whether it breaks the layers."""
    through = lanes(counts, extents)
    centre = {part: (e[0] + e[2]) / 2 for part, e in extents.items()}
    outgoing, incoming = {}, {}  # in the order of where each arrow heads next, so that arrows of a box do not cross
    for importer, imported in sorted(counts, key=lambda key: through.get(key, centre[key[1]])):
        outgoing.setdefault(importer, []).append(imported)
    for importer, imported in sorted(counts, key=lambda key: through.get(key, centre[key[0]])):
        incoming.setdefault(imported, []).append(importer)
    routes = []
    for (importer, imported), count in sorted(counts.items()):
        x0 = spread(extents[importer], outgoing[importer].index(imported), len(outgoing[importer]))
        x1 = spread(extents[imported], incoming[imported].index(importer), len(incoming[imported]))
        drop = layer_of(importer) - layer_of(imported)
        if drop >= 1:  # down: from the importer's bottom edge to the imported's top edge
            start, end = (x0, extents[importer][1]), (x1, extents[imported][3])
            if drop == 1:
                handles = [(x0, start[1] - HANDLE), (x1, end[1] + HANDLE)]
                label = (x0 + 0.5 * (x1 - x0), (start[1] + end[1]) / 2)
            else:
                lane = (through[(importer, imported)], (start[1] + end[1]) / 2)
                handles = [(x0, start[1] - HANDLE), (lane[0], lane[1] + HANDLE), lane,
                           (lane[0], lane[1] - HANDLE), (x1, end[1] + HANDLE)]
                label = lane
        elif drop == 0:  # along the row: over it, from the top edge to the top edge
            start, end = (x0, extents[importer][3]), (x1, extents[imported][3])
            handles = [(x0, start[1] + HANDLE), (x1, end[1] + HANDLE)]
            label = ((x0 + x1) / 2, start[1] + 0.75 * HANDLE)
        else:  # up: from the importer's top edge to the imported's bottom edge
            start, end = (x0, extents[importer][3]), (x1, extents[imported][1])
            handles = [(x0, start[1] + HANDLE), (x1, end[1] - HANDLE)]
            label = (x0 + 0.25 * (x1 - x0), start[1] + 0.3 * (end[1] - start[1]))
        routes.append((start, handles, end, label, count, drop < 1))
    return routes


def draw_arrow(ax, route):
    """One arrow of :func:`arrow_routes`: a smooth curve (cubic segments through its lane) and its count."""
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path as Curve

    start, handles, end, label, count, breaks = route
    points = [start, *handles, end]
    codes = [Curve.MOVETO] + [Curve.CURVE4] * (len(points) - 1)
    colour = "C3" if breaks else "0.45"
    ax.add_patch(FancyArrowPatch(path=Curve(points, codes), arrowstyle="-|>", mutation_scale=9, color=colour,
                                 linewidth=1.0, shrinkA=0, shrinkB=0))
    ax.text(*label, str(count), fontsize=8, color="C3" if breaks else "0.2", ha="center", va="center",
            bbox={"facecolor": "white", "edgecolor": colour if breaks else "0.8", "pad": 1})


def generate(app):
    """Write ``_generated/``: the notebooks, the scheme pages and what is where, each only when its text changed."""
    from posenc_course.layout import GRADED
    from posenc_course.authoring.schemes import SCHEMES

    theory = labelled(executed_theory(Path(app.outdir).parent / ".theory-cache"), SECTION, theory_label)
    theory.metadata.setdefault("mystnb", {})["execution_mode"] = "off"
    write_if_changed(GENERATED / "theory.ipynb", nbformat.writes(theory))
    for assignment in GRADED:
        nb = labelled(nbformat.read(ROOT / "release" / assignment / "exercises.ipynb", as_version=4),
                      re.compile(r"^## Exercise (\d+) .*$", re.M), lambda n, a=assignment: label(a, n))
        nb.metadata.setdefault("mystnb", {})["execution_mode"] = "off"
        for cell in nb.cells:  # the set-up (imports, the check_* helpers, the progress tracker): one click away
            if cell.cell_type == "markdown" and "## Exercise 1 " in cell.source:
                break
            if cell.cell_type == "code":
                cell.metadata["tags"] = sorted(set(cell.metadata.get("tags", [])) | {"hide-input"})
        write_if_changed(GENERATED / f"{assignment}.ipynb", nbformat.writes(nb))
    for assignment in GRADED:
        write_if_changed(GENERATED / "contract" / f"{assignment}.md", contract_page(assignment))
    draw_layers(GENERATED / "architecture.svg")
    write_if_changed(GENERATED / "layout.md", posenc_layout.layout_page())
    sections = theory_sections()
    for scheme in SCHEMES:
        write_if_changed(GENERATED / "schemes" / f"{scheme.slug}.md", scheme_page(scheme, sections))
    index = ["# Position schemes", "", "Each scheme: the theory to read, the exercises to work, and the reference "
             "module to compare with.", "", "```{toctree}", ":maxdepth: 1", ""] + [s.slug for s in SCHEMES] + ["```", ""]
    write_if_changed(GENERATED / "schemes" / "index.md", "\n".join(index))
    for stale in (GENERATED / "schemes").glob("*.md"):
        if stale.stem not in {s.slug for s in SCHEMES} | {"index"}:
            stale.unlink()


def setup(app):
    app.add_role("fact", fact_role)
    app.add_directive("exercise-table", ExerciseTable)
    app.add_directive("limits-table", LimitsTable)
    app.add_directive("solutions-table", SolutionsTable)
    app.add_directive("engine-settings", EngineSettings)
    app.add_directive("moved-table", MovedTable)
    app.add_directive("get-the-code", GetTheCode)
    # a config value, so that a build for another address (POSENC_REPOSITORY_URL) writes the pages again
    app.add_config_value("posenc_repository_url", posenc_facts.repository_url(), "env")
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
