"""Build the nbgrader source notebooks from their literate specs and the reference package.

Each spec (``authoring/exercises.md``, ``authoring/theory.md``) is markdown. Text becomes markdown cells, split
at lines holding only ``+++``. Fenced code blocks become code cells; the words after
```` ```python ```` say what kind:

``python``                            a plain code cell
``python locked ID``                  a read-only cell (helpers the tests use)
``python locked ID include=FILE``     the same, its code read from ``authoring/FILE`` (shared by specs)
``python solution ID``                a solution cell; the code holds ``### BEGIN/END SOLUTION``
``python solution ID from=f1,f2``     a solution cell filled with the source of ``posenc_solutions.f1``
                                      and ``f2``: signature and docstring kept, body between markers
``python tests ID points=N``          an autograded test cell, hidden tests between
                                      ``### BEGIN/END HIDDEN TESTS``
``markdown answer ID points=N``       a written answer (a reflection), graded by hand: nbgrader's manually graded
                                      answer, its model answer and rubric between ``### BEGIN/END SOLUTION``;
                                      the release shows the text stub there, and the feedback the model answer
                                      after the due date (``hardened_grading.preprocessors.model_answers``)

The solution code therefore has one source of truth: ``posenc_solutions``.

Building checks the spec as it goes and stops with every mistake it finds, each at its file and line
(:class:`AuthoringError`): an unknown cell kind, a fence without its grade id or never closed, a
duplicated grade id, a grade id that does not belong to its ``## Exercise N``, a test cell without
points, a heading whose ``(1 + 2 = 3 points)`` disagrees with its test cells, a solution cell without
its markers. Then every test cell is run once against the reference answers, through the real judge
(:mod:`posenc_course.authoring.dryrun`): a test that fails, or that passes the answers something the judge cannot
carry to the kernel, is reported at its line. ``authoring/README.md`` is the guide.

    python -m posenc_course.authoring.notebook          # write source/*/*.ipynb (the exercises and the theory)
    python -m posenc_course.authoring.notebook --check  # exit 1 if a committed notebook is stale
"""

import argparse
import ast
import hashlib
import inspect
import json
import pprint
import re
import sys
import textwrap

import nbformat

import posenc_solutions
from hardened_grading.attempts import NOT_ATTEMPTED, STARTED
from hardened_grading.judge import messages

from . import dryrun
from ..class_report import CONCEPT_STUB, NOT_ANSWERED
from ..layout import ADVANCED, ASSIGNMENT, CURRENT, ROOT, source_notebook
#: spec -> source notebook, one per nbgrader assignment
NOTEBOOKS = {
    ROOT / "authoring" / "exercises.md": source_notebook(ASSIGNMENT),
    ROOT / "authoring" / "advanced.md": source_notebook(ADVANCED),
    ROOT / "authoring" / "current.md": source_notebook(CURRENT),
    ROOT / "authoring" / "theory.md": ROOT / "source" / "theory" / "theory.ipynb",
}

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
#: What ipykernel says of its language on the course's reference Python, 3.11.7. JupyterLab writes the
#: kernel's ``language_info`` into a notebook it opens, and marks the notebook modified unless it is the
#: same already: on that Python a fresh notebook opens unmodified; on another, JupyterLab changes only
#: the version.
LANGUAGE_INFO = {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                 "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                 "pygments_lexer": "ipython3", "version": "3.11.7"}

FENCE = re.compile(r"^```(?P<language>python|markdown)(?P<info>[^\n]*)\n(?P<code>.*?)^```\s*$", re.S | re.M)
OPENING = re.compile(r"^```(?:python|markdown)\b", re.M)
EXERCISE_HEADING = re.compile(r"^## Exercise (?P<number>\d+)\b.*?(?:\((?P<parts>[\d.+\s]+)=\s*(?P<total>[\d.]+) points?\))?\s*$", re.M)
GRADE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
KINDS = ("locked", "solution", "tests")
OPTIONS = {"from": ("solution",), "points": ("tests",), "include": ("locked",)}
#: Where ``include=FILE`` looks: code that more than one spec shares (the check helpers).
INCLUDES = ROOT / "authoring"


class AuthoringError(ValueError):
    """Mistakes in a spec, each ``FILE:LINE: what is wrong, and what to do``."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def solution_source(name):
    """Source of ``posenc_solutions.<name>`` with its body wrapped in solution markers."""
    source = textwrap.dedent(inspect.getsource(getattr(posenc_solutions, name)))
    function = ast.parse(source).body[0]
    body = function.body
    first = body[1] if ast.get_docstring(function) is not None else body[0]
    lines = source.rstrip("\n").split("\n")
    head, tail = lines[:first.lineno - 1], lines[first.lineno - 1:]
    indent = re.match(r"\s*", tail[0]).group(0)
    return "\n".join(head + [indent + "### BEGIN SOLUTION"] + tail + [indent + "### END SOLUTION"])


def nbgrader_metadata(kind, grade_id, points=None):
    meta = {"grade": kind == "tests", "solution": kind == "solution", "locked": kind != "solution",
            "task": False, "schema_version": 3, "grade_id": grade_id}
    if kind == "tests":
        meta["points"] = points
    return meta


def code_cell(info, code, where="<spec>"):
    """The code cell of a fence whose words after ```` ```python ```` are `info`; `where` is its
    ``FILE:LINE``, for the AuthoringError of a malformed fence."""
    def fail(message):
        raise AuthoringError([f"{where}: ```python {info}: {message}"])

    words = info.split()
    options = dict(word.split("=", 1) for word in words if "=" in word)
    plain = [word for word in words if "=" not in word]
    cell = nbformat.v4.new_code_cell(code.rstrip("\n"))
    if not words:
        return cell
    if not plain or plain[0] not in KINDS:
        fail(f"the cell kind must come first, one of {', '.join(KINDS)}, as in ```python tests ex01_name_test points=2")
    kind, grade_id = plain[0], plain[1] if len(plain) > 1 else None
    if grade_id is None:
        fail(f"a {kind} cell needs its grade id after the kind, as in ```python {kind} ex01_name")
    if len(plain) > 2:
        fail(f"one grade id only; what are {' '.join(plain[2:])!r}?")
    if not GRADE_ID.match(grade_id):
        fail(f"grade id {grade_id!r}: letters, digits and _ only, starting with a letter")
    for key in options:
        if kind not in OPTIONS.get(key, ()):
            fail(f"{key}= is not an option of a {kind} cell" + (f" (only of {', '.join(OPTIONS[key])} cells)" if key in OPTIONS else ""))
    if "include" in options:
        included = INCLUDES / options["include"]
        if not included.is_file():
            fail(f"include={options['include']}: there is no {included}: the file goes in authoring/")
        if cell.source.strip():
            fail(f"a cell with include= takes its code from {options['include']}: leave the fence empty")
        cell.source = included.read_text().rstrip("\n")
    if "from" in options:
        missing = [name for name in options["from"].split(",") if not hasattr(posenc_solutions, name)]
        if missing:
            fail(f"posenc_solutions has no {', '.join(missing)}: define it there (and export it from "
                 "posenc_solutions/__init__.py), or fix the name")
        sources = [solution_source(name) for name in options["from"].split(",")]
        cell.source = "\n\n\n".join(filter(None, [cell.source] + sources))
    if kind == "solution" and not ("### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source):
        fail("a solution cell needs its answer between ### BEGIN SOLUTION and ### END SOLUTION, or from=FUNCTION")
    if kind == "tests" and ("### BEGIN HIDDEN TESTS" in cell.source) != ("### END HIDDEN TESTS" in cell.source):
        fail("hidden tests go between ### BEGIN HIDDEN TESTS and ### END HIDDEN TESTS: one of the two is missing")
    points = None
    if kind == "tests":
        try:
            points = float(options["points"])
        except KeyError:
            fail("a test cell needs its points, as in points=2")
        except ValueError:
            fail(f"points={options['points']} is not a number")
        if not points > 0:
            fail("points must be more than 0")
    cell.metadata["nbgrader"] = nbgrader_metadata(kind, grade_id, points)
    return cell


def answer_cell(info, text, where="<spec>"):
    """The written answer cell of a ```` ```markdown answer ID points=N ```` fence holding `text`: nbgrader's manually
    graded answer (a markdown solution and grade cell) worth N points, whose model answer lies between
    ``### BEGIN SOLUTION`` and ``### END SOLUTION``;
    `where` is its ``FILE:LINE``, for the AuthoringError of a malformed fence."""
    def fail(message):
        raise AuthoringError([f"{where}: ```markdown {info}: {message}"])

    words = info.split()
    options = dict(word.split("=", 1) for word in words if "=" in word)
    plain = [word for word in words if "=" not in word]
    if plain[:1] != ["answer"]:
        fail("a markdown fence is a written answer: ```markdown answer ex01_reflection points=2")
    if len(plain) != 2 or not GRADE_ID.match(plain[1]):
        fail("a written answer needs its grade id after answer: ```markdown answer ex01_reflection points=2")
    if set(options) != {"points"}:
        fail("a written answer takes points= (what a grader can give it), and nothing else")
    try:
        points = float(options["points"])
    except ValueError:
        fail(f"points={options['points']} is not a number")
    if not points >= 0:
        fail("points must be 0 or more")
    if not ("### BEGIN SOLUTION" in text and "### END SOLUTION" in text):
        fail("a written answer holds its model answer between ### BEGIN SOLUTION and ### END SOLUTION")
    cell = nbformat.v4.new_markdown_cell(text.strip("\n"))
    cell.metadata["nbgrader"] = {**nbgrader_metadata("solution", plain[1]), "grade": True, "points": points}
    return cell


def markdown_cells(text):
    for chunk in re.split(r"^\+\+\+\s*$", text, flags=re.M):
        if chunk.strip():
            yield nbformat.v4.new_markdown_cell(chunk.strip("\n"))


def build(spec_text, spec_name="<spec>"):
    """The source notebook of a spec; raise AuthoringError with every mistake found, located."""
    cells, problems, position = [], [], 0
    fences = list(FENCE.finditer(spec_text))
    starts = {match.start() for match in fences}
    for opening in OPENING.finditer(spec_text):
        if opening.start() in starts:
            continue
        around = [match for match in fences if match.start() < opening.start() < match.end()]
        unclosed = around[0].start() if around else opening.start()
        problems.append(f"{spec_name}:{line_of(spec_text, unclosed)}: this {OPENING.match(spec_text, unclosed).group(0)} "
                        "fence is never closed"
                        + (f" before the next one, at line {line_of(spec_text, opening.start())}" if around else "")
                        + ": end its code with a line holding only ```")
    for match in fences:
        cells.extend(markdown_cells(spec_text[position:match.start()]))
        where = f"{spec_name}:{line_of(spec_text, match.start())}"
        make = answer_cell if match.group("language") == "markdown" else code_cell
        try:
            cell = make(match.group("info").strip(), match.group("code"), where)
        except AuthoringError as error:
            problems.extend(error.problems)
            cell = nbformat.v4.new_code_cell(match.group("code"))
        cell.metadata["posenc_where"] = where  # removed below: for the checks only
        cells.append(cell)
        position = match.end()
    cells.extend(markdown_cells(spec_text[position:]))
    problems += _grade_id_problems(cells) + _heading_problems(spec_text, spec_name, cells)
    if problems:
        raise AuthoringError(problems)
    cells = with_progress(cells, spec_text)
    for number, cell in enumerate(cells):
        cell.metadata.pop("posenc_where", None)
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id.replace("_", "-") if grade_id else f"cell-{number:03d}"
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO}
    nbformat.validate(notebook)
    return notebook


# Progress: the points at the top, and a last cell that says where the student stands -------------

#: The tag that lets Run All go on past a cell's error (JupyterLab and nbclient then send
#: ``stop_on_error=False``): on every test and answer cell, so that Run All ends at the progress cell.
RUN_ON = "raises-exception"
TRACKER_ID, PROGRESS_ID = "progress_tracker", "progress_report"
TOTAL_TOKEN, POINTS_TOKEN = "{{total_points}}", "{{points_by_exercise}}"
EXERCISE_TITLE = re.compile(r"^## Exercise (?P<number>\d+)[\s★]*(?P<title>.*?)\s*(?:\([\d.+\s]+=\s*[\d.]+ points?\))?\s*$", re.M)


def visible_key(source):
    """What identifies a test cell's visible code, wherever it runs: its lines as released (without the hidden tests
    and the weight comments), without blank ones, each without trailing blanks (the same as the tracker's ``_key``)."""
    from hardened_grading.judge.checks import HIDDEN_BEGIN, HIDDEN_END
    from hardened_grading.preprocessors.release import without_weights

    kept, hidden = [], False
    for line in without_weights(source).splitlines():  # the release shows no weight comment
        if line.strip().startswith(HIDDEN_BEGIN):
            hidden = True
        elif line.strip().startswith(HIDDEN_END):
            hidden = False
        elif not hidden and line.strip():
            kept.append(line.rstrip())
    return hashlib.md5("\n".join(kept).encode()).hexdigest()


def exercise_table(cells, spec_text):
    """``[(exercise, title, points, [(test id, visible key)], [answer ids])]``, from the
    cells' nbgrader metadata and the ``## Exercise N`` headings, in order."""
    titles = {f"ex{int(m.group('number')):02d}": m.group("title") for m in EXERCISE_TITLE.finditer(spec_text)}
    table = {}
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id", "")
        if not re.match(r"ex\d\d_", name) or cell.cell_type != "code":  # a written answer is not the tracker's
            continue
        row = table.setdefault(name[:4], [name[:4], titles.get(name[:4], ""), 0.0, [], []])
        if meta.get("grade"):
            row[2] += meta["points"]
            row[3].append((name, visible_key(cell.source)))
        elif meta.get("solution"):
            row[4].append(name)
    return [tuple(row) for row in table.values()]


def answer_names(cells):
    """``{answer id: [name, ...]}``: the names each exercise's answer cell defines at its top (functions, classes,
    assigned names), by which the progress cell finds it where the front end sends no cell id (nbclient)."""
    found = {}
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code" and re.match(r"ex\d\d_", meta.get("grade_id", "")):
            body = ast.parse(cell.source).body
            found[meta["grade_id"]] = [name for node in body for name in (
                [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else
                [t.id for t in node.targets if isinstance(t, ast.Name)] if isinstance(node, ast.Assign) else [])]
    return found


def _points(value):
    return f"{value:g}"


TRACKER_SOURCE = r'''# For the progress report, the notebook's last cell: after each cell you run, this notes
# whether it raised an error and whether it is still a stub, and nothing else. The grader
# does not use it. It holds no answers.
def _posenc_shortener():
    """A message on one line in at most `limit` characters, cut between words, with what a check
    expected and what came back (the grader's own hardened_grading.judge.messages.elide)."""
    %(shorten)s

    return elide


_posenc_shorten = _posenc_shortener()


def _posenc_tracker():
    import ast
    import hashlib
    import re

    stub_words = %(not_answered)r
    concept_stub = re.compile(%(concept_stub)r, re.M)

    def _is_stub(source):  # still as released: the same test as the class report's
        return stub_words in source or bool(concept_stub.search(source))

    def _names(node):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            return [node.name]
        if isinstance(node, ast.Assign):
            return [target.id for target in node.targets if isinstance(target, ast.Name)]
        return []

    # what a cell that does not compile would define, read from its text
    defines = re.compile(r"^(?:(?:async\s+)?def\s+(\w+)\s*\(|class\s+(\w+)|(\w+)\s*=(?!=))", re.M)

    def _defined(source):
        try:
            return [name for node in ast.parse(source).body for name in _names(node)]
        except SyntaxError:  # an answer cell with a syntax error: found, and said to have raised
            return [next(name for name in m.groups() if name) for m in defines.finditer(source)]

    def _key(source):
        lines = [line.rstrip() for line in source.splitlines() if line.strip()]
        return hashlib.md5("\n".join(lines).encode()).hexdigest()

    ran = globals().setdefault("_posenc_ran", {})

    def _posenc_record(result):
        try:
            source = result.info.raw_cell or ""
            if source.startswith(%(grader)r):
                ran["graded"] = True
                return
            error = result.error_in_exec or result.error_before_exec
            text = "" if error is None else f"{type(error).__name__}: {str(error).strip()}"
            if isinstance(error, SyntaxError):  # its line in the cell, not the kernel's file
                where = f" (line {error.lineno})" if error.lineno else ""
                text = f"{type(error).__name__}: {error.msg}{where}"
            text = text.removeprefix("AssertionError: ")  # a check's message says it all
            entry = {"ok": error is None, "error": _posenc_shorten(text, 300),
                     "stub": _is_stub(source)}
            ran[_key(source)] = entry
            for name in _defined(source):  # an answer cell, wherever its id is not sent
                ran["defines " + name] = entry
            if getattr(result.info, "cell_id", None):
                ran[result.info.cell_id] = entry
        except Exception:  # never in the way of your own cells
            pass

    try:
        events = get_ipython().events
    except NameError:  # not in IPython (the grader's own copy of this cell): nothing to note
        return
    for callback in list(events.callbacks["post_run_cell"]):
        if getattr(callback, "__name__", "") == "_posenc_record":
            events.unregister("post_run_cell", callback)
    events.register("post_run_cell", _posenc_record)


_posenc_tracker()


def show_progress():
    """Each exercise's points, and whether its visible tests passed when they last ran here."""
    # (exercise, title, points, [(test cell, its visible code's key)], [answer cells]); a cell's
    # id is its name with - for _
    exercises = %(table)s
    # {answer cell: the names its code defines}
    defines = %(defines)s
    ran = globals().get("_posenc_ran", {})
    # posenc-check's words: every answer still the stub; some still the stub
    not_attempted, started = %(not_attempted)r, %(started)r

    def answer_ran(answer):
        found = [ran.get("defines " + name) for name in defines.get(answer, [])]
        return ran.get(answer.replace("_", "-")) or next((r for r in found if r is not None), None)
    if ran.get("graded"):
        print("This copy of the notebook is being graded: its test cells run in the grader, with "
              "the hidden tests. Your points are in the summary at the top of your feedback.")
        return
    rows, passing, first = [], 0, None
    for exercise, title, points, tests, answers in exercises:
        written = [(answer, answer_ran(answer)) for answer in answers]
        broken = [(answer, r) for answer, r in written if r is not None and not r["ok"]]
        known = bool(written) and all(r is not None for _, r in written)  # all answers ran here
        stubs_only = known and all(r.get("stub") for _, r in written)
        partly = known and not stubs_only and any(r.get("stub") for _, r in written)  # some stubs
        results = [(test, ran.get(test.replace("_", "-")) or ran.get(key)) for test, key in tests]
        run = [(test, r) for test, r in results if r is not None]
        failed = [(test, r) for test, r in run if not r["ok"]]
        said = None  # the error or failed check that the row stands for, on a line of its own
        if broken:
            status, said = f"the answer cell {broken[0][0]} raised:", broken[0][1]["error"]
            todo = f"fix its answer cell {broken[0][0]}, which shows an error"
        elif stubs_only or not known and run and len(failed) == len(run) and all(
                "not answered yet" in r["error"] for _, r in failed):
            status, todo = not_attempted, "answer it"  # every answer still the stub
        elif not run:
            status, todo = "not run yet", "run its cells"
        elif failed:
            test, r = failed[0]
            passed = len(run) - len(failed)
            status, said = f"{passed} of {len(tests)} test cells pass; {test} says:", r["error"]
            todo = f"fix what its test cell {test} says, in the red box under it"
        elif len(run) < len(tests):
            status = f"{len(run)} of {len(tests)} test cells pass, the others not run yet"
            todo = "run its other test cells"
        else:
            status, todo = f"passes its visible tests ({len(tests)} test cells)", None
            passing += 1
        if partly and not broken:
            status = f"{started}: {status}"
        if todo and first is None:
            first = (exercise, title, todo)
        rows.append(f"{exercise:<8} {points:>6g}   {status}")
        if said:
            rows.append(f"    {_posenc_shorten(said, 116)}")
    total = sum(row[2] for row in exercises)
    print(f"Your progress: {passing} of {len(exercises)} exercises pass their visible tests. "
          f"Its tests are worth {total:g} points;\n"
          "the written reflections (c) are graded by hand, apart.")
    print("A concept question's visible test checks only the form of the answer; the hidden "
          "tests,\nrun when your work is graded, check more.\n")
    print(f"{'exercise':<8} {'points':>6}   visible tests, as they last ran in this kernel")
    print("\n".join(rows))
    if first is None:
        print("\nNext: every visible test passes. Write the reflections (c) you have not, "
              "save, click\nValidate in the toolbar (it lists a reflection still unwritten), "
              "then submit.")
    else:
        exercise, title, todo = first
        print(f"\nNext: exercise {int(exercise[2:])}, {title}: {todo}.\n"
              "Its cells are under its heading, above. Then run this cell again.")
'''

def tracker_source(grader, table, defines):
    """The tracker cell's source, which defines ``show_progress()``.

    Parameters
    ----------
    grader : str
        How the source of a cell the grader's agent runs starts: such a cell is not the student's.
    table : str
        The exercises, as Python: ``[(exercise, title, points, [(test cell, visible key)], [answer cells])]``.
    defines : str
        The names each answer cell defines, as Python (:func:`answer_names`): an answer cell is found by them
        where JupyterLab sends no cell id.

    Returns
    -------
    str
        The source, with the engine's :func:`hardened_grading.judge.messages.elide` in it (the cell cannot import
        the engine: a student's kernel may not have it), and the words of :mod:`hardened_grading.attempts` for an
        exercise not attempted (every answer still the stub) or started (some are), as the class report and
        posenc-check say them.
    """
    shorten = textwrap.indent(messages.SOURCE, " " * 4).strip()
    return TRACKER_SOURCE % {"grader": grader, "table": table, "shorten": shorten, "defines": defines,
                             "not_answered": NOT_ANSWERED, "concept_stub": CONCEPT_STUB.pattern,
                             "not_attempted": NOT_ATTEMPTED, "started": STARTED}


PROGRESS_INTRO = """## Your progress

*Run → Run All Cells* ends here. The cell below lists, for each exercise, its points and whether its
visible tests passed when they last ran, and says what to do next. Run it again at any time. If it
shows nothing after Run All, a cell of your own stopped Run All with an error: scroll up to the red box."""

PROGRESS_SOURCE = "# where you stand: each exercise's visible tests and points, and what to do next\nshow_progress()"


def with_progress(cells, spec_text):
    """The cells of a graded assignment with what tells a student where they stand: the total points
    in place of ``{{total_points}}`` and ``{{points_by_exercise}}`` in its markdown, the tag
    :data:`RUN_ON` on every test and answer cell, the tracker after the last code cell before the
    first exercise, and the progress cell last. Points and titles come from the cells' metadata and
    headings. A notebook without test cells is returned as it is."""
    table = exercise_table(cells, spec_text)
    if not table:
        return cells
    total = sum(points for _, _, points, _, _ in table)
    each = [_points(points) for _, _, points, _, _ in table]
    by_exercise = f"{len(each)} exercises of " + (", ".join(each[:-1]) + " and " if len(each) > 1 else "") + f"{each[-1]} points"
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace(TOTAL_TOKEN, _points(total)).replace(POINTS_TOKEN, by_exercise)
        elif cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("ex"):
            cell.metadata["tags"] = [RUN_ON]
    first = next(n for n, cell in enumerate(cells) if cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("ex"))
    setup = max(n for n, cell in enumerate(cells[:first]) if cell.cell_type == "code")
    from hardened_grading.judge.setup import SERVE_CODE

    grader = SERVE_CODE.split("=")[0].strip()  # the judge's agent, whose code runs in the grading kernel
    listed = textwrap.indent(pprint.pformat(table, width=90), " " * 8).strip()
    defines = textwrap.indent(pprint.pformat(answer_names(cells), width=90), " " * 4).strip()
    tracker = code_cell(f"locked {TRACKER_ID}", tracker_source(grader, listed, defines))
    progress = code_cell(f"locked {PROGRESS_ID}", PROGRESS_SOURCE)
    return cells[:setup + 1] + [tracker] + cells[setup + 1:] + [nbformat.v4.new_markdown_cell(PROGRESS_INTRO), progress]


def _grade_id_problems(cells):
    """Duplicated grade ids."""
    problems, first_seen = [], {}
    for cell in cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is None:
            continue
        if grade_id in first_seen:
            problems.append(f"{cell.metadata['posenc_where']}: grade id {grade_id} is used already, at "
                            f"{first_seen[grade_id]}: every graded or answer cell needs its own")
        else:
            first_seen[grade_id] = cell.metadata["posenc_where"]
    return problems


def _heading_problems(spec_text, spec_name, cells):
    """Grade ids outside their ``## Exercise N``, and headings whose points disagree with their tests."""
    headings = list(EXERCISE_HEADING.finditer(spec_text))
    if not headings:
        return []
    problems = []
    by_exercise = {}
    for cell in cells:
        meta, where = cell.metadata.get("nbgrader"), cell.metadata.get("posenc_where")
        if not meta:
            continue
        line = int(where.rsplit(":", 1)[1])
        heading = next((h for h in reversed(headings) if line_of(spec_text, h.start()) < line), None)
        if heading is None:
            continue
        prefix = f"ex{int(heading.group('number')):02d}_"
        if not meta["grade_id"].startswith(prefix):
            problems.append(f"{where}: grade id {meta['grade_id']} is in Exercise {heading.group('number')}: "
                            f"its ids start with {prefix}")
        if meta.get("grade") and not meta.get("solution"):  # its test cells; a written answer is graded by hand
            by_exercise.setdefault(heading.start(), []).append(meta["points"])
    for heading in headings:
        if heading.group("total") is None:
            continue
        stated = [float(part) for part in heading.group("parts").split("+")]
        actual = by_exercise.get(heading.start(), [])
        if stated != actual or float(heading.group("total")) != sum(actual):
            problems.append(
                f"{spec_name}:{line_of(spec_text, heading.start())}: Exercise {heading.group('number')} says "
                f"({heading.group('parts').strip()} = {heading.group('total')} points), but its test cells have "
                f"{' + '.join(f'{p:g}' for p in actual) or 'none'} = {sum(actual):g}: change the heading or the points=")
    return problems


def check(spec_text, spec_name="<spec>"):
    """:func:`build`, then every test cell run against the reference answers through the judge
    (:mod:`posenc_course.authoring.dryrun`); the notebook, or AuthoringError with every mistake, located."""
    notebook = build(spec_text, spec_name)
    fence_lines = {}
    for match in FENCE.finditer(spec_text):
        words = match.group("info").split()
        if len(words) > 1:
            fence_lines[words[1]] = line_of(spec_text, match.start())
    problems = dryrun.problems(notebook, fence_lines, spec_name)
    if problems:
        raise AuthoringError(problems)
    return notebook


def render(notebook):
    return json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the source notebooks from their specs.")
    parser.add_argument("--check", action="store_true", help="only check that the committed notebooks are current")
    args = parser.parse_args(argv)
    stale = 0
    for spec, notebook in NOTEBOOKS.items():
        spec_name = str(spec.relative_to(ROOT))
        try:
            built = check(spec.read_text(), spec_name)
        except AuthoringError as error:
            print(f"{spec_name}: not built, {len(error.problems)} mistake(s):\n" + str(error), file=sys.stderr)
            stale += 1
            continue
        text = render(built)
        name = notebook.relative_to(ROOT)
        if args.check:
            current = notebook.exists() and notebook.read_text() == text
            stale += not current
            print(f"{name} is current" if current else f"{name} is stale: run `make notebook`",
                  file=sys.stdout if current else sys.stderr)
        else:
            notebook.parent.mkdir(parents=True, exist_ok=True)
            notebook.write_text(text)
            print(f"wrote {name}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
