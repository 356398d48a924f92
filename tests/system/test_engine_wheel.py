"""The engine is a distribution of its own (``engine/``): its wheel, installed alone, grades another course.

The engine's wheel is built from ``engine/`` and installed into a fresh virtual environment, with only the
dependencies it declares (``uv pip install``, held to ``requirements.lock``'s versions): no ``posenc``, none of
this course's packages, no ``PYTHONPATH``. nbgrader's documentation course (from the installed nbgrader package), adopted
with the lines of ``docs/engine.md``, is generated, graded in the sandbox and given feedback there, and scores as
stock nbgrader scores it (``NBGRADER_SAYS``). The course's own wheel no longer carries the engine.
"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ..helpers import children
from ..helpers.foreign_courses import NBGRADER_SAYS, USER_GUIDE, adoption_lines, read_gradebook

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 600  #: the longest one command may take (building a wheel, installing, or one nbgrader command)
COURSE_PACKAGES = ("posenc_course", "posenc_solutions", "tests", "authoring")
#: A course's adoption lines as docs/engine.md gave them before the engine's folders (main at e95242b): every
#: piece by its old dotted path. Frozen here, as a course that adopted the engine then keeps them.
OLD_ADOPTION_LINES = """\
import sys
from pathlib import Path

c.Autograde.exporter_class = "hardened_grading.grading.TolerantNotebookExporter"
c.Autograde.pre_convert_hook = "hardened_grading.grading.prepare_submission"
c.Autograde.post_convert_hook = "hardened_grading.grading.mark_graded"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".hardened-grading-done"]
c.Autograde.sanitize_preprocessors = [
    "hardened_grading.restore.RestoreReleaseCells",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "hardened_grading.grading.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "hardened_grading.grading.ResilientExecute",
    "hardened_grading.inert.InertContent",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "hardened_grading.grading.CheckCellMetadata",
]
c.GenerateFeedback.pre_convert_hook = "hardened_grading.grading.secure_graded_folder"
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "hardened_grading.feedback.FeedbackSummary",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.GenerateFeedback.exporter_class = "hardened_grading.feedback.SummaryFirstHTMLExporter"
c.HTMLExporter.preprocessors = ["hardened_grading.inert.InertContent"]  # formgrader's pages too
c.HTMLExporter.filters = {"markdown2html": "hardened_grading.inert.markdown2html"}
c.ExchangeFactory.release_feedback = "hardened_grading.exchange.ReleaseFeedback"
c.ExchangeFactory.collect = "hardened_grading.exchange.Collect"
if sys.argv[1:2] == ["autograde"]:  # finish what an interrupted run left half-graded (a live run's is kept)
    from hardened_grading.grading import remove_unfinished

    remove_unfinished(Path(__file__).parent)
"""


def run(args, cwd, env):
    result = children.run(args, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=SECONDS)
    assert result.returncode == 0, f"{' '.join(map(str, args))}:\n{result.stdout[-3000:]}"
    return result.stdout


def tracked_copy(folder, into):
    """A copy of the checkout's tracked files under `folder` (``"."`` for all), so that a build writes nothing
    into the checkout."""
    files = subprocess.run(["git", "ls-files", "-z", folder], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in filter(None, files.split("\0")):
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    return into


def build_wheel(source, dist):
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(dist),
         str(source)], dist.parent, dict(os.environ))
    [wheel] = dist.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def engine_alone(tmp_path_factory):
    """``(wheel, bin)``: the engine's wheel, and the ``bin/`` of a fresh venv that has it and what it declares."""
    folder = tmp_path_factory.mktemp("engine-alone")
    source = tracked_copy("engine", folder / "checkout") / "engine"
    wheel = build_wheel(source, folder / "dist")
    venv = folder / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], folder, dict(os.environ))
    uv = Path(sys.executable).parent / "uv"
    installer = [str(uv), "pip", "install", "--python", str(venv / "bin" / "python")] if uv.exists() else \
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
    run([*installer, "--quiet", "--constraint", str(ROOT / "requirements.lock"), str(wheel)], folder, dict(os.environ))
    return wheel, venv / "bin"


def test_the_engine_wheel_holds_the_engine_and_its_template_and_nothing_of_the_course(engine_alone):
    wheel, _ = engine_alone
    names = zipfile.ZipFile(wheel).namelist()
    engine = {name.removeprefix("hardened_grading/") for name in names if name.startswith("hardened_grading/")}
    assert {"preprocessors/execute.py", "sandbox/launcher.py", "judge/judge.py", "judge/agent.py",
            "class_grading/command.py", "templates/summary_first/summary_first.html.j2", "moved.py",
            "class_grading/report.py", "class_grading/grade_table.py", "class_grading/slurm.py",
            "class_grading/sbatch/grade-class.sbatch", "class_grading/sbatch/finish-class.sbatch"} <= engine, sorted(engine)
    assert not [name for name in names if name.split("/")[0] in COURSE_PACKAGES]
    [metadata] = [name for name in names if name.endswith(".dist-info/METADATA")]
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Name: hardened-grading" in text and "posenc" not in text.lower(), text[:2000]
    assert "Provides-Extra: postgresql" in text and "Provides-Extra: progress" in text
    assert "Provides-Extra: report" in text


def test_the_fresh_environment_has_the_engine_and_no_course(engine_alone):
    _, bin_folder = engine_alone
    code = ("import importlib.util, hardened_grading, json; print(json.dumps([hardened_grading.__file__, "
            f"[n for n in {COURSE_PACKAGES!r} if importlib.util.find_spec(n)]]))")
    where, course = __import__("json").loads(run([str(bin_folder / "python"), "-c", code], bin_folder, clean_env(bin_folder)))
    assert "site-packages" in where and str(ROOT) not in where, where
    assert course == [], f"the engine's environment has the course's packages: {course}"
    assert all((bin_folder / name).exists() for name in ("hardened-grade", "hardened-report", "hardened-scores",
                                                         "hardened-slurm", "hardened-exchange"))


def test_the_course_wheel_no_longer_carries_the_engine(tmp_path):
    source = tracked_copy(".", tmp_path / "checkout")
    names = zipfile.ZipFile(build_wheel(source, tmp_path / "dist")).namelist()
    assert any(name.startswith("posenc_course/") for name in names)
    assert not [name for name in names if name.startswith("hardened_grading/")]


def clean_env(bin_folder):
    """The environment of a command of the engine's venv: its bin/ first on PATH, nothing of this checkout's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_folder}{os.pathsep}/usr/local/bin:/usr/bin:/bin"
    return env


@pytest.mark.parametrize("lines", ["today's", "old"])
def test_a_course_adopting_the_engine_alone_is_graded_as_stock_nbgrader_grades_it_and_given_feedback(
        engine_alone, tmp_path, lines):
    """With docs/engine.md's adoption lines, and with those a course kept from before the engine's folders (old
    dotted paths): the same scores and feedback; the old ones are said once per command, as a FutureWarning."""
    _, bin_folder = engine_alone
    env = clean_env(bin_folder)
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("\n".join(
        ["c = get_config()  # noqa: F821", f'c.CourseDirectory.course_id = "{USER_GUIDE.name}"', USER_GUIDE.config,
         adoption_lines() if lines == "today's" else OLD_ADOPTION_LINES]) + "\n")
    USER_GUIDE.lay_out(course)
    nbgrader = [str(bin_folder / "python"), "-m", "nbgrader"]
    run([*nbgrader, "generate_assignment", USER_GUIDE.assignment], course, env)
    log = run([*nbgrader, "autograde", USER_GUIDE.assignment], course, env)
    if lines == "today's":
        assert "FutureWarning" not in log, "the adoption lines name old dotted paths"
    else:
        assert log.count("FutureWarning") == 1, log[-3000:]
        # the first old path the command meets: the config's own import, when nbgrader loads it
        assert "hardened_grading.grading.remove_unfinished is now hardened_grading.hooks.unfinished" \
               ".remove_unfinished" in log, log[-3000:]
    scores = {student: sum(notebook.code_score for notebook in notebooks.values())
              for student, notebooks in read_gradebook(course, USER_GUIDE.assignment).items()}
    assert scores == NBGRADER_SAYS[USER_GUIDE.name], log[-3000:]
    run([*nbgrader, "generate_feedback", USER_GUIDE.assignment], course, env)
    page = (course / "feedback" / "hacker" / USER_GUIDE.assignment / "problem1.html").read_text()
    assert 'id="grading-summary"' in page, "the engine's feedback template, from the wheel"
    if lines == "today's":
        # the class report and the grade table of the engine alone (tests/grading/test_engine_reports.py: what they say),
        # without matplotlib unless nbgrader brought it: a note in each figure's place
        text = run([str(bin_folder / "hardened-report"), "--notebook", "problem1"], course, env)
        assert "Class report: 2 students" in text, text
        report = (course / "reports" / "class_report.html").read_text()
        assert "data:image/png;base64," in report or "no figure: matplotlib is not installed" in report
        table = run([str(bin_folder / "hardened-scores"), "--notebook", "problem1"], course, env)
        assert [line.split()[0] for line in table.splitlines()[3:]] == ["bitdiddle", "hacker"], table
