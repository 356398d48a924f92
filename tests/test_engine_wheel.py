"""The engine works installed from a wheel, not only from this checkout.

The project's wheel is built and unpacked into a folder of its own, which comes first on the path of every
command (``PYTHONPATH``): nbgrader, its hooks and the grading kernel then import the engine from there, not
from the checkout. nbgrader's documentation course (``tests/nbgrader_courses``), adopted with the lines of
``docs/engine.md``, is generated, graded in the sandbox and given feedback (the engine's template is package
data of the wheel).
"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .test_foreign_courses import NBGRADER_SAYS, USER_GUIDE, adoption_lines, read_gradebook

ROOT = Path(__file__).resolve().parents[1]
SECONDS = 600  #: the longest one command may take (building the wheel, or one nbgrader command)


def run(args, cwd, env):
    result = subprocess.run(args, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            timeout=SECONDS)
    assert result.returncode == 0, f"{' '.join(map(str, args))}:\n{result.stdout[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(wheel, site)``: the project's wheel, and the folder it is installed into."""
    folder = tmp_path_factory.mktemp("wheel")
    source = folder / "source"  # a copy of the checkout's tracked files, so the build writes nothing into it
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in filter(None, files.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w",
         str(folder / "dist"), str(source)], folder, dict(os.environ))
    [wheel] = (folder / "dist").glob("*.whl")
    run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(folder / "site"), str(wheel)],
        folder, dict(os.environ))
    return wheel, folder / "site"


def test_the_wheel_holds_the_engine_and_its_template(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    engine = {name.removeprefix("hardened_grading/") for name in names if name.startswith("hardened_grading/")}
    assert {"preprocessors/execute.py", "sandbox/launcher.py", "judge/judge.py", "judge/agent.py",
            "templates/summary_first/summary_first.html.j2", "templates/summary_first/conf.json",
            "class_grading/report.py", "class_grading/grade_table.py", "class_grading/slurm.py",
            "class_grading/sbatch/grade-class.sbatch", "class_grading/sbatch/finish-class.sbatch"} <= engine
    assert not [name for name in names if name.startswith("tests/")]


def test_a_course_adopting_the_installed_engine_is_graded_and_given_feedback(installed, tmp_path):
    _, site = installed
    env = {**os.environ, "PYTHONPATH": str(site),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    where = run([sys.executable, "-c", "import hardened_grading; print(hardened_grading.__file__)"], tmp_path, env)
    assert Path(where.strip()).parent == site / "hardened_grading", where

    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("\n".join(
        ["c = get_config()  # noqa: F821", f'c.CourseDirectory.course_id = "{USER_GUIDE.name}"', USER_GUIDE.config,
         adoption_lines()]) + "\n")
    USER_GUIDE.lay_out(course)
    nbgrader = [sys.executable, "-m", "nbgrader"]
    run([*nbgrader, "generate_assignment", USER_GUIDE.assignment], course, env)
    log = run([*nbgrader, "autograde", USER_GUIDE.assignment], course, env)
    scores = {student: sum(notebook.code_score for notebook in notebooks.values())
              for student, notebooks in read_gradebook(course, USER_GUIDE.assignment).items()}
    assert scores == NBGRADER_SAYS[USER_GUIDE.name], log[-3000:]
    run([*nbgrader, "generate_feedback", USER_GUIDE.assignment], course, env)
    page = (course / "feedback" / "hacker" / USER_GUIDE.assignment / "problem1.html").read_text()
    assert 'id="grading-summary"' in page, "the engine's feedback template, from the wheel"
    # the class report and the grade table, from the wheel, on the same course (tests/test_engine_reports.py: what
    # they say)
    text = run([sys.executable, "-m", "hardened_grading.class_grading.report", str(course), "--notebook", "problem1"],
               course, env)
    assert "Class report: 2 students" in text and (course / "reports" / "class_report.html").is_file(), text
    table = run([sys.executable, "-m", "hardened_grading.class_grading.grade_table", str(course), "--notebook",
                 "problem1"], course, env)
    assert [line.split()[0] for line in table.splitlines()[3:]] == ["bitdiddle", "hacker"], table
