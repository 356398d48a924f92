"""No student can read, change or remove another's submission, or replace a release, through nbgrader's
exchange on a shared machine: tried as the Unix users themselves.

A class of three accounts, made for the test: an instructor (in the graders' group) and two students,
alice and bob, each with a home folder as Debian's ``useradd --create-home`` makes it (``0755``). The
instructor releases an assignment through the exchange, alice fetches it and submits it, all with real
``nbgrader`` commands run as each user (``setpriv``). Then bob, told the name of alice's submission (the
strongest case: nbgrader's defence is a name nobody can list), tries each attack of :data:`ATTACKS`, and
submits in alice's name (:data:`FORGE`).

- With the engine's exchange (:mod:`hardened_grading.exchange`: its layout made by ``hardened-exchange
  prepare``, its ``ReleaseAssignment``, ``Submit`` and ``Collect``), every attack fails, and the instructor
  collects alice's own submission.
- With nbgrader's default exchange, as its docs set it up (the root made by ``release_assignment``),
  the attacks of :data:`SUCCEED_ON_STOCK` succeed, and the instructor collects bob's submission as alice's:
  that is what the engine's exchange changes.

Needs root (CI runs as root): the accounts are made with ``useradd``.
"""

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from ..helpers import graders

COURSE, ASSIGNMENT = "privacy101", "ps1"
PREFIX = "posenc-x-"  #: the accounts' names start with it
INSTRUCTOR, ALICE, BOB = (PREFIX + name for name in ("teacher", "alice", "bob"))
GRADERS_GROUP = PREFIX + "graders"
ALICE_ANSWER, BOB_ANSWER = "alice wrote this 31337", "bob wrote this in alice name 4242"
#: Bob submits in alice's name, later than she did: a folder in ``inbound`` named as hers (nbgrader's collect takes a
#: submission's student from its folder's name, and the latest one counts), with his answer in the release.
FORGE = f"""
forged = os.path.join(os.path.dirname(SUBMISSION), SUBMISSION.split('/')[-1].split('+')[0]
                      + '+' + SUBMISSION.split('+')[1] + '+2099-01-01 00:00:00.000000 UTC+forged')
os.mkdir(forged)
notebook = open(os.path.join(RELEASE, 'problem1.ipynb')).read()
notebook = notebook.replace('raise NotImplementedError()', {'answer = ' + repr(BOB_ANSWER)!r})
open(os.path.join(forged, 'problem1.ipynb'), 'w').write(notebook)
open(os.path.join(forged, 'timestamp.txt'), 'w').write('2099-01-01 00:00:00.000000 UTC')
"""

#: ``{attack: Python run as bob}``, with ``SUBMISSION`` (alice's submission folder in the exchange),
#: ``COURSE_FOLDER`` (the course's exchange folder), ``RELEASE`` (the released assignment's folder),
#: ``ALICE_CACHE`` (alice's nbgrader cache, which keeps her submission's secret: it names her feedback page)
#: and ``COURSE`` given; each prints what it got, or raises. In this order: the last moves the course's folder.
ATTACKS = {
    "list the submissions": "print(os.listdir(os.path.dirname(SUBMISSION)))",
    "read alice's submission": "print(open(os.path.join(SUBMISSION, 'problem1.ipynb')).read()[:80])",
    "replace alice's notebook": "new = os.path.join(SUBMISSION, 'new.ipynb'); open(new, 'w').write('{}')\n"
                                "os.replace(new, os.path.join(SUBMISSION, 'problem1.ipynb'))",
    "add a file to alice's submission": "open(os.path.join(SUBMISSION, 'extra.txt'), 'w').write('bob')",
    "rename alice's submission": "os.rename(SUBMISSION, SUBMISSION + '-gone')",
    "change the release": "open(os.path.join(RELEASE, 'problem1.ipynb'), 'w').write('{}')",
    "read alice's submission secret": "cache = os.path.join(ALICE_CACHE, COURSE)\n"
                                      "print([open(os.path.join(cache, name, 'submission_secret.txt')).read()[:8] "
                                      "for name in os.listdir(cache)])",
    "replace the course's exchange folder": "os.rename(COURSE_FOLDER, COURSE_FOLDER + '-old'); os.mkdir(COURSE_FOLDER)",
}
#: The attacks that succeed against nbgrader's default exchange (and fail against the engine's).
SUCCEED_ON_STOCK = {"read alice's submission", "replace alice's notebook", "add a file to alice's submission",
                    "rename alice's submission", "replace the course's exchange folder",
                    "read alice's submission secret"}
ENGINE_CLASSES = {"release_assignment": "ReleaseAssignment", "submit": "Submit", "collect": "Collect"}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="makes Unix accounts (useradd): run as root, as CI does")


def account(name, home, groups=()):
    """Make the account `name` (again, if a run before left it), its home `home` as useradd makes it."""
    subprocess.run(["userdel", name], capture_output=True)
    subprocess.run(["useradd", "--home-dir", str(home), "--create-home", "--shell", "/bin/sh",
                    *(["--groups", ",".join(groups)] if groups else []), name], check=True, capture_output=True)
    return pwd.getpwnam(name)


def config(exchange, engine):
    lines = [f"c.CourseDirectory.course_id = {COURSE!r}", f"c.Exchange.root = {str(exchange)!r}"]
    if engine:
        lines += [f"c.ExchangeFactory.{name} = 'hardened_grading.exchange.{cls}'"
                  for name, cls in ENGINE_CLASSES.items()]
    return "c = get_config()\n" + "\n".join(lines) + "\n"


def run_as(user, python, cwd, *command, check=True):
    env = {"PATH": f"{Path(python).parent}:/usr/bin:/bin", "HOME": pwd.getpwnam(user).pw_dir, "LANG": "C.UTF-8"}
    result = graders.as_grader(user, [python, *command], cwd=cwd, env=env, timeout=300)
    if check:
        assert result.returncode == 0, f"as {user}: {command}\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


def attack(python, code, paths):
    """Run `code` as bob with `paths` given; return whether it ran to its end, and the last line it printed."""
    given = "".join(f"{key} = {str(value)!r}\n" for key, value in paths.items())
    result = run_as(BOB, python, "/", "-c", f"import os\n{given}{code}", check=False)
    return result.returncode == 0, (result.stdout + result.stderr).strip().splitlines()[-1:]


@pytest.fixture(scope="module")
def python(unprivileged_grader):
    """A Python with nbgrader (and the engine) that every account can run."""
    return unprivileged_grader[1]


def released_and_submitted(python, folder, engine):
    """The class in `folder`: released, and submitted by alice. Returns the paths of :data:`ATTACKS`."""
    subprocess.run(["groupdel", GRADERS_GROUP], capture_output=True)
    subprocess.run(["groupadd", GRADERS_GROUP], check=True)
    teacher = account(INSTRUCTOR, folder / "home" / "teacher", [GRADERS_GROUP])
    alice, _ = account(ALICE, folder / "home" / "alice"), account(BOB, folder / "home" / "bob")
    course, exchange = Path(teacher.pw_dir) / COURSE, folder / "exchange"
    notebook = new_notebook(cells=[new_markdown_cell("Answer below."), new_code_cell(
        "answer = None", metadata={"nbgrader": {"solution": True, "grade": False, "locked": False,
                                               "grade_id": "answer", "schema_version": 3}})])
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(notebook, course / "source" / ASSIGNMENT / "problem1.ipynb")
    (course / "nbgrader_config.py").write_text(config(exchange, engine))
    graders.hand_over(course.parent, INSTRUCTOR)
    (Path(alice.pw_dir) / "nbgrader_config.py").write_text(config(exchange, engine))
    graders.hand_over(Path(alice.pw_dir), ALICE)
    if engine:  # the administrator's one step: the exchange's folders, given to the instructor
        exchange.mkdir()
        os.chown(exchange, teacher.pw_uid, -1)
        run_as(INSTRUCTOR, python, course, "-m", "hardened_grading.exchange.command", "prepare", str(exchange),
               COURSE, "--group", GRADERS_GROUP)
    else:  # nbgrader's docs: a folder the instructor can make the root in
        os.chown(folder, teacher.pw_uid, -1)
    run_as(INSTRUCTOR, python, course, "-m", "nbgrader", "generate_assignment", ASSIGNMENT)
    run_as(INSTRUCTOR, python, course, "-m", "nbgrader", "release_assignment", ASSIGNMENT)
    run_as(ALICE, python, alice.pw_dir, "-m", "nbgrader", "fetch_assignment", ASSIGNMENT, "--course", COURSE)
    answered = nbformat.read(Path(alice.pw_dir) / ASSIGNMENT / "problem1.ipynb", as_version=4)
    answered.cells[1].source = f"answer = {ALICE_ANSWER!r}"
    nbformat.write(answered, Path(alice.pw_dir) / ASSIGNMENT / "problem1.ipynb")
    run_as(ALICE, python, alice.pw_dir, "-m", "nbgrader", "submit", ASSIGNMENT, "--course", COURSE)
    [submission] = (exchange / COURSE / "inbound").iterdir()
    return {"SUBMISSION": submission, "COURSE": COURSE, "COURSE_FOLDER": exchange / COURSE,
            "RELEASE": exchange / COURSE / "outbound" / ASSIGNMENT,
            "ALICE_CACHE": Path(alice.pw_dir) / ".local" / "share" / "jupyter" / "nbgrader_cache",
            "course": course, "exchange": exchange}


@pytest.fixture(params=["engine", "stock"])
def a_class(request, python):
    folder = graders.shared_folder(f"posenc-privacy-{request.param}-")
    try:
        yield request.param, released_and_submitted(python, folder, request.param == "engine")
    finally:
        for user in (INSTRUCTOR, ALICE, BOB):
            subprocess.run(["userdel", user], capture_output=True)
        subprocess.run(["groupdel", GRADERS_GROUP], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_no_student_reaches_another_students_work_or_the_release(a_class, python):
    """What ``hardened-exchange check`` says of the exchange; bob's submission in alice's name, later than hers,
    and what the instructor's collect makes of it (nbgrader's takes it as hers, with a warning; the engine's
    collects hers, and logs bob's as an error naming both accounts); then each attack of :data:`ATTACKS`. One
    class per exchange: setting one up is a dozen commands run as four users."""
    kind, paths = a_class
    given = {key: value for key, value in paths.items() if key.isupper()}
    checked = run_as(INSTRUCTOR, python, "/", "-m", "hardened_grading.exchange.command", "check",
                     str(paths["exchange"]), COURSE, check=False)
    made, said = attack(python, FORGE, given)
    assert made, said  # inbound takes any new folder: what counts is what collect makes of it
    collected = run_as(INSTRUCTOR, python, paths["course"], "-m", "nbgrader", "collect", ASSIGNMENT)
    collect_log = collected.stdout + collected.stderr
    notebook = (paths["course"] / "submitted" / ALICE / ASSIGNMENT / "problem1.ipynb").read_text()
    outcomes = {name: attack(python, code, given) for name, code in ATTACKS.items()}
    print(kind, *(f"\n  {name}: {'SUCCEEDED' if done else 'failed'} {said}" for name, (done, said) in outcomes.items()))
    succeeded = {name for name, (done, _) in outcomes.items() if done}
    if kind == "stock":  # nbgrader's default exchange: what the engine's changes, and what `check` says of it
        assert BOB_ANSWER in notebook and "cheating attempt?" in collect_log, collect_log
        assert succeeded == SUCCEED_ON_STOCK, outcomes
        assert checked.returncode == 1, checked.stdout + checked.stderr
        named = {line.split(":")[0] for line in checked.stdout.splitlines()}
        assert named == {str(paths["exchange"]), str(paths["exchange"] / COURSE / "inbound")}, checked.stdout
        return
    assert ALICE_ANSWER in notebook and BOB_ANSWER not in notebook
    assert f"it names {ALICE}, but the account {BOB} made it" in collect_log, collect_log
    assert succeeded == set(), outcomes
    assert all(said[0].startswith("PermissionError") for _, said in outcomes.values()), outcomes
    assert checked.returncode == 0 and checked.stdout.strip().endswith(": private"), checked.stdout + checked.stderr
