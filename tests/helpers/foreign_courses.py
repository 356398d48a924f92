"""Courses nobody here wrote, and how a course adopts the engine: what the tests that grade them share
(tests/grading/test_foreign_courses.py, tests/system/test_engine_wheel.py, tests/grading/test_habits_state.py).

nbgrader's documentation course and the files of its own autograde tests are read from the installed nbgrader
package, which ships them (``nbgrader/docs/source/user_guide/``, ``nbgrader/tests/apps/files/``): nothing of
nbgrader's is copied into this repository."""

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from . import children

ROOT = Path(__file__).resolve().parents[2]
#: The installed nbgrader package, whose documentation course and test files the courses below are.
NBGRADER = Path(str(resources.files("nbgrader")))
ENGINE_DOC = ROOT / "docs" / "engine.md"
ADOPTION_HEADING = "## Adopting it"

COMMAND_SECONDS = 600  #: the longest one nbgrader command may take
LOOP_SECONDS = 5  #: c.Execute.timeout of the course with an endless loop, in both configurations
#: The engine's configurations: its adoption lines as they are (its defaults); with the two settings this
#: course turns on, test cells in the grader and credit per check (a course whose set-up cells need the
#: kernel then has its tests run there: the same scores); and as they are, the class graded by the engine's
#: ``hardened-grade`` in place of ``nbgrader autograde``: one worker, so that each student after the first is
#: graded in the kernel started ahead while the one before was graded (:mod:`hardened_grading.sandbox.ahead`), their
#: files (a notebook reads one beside it, another writes one) moved into its folder. That workers in parallel
#: score as serial nbgrader is tests/grading/test_grade_class.py's.
ENGINES = {"engine": "", "engine-trusted": "c.ResilientExecute.trusted_tests = True\nc.ResilientExecute.credit_per_check = True",
           "engine-grade-class": ""}
FLAVOURS = ("stock", *ENGINES)


def adoption_lines(doc=None):
    """The engine's adoption lines: the first fenced ``python`` block after ``## Adopting it`` in `doc`.

    Raises
    ------
    LookupError
        When `doc`, its heading or a ``python`` block after it is missing.
    """
    doc = ENGINE_DOC if doc is None else doc
    if not Path(doc).is_file():
        raise LookupError(f"{doc} is missing: it holds the engine's adoption lines (under {ADOPTION_HEADING!r})")
    text = Path(doc).read_text(encoding="utf-8")
    heading = re.search(rf"^{re.escape(ADOPTION_HEADING)}[ \t]*$", text, re.MULTILINE)
    if heading is None:
        raise LookupError(f"{doc} has no heading line {ADOPTION_HEADING!r}")
    block = re.search(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text[heading.end():], re.MULTILINE | re.DOTALL)
    if block is None:
        raise LookupError(f"{doc} has no ```python block after {ADOPTION_HEADING!r}")
    return block.group(1)


# The courses -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Course:
    """A course graded both ways: how to lay it out, and who is graded.

    Attributes
    ----------
    name : str
        Its ``course_id``.
    config : str
        Lines of ``nbgrader_config.py`` that both configurations have.
    submissions : dict
        ``{student: {path in the submission: file of the course's folder}}``, or None when the course
        has its own ``submitted/`` folder.
    source : dict
        ``{path in source/ASSIGNMENT: file of the course's folder}``, or None when the course has its
        own ``source/`` folder (its assignment's folder and its own files are copied, not other assignments').
    folder : pathlib.Path
        The course's folder, in the installed nbgrader package (None for a course written here: `make`).
    cheats : tuple of str
        Students whose score may only be lower with the engine; every other must score the same.
    """

    name: str
    config: str
    assignment: str = "ps1"
    source: dict | None = None
    submissions: dict | None = None
    cheats: tuple = ()
    folder: Path | None = None
    make: object = None  #: ``make(folder)`` writes the course (``source/``, ``submitted/``) itself: one written here
    flavours: tuple = FLAVOURS  #: the configurations it is graded with (stock's always)
    environment: dict = field(default_factory=dict)  #: more variables of the graders' environment, in every flavour
    students: tuple = field(init=False)

    def __post_init__(self):
        students = self.submissions or {p.name: None for p in (self.folder / "submitted").iterdir()}
        object.__setattr__(self, "students", tuple(sorted(students)))

    def lay_out(self, folder):
        """Write the course's ``source/`` and ``submitted/`` into `folder`."""
        if self.make is not None:
            return self.make(folder)
        data = self.folder
        if self.source is None:  # nbgrader's user guide ships ps1_autotest beside ps1: only the assignment's own
            shutil.copytree(data / "source" / self.assignment, folder / "source" / self.assignment)
            for original in (data / "source").iterdir():
                if original.is_file():
                    _copy(original, folder / "source" / original.name)
        else:
            for name, original in self.source.items():
                _copy(data / original, folder / "source" / self.assignment / name)
        if self.submissions is None:
            shutil.copytree(data / "submitted", folder / "submitted")
        else:
            for student, files in self.submissions.items():
                for name, original in files.items():
                    _copy(data / original, folder / "submitted" / student / self.assignment / name)


def _copy(original, copy):
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(original, copy)


#: nbgrader's documentation course, its header included, as its docs generate it.
USER_GUIDE = Course(name="user_guide", config='c.IncludeHeaderFooter.header = "source/header.ipynb"',
                    folder=NBGRADER / "docs" / "source" / "user_guide")

#: nbgrader's own autograde scenarios (nbgrader/tests/apps/test_nbgrader_autograde.py), as students of one
#: assignment whose notebooks are the scenarios' source notebooks. A student submits only the notebook
#: (and files) of their scenario: the others are missing, and score 0, in both gradebooks.
APPS_FILES = Course(
    name="apps_files",
    folder=NBGRADER / "tests" / "apps" / "files",
    config=f"c.Execute.timeout = {LOOP_SECONDS}",
    source={"p1.ipynb": "submitted-unchanged.ipynb", "open_relative_file.ipynb": "open_relative_file.ipynb",
            "data.txt": "data.txt", "side-effects.ipynb": "side-effects.ipynb",
            "infinite-loop.ipynb": "infinite-loop.ipynb"},
    submissions={
        "unchanged": {"p1.ipynb": "submitted-unchanged.ipynb"},
        "changed": {"p1.ipynb": "submitted-changed.ipynb"},
        "cheat-attempt": {"p1.ipynb": "submitted-cheat-attempt.ipynb"},
        "cheat-attempt-alternative": {"p1.ipynb": "submitted-cheat-attempt-alternative.ipynb"},
        "grade-cell-changed": {"p1.ipynb": "submitted-grade-cell-changed.ipynb"},
        "locked-cell-changed": {"p1.ipynb": "submitted-locked-cell-changed.ipynb"},
        "open-relative-file": {"open_relative_file.ipynb": "open_relative_file.ipynb", "data.txt": "data.txt"},
        "side-effects": {"side-effects.ipynb": "side-effects.ipynb"},
        "infinite-loop": {"infinite-loop.ipynb": "infinite-loop.ipynb"},
    },
    cheats=("cheat-attempt", "cheat-attempt-alternative"),
)


#: What stock nbgrader's kernel says when the TCP port jupyter_client chose for it was taken meanwhile: jupyter_client
#: picks free ports, then the kernel binds them, and with many runs at once (this module's, and other modules' on other
#: workers) two may pick the same. It is stock's kernels' (the engine's listen on Unix sockets), not grading: such a
#: run is run once more.
PORT_TAKEN = "zmq.error.ZMQError: Address already in use"


@dataclass(frozen=True)
class Notebook:
    """A graded notebook's automatic scores (``code_score`` and ``{grade cell: auto_score}``), and the cells
    that wait for the instructor (``{grade cell: needs_manual_grade}``: manually graded answers and tasks)."""

    code_score: float
    max_code_score: float
    auto_scores: dict
    manual: dict = field(default_factory=dict)


def read_gradebook(folder, assignment):
    """``{student: {notebook: Notebook}}`` of the gradebook in `folder`."""
    found = {}
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        for student in gradebook.students:
            try:
                submission = gradebook.find_submission(assignment, student.id)
            except MissingEntry:
                continue
            found[student.id] = {
                notebook.name: Notebook(notebook.code_score, notebook.max_code_score,
                                        {grade.name: grade.auto_score for grade in notebook.grades},
                                        {grade.name: bool(grade.needs_manual_grade) for grade in notebook.grades})
                for notebook in submission.notebooks}
    return found


#: Stock nbgrader's scores as nbgrader states them: its docs (the user guide) and its own tests
#: (test_nbgrader_autograde.py: test_grade, test_showtraceback_exploit). The sum of code_score per student.
NBGRADER_SAYS = {"user_guide": {"hacker": 3.0, "bitdiddle": 1.5},
                 "apps_files": {"unchanged": 1.0, "changed": 2.0,
                                "cheat-attempt": 1.0, "cheat-attempt-alternative": 1.0}}


def run_python(folder, *args, environment=None):
    """Run ``python ARGS`` in the course `folder`, with `environment` added to this one's; return the finished
    process."""
    env = {**os.environ, **(environment or {}),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return children.run([sys.executable, *args], cwd=folder, env=env, text=True,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=COMMAND_SECONDS)


def nbgrader(folder, *args, environment=None):
    """Run ``python -m nbgrader ARGS`` in the course `folder`; return the finished process."""
    return run_python(folder, "-m", "nbgrader", *args, environment=environment)


def user_guide_with_engine(folder):
    """nbgrader's documentation course (:data:`USER_GUIDE`) laid out in `folder` with the engine's adoption lines
    (docs/engine.md) as its ``nbgrader_config.py``, its assignment generated; return `folder`."""
    (folder / "nbgrader_config.py").write_text(
        "\n".join(["c = get_config()  # noqa: F821", f'c.CourseDirectory.course_id = "{USER_GUIDE.name}"',
                   USER_GUIDE.config, adoption_lines()]) + "\n", encoding="utf-8")
    USER_GUIDE.lay_out(folder)
    generated = nbgrader(folder, "generate_assignment", USER_GUIDE.assignment)
    assert generated.returncode == 0, generated.stdout[-3000:]
    return folder
