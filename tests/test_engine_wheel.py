"""The engine is a distribution of its own (``engine/``): its wheel, installed alone, grades another course.

The engine's wheel is built from ``engine/`` and installed into a fresh virtual environment, with only the
dependencies it declares (``uv pip install``, held to ``requirements.lock``'s versions): no ``posenc``, none of
this course's packages, no ``PYTHONPATH``. nbgrader's documentation course (``tests/nbgrader_courses``), adopted
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

from .test_foreign_courses import NBGRADER_SAYS, USER_GUIDE, adoption_lines, read_gradebook

ROOT = Path(__file__).resolve().parents[1]
SECONDS = 600  #: the longest one command may take (building a wheel, installing, or one nbgrader command)
COURSE_PACKAGES = ("posenc_course", "posenc_solutions", "tests", "authoring")


def run(args, cwd, env):
    result = subprocess.run(args, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
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
            "class_grading/command.py", "templates/summary_first/summary_first.html.j2", "moved.py"} <= engine, sorted(engine)
    assert not [name for name in names if name.split("/")[0] in COURSE_PACKAGES]
    [metadata] = [name for name in names if name.endswith(".dist-info/METADATA")]
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Name: hardened-grading" in text and "posenc" not in text.lower(), text[:2000]
    assert "Provides-Extra: postgresql" in text and "Provides-Extra: progress" in text


def test_the_fresh_environment_has_the_engine_and_no_course(engine_alone):
    _, bin_folder = engine_alone
    code = ("import importlib.util, hardened_grading, json; print(json.dumps([hardened_grading.__file__, "
            f"[n for n in {COURSE_PACKAGES!r} if importlib.util.find_spec(n)]]))")
    where, course = __import__("json").loads(run([str(bin_folder / "python"), "-c", code], bin_folder, clean_env(bin_folder)))
    assert "site-packages" in where and str(ROOT) not in where, where
    assert course == [], f"the engine's environment has the course's packages: {course}"
    assert (bin_folder / "hardened-grade").exists()


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


def test_a_course_adopting_the_engine_alone_is_graded_as_stock_nbgrader_grades_it_and_given_feedback(
        engine_alone, tmp_path):
    _, bin_folder = engine_alone
    env = clean_env(bin_folder)
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("\n".join(
        ["c = get_config()  # noqa: F821", f'c.CourseDirectory.course_id = "{USER_GUIDE.name}"', USER_GUIDE.config,
         adoption_lines()]) + "\n")
    USER_GUIDE.lay_out(course)
    nbgrader = [str(bin_folder / "python"), "-m", "nbgrader"]
    run([*nbgrader, "generate_assignment", USER_GUIDE.assignment], course, env)
    log = run([*nbgrader, "autograde", USER_GUIDE.assignment], course, env)
    assert "FutureWarning" not in log, "the adoption lines name old dotted paths"
    scores = {student: sum(notebook.code_score for notebook in notebooks.values())
              for student, notebooks in read_gradebook(course, USER_GUIDE.assignment).items()}
    assert scores == NBGRADER_SAYS[USER_GUIDE.name], log[-3000:]
    run([*nbgrader, "generate_feedback", USER_GUIDE.assignment], course, env)
    page = (course / "feedback" / "hacker" / USER_GUIDE.assignment / "problem1.html").read_text()
    assert 'id="grading-summary"' in page, "the engine's feedback template, from the wheel"
