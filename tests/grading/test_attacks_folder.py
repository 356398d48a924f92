"""Attacks through what a student leaves in a folder, against real grading: nothing of it is trusted.

One class, graded by real ``nbgrader autograde`` as root (``make demo``'s and CI's grader) and by
``posenc-grade --jobs 2`` as an unprivileged user (an instructor on a hub, ``tests/helpers/graders.py``), then
``generate_feedback`` and ``release_feedback`` into a real exchange. Each attack rides in an otherwise correct
submission:

- from inside the sandbox, the kernel leaves in its folder a symbolic link in place of its own notebook (to
  the release, so that nbgrader would write the hidden tests there), links to the source notebook, the
  gradebook and a secret in the grader's home, a link named as the engine's done-marker (to a course file),
  a link to a private 0600 file (for nbgrader's chmod), a FIFO, a hard link, and thousands of files;
- by hand in ``submitted/`` (an LMS download): links to the gradebook and the source notebook, a notebook
  that is a FIFO (the grader would wait for ever), one that is a dangling link, a student's folder that is
  a link, a hard link to the gradebook;
- in ``feedback/``, before release: a feedback page that is a link to the source notebook.

Then, from outside: the release, the source, the course's files and the private file are unchanged; no
secret is in ``autograded/``, ``feedback/`` or what the exchange released; every entry there is a regular
file with one link, or a folder; every removed entry is named in the log; the honest students and the
correct answers keep full marks; a notebook that was a FIFO or a link scores 0, with why, in its feedback.
Each attack succeeds against the code before ``engine/hardened_grading/untrusted/folder.py`` (the commit's message
and docs/instructors/grading-safely.md say what it did there).
"""

import hashlib
import os
import re
import shutil
import stat
import uuid
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.utils import notebook_hash

from hardened_grading.sandbox import probe
from hardened_grading.untrusted import folder as untrusted_folder
from posenc_course import report
from posenc_course.course import generate, nbgrader_env, new_course
from posenc_course.layout import ASSIGNMENT, NOTEBOOK
from posenc_course.submissions import make_submission, reference_answers, write_submission

from ..helpers import graders
from ..helpers.grading import MAX_POINTS

pytestmark = pytest.mark.skipif(probe.sandbox_problem() is not None, reason="no bubblewrap sandbox here")

RUN = uuid.uuid4().hex[:12]
SECRET = f"home-secret-{RUN}"
PRIVATE = f"private-{RUN}"
HIDDEN_MARK = "BEGIN HIDDEN TESTS"  #: the hidden tests, in the source notebook and the graded ones
SOLUTION_MARK = "BEGIN SOLUTION"  #: the reference solutions, in the source notebook only
FULL = sum(MAX_POINTS.values())
MANY_FILES = 1500  #: files the kernel leaves: over ResilientExecute.max_files (1,000)


def kernel_code(kit):
    """What each kernel-side attacker runs, by student name (put first in its first answer cell)."""
    course = kit.course
    return {
        "k-swap-notebook": (
            "import os\n"
            "os.remove('exercises.ipynb')\n"
            f"os.symlink({str(course / 'release' / ASSIGNMENT / NOTEBOOK)!r}, 'exercises.ipynb')"),
        "k-links-out": (
            "import os\n"
            f"os.symlink({str(course / 'source' / ASSIGNMENT / NOTEBOOK)!r}, 'solutions.txt')\n"
            f"os.symlink({str(course / 'gradebook.db')!r}, 'grades.txt')\n"
            f"os.symlink({str(kit.home / 'secret.txt')!r}, 'home.txt')\n"
            "os.symlink('/etc/shadow', 'shadow.txt')\n"
            f"os.symlink({str(course / 'source')!r}, 'source-folder')"),
        "k-marker-chmod": (
            "import os\n"
            f"os.symlink({str(course / 'victim.txt')!r}, '.hardened-grading-done')\n"
            f"os.symlink({str(kit.private)!r}, 'private.txt')"),
        "k-special-files": (
            "import os, socket\n"
            "os.mkfifo('notes.txt')\n"
            "socket.socket(socket.AF_UNIX).bind('plot.png')\n"
            "open('mine.txt', 'w').write('mine')\n"
            "open('evil.html', 'w').write('<script>a page of its own, for release_feedback</script>')\n"
            "open('numpy.py', 'w').write('# runs in whatever kernel an instructor starts here')\n"
            "open('ipykernel_launcher.py', 'w').write('# runs as that kernel starts')\n"
            "open('submission_secret.txt', 'w').write('a secret of its own, to be released under')\n"
            "os.link('mine.txt', 'also-mine.txt')"),
        "k-many-files": (
            "import os\n"
            "os.makedirs('many', exist_ok=True)\n"
            f"for _i in range({MANY_FILES}):\n"
            "    open(f'many/f{_i:05}.txt', 'w').write('x')"),
    }


def shadow(kit, student):
    """A module that, imported outside the sandbox, leaves a file in the course (the sandbox has no such path)."""
    return (f"try:\n    open({str(kit.course / ('PWNED-' + student))!r}, 'w').write('ran outside the sandbox')\n"
            "except OSError:\n    pass\n")


def scratch_code(kit):
    """What each attacker runs in a scratch cell of its own, after the notebook's first code cell, by student name."""
    return {
        # a package named as the engine, for the next kernel it starts here (after this crash) to import
        "k-engine-shadow": (
            "import os\n"
            "if not os.path.exists('hardened_grading'):\n"
            "    os.mkdir('hardened_grading')\n"
            f"    open('hardened_grading/__init__.py', 'w').write({shadow(kit, 'k-engine-shadow')!r})\n"
            f"    open('runpy.py', 'w').write({shadow(kit, 'k-engine-shadow')!r})\n"
            "    os._exit(1)  # the grader starts a fresh kernel, in this folder"),
    }


#: Students whose submitted folder is changed by hand, and what each must score.
BY_HAND = {"h-lms-links": FULL, "h-fifo-notebook": 0, "h-dangling-notebook": 0, "h-linked-folder": 0,
           "h-hard-gradebook": FULL, "h-engine-shadow": FULL}


def tamper_submitted(kit):
    """Place the by-hand attacks in ``submitted/`` (after the honest files are written)."""
    submitted, course = kit.course / "submitted", kit.course
    folder = submitted / "h-lms-links" / ASSIGNMENT
    os.symlink(course / "gradebook.db", folder / "grades.db")
    os.symlink(course / "source" / ASSIGNMENT / NOTEBOOK, folder / "solutions.txt")
    fifo = submitted / "h-fifo-notebook" / ASSIGNMENT / NOTEBOOK
    fifo.unlink()
    os.mkfifo(fifo)
    dangling = submitted / "h-dangling-notebook" / ASSIGNMENT / NOTEBOOK
    dangling.unlink()
    os.symlink(course / "nowhere.ipynb", dangling)
    elsewhere = kit.root / "elsewhere"
    shutil.move(submitted / "h-linked-folder", elsewhere)
    os.symlink(course / "source" / ASSIGNMENT / NOTEBOOK, elsewhere / ASSIGNMENT / "solutions.txt")
    os.symlink(elsewhere, submitted / "h-linked-folder")
    os.link(course / "gradebook.db", submitted / "h-hard-gradebook" / ASSIGNMENT / "grades.db")
    package = submitted / "h-engine-shadow" / ASSIGNMENT / "hardened_grading"  # beside the notebook, for the launcher
    package.mkdir()
    (package / "__init__.py").write_text(shadow(kit, "h-engine-shadow"))
    (package.parent / "runpy.py").write_text(shadow(kit, "h-engine-shadow"))


#: Root grades with nbgrader autograde (make demo, CI), the unprivileged user with posenc-grade --jobs 2 (a hub): each
#: user and each command once (the other two pairings add four minutes of a test worker and no channel: the other
#: attack suites, tests/grading/test_hostile_output.py and tests/grading/test_hostile_channels.py, grade as each user with autograde).
GRADERS = [("root", "autograde"), ("unprivileged", "posenc-grade")]


@pytest.fixture(scope="module", params=GRADERS, ids=[f"{who}-{how}" for who, how in GRADERS])
def attacked(request):
    who, how = request.param
    yield from graders.graded_as(who, request, "attacks", grade, how)


def grade(root, user, python, how):
    course = new_course(root / "course")
    home = root / "home"
    home.mkdir()
    (home / "secret.txt").write_text(SECRET + "\n")
    (home / "secret.txt").chmod(0o600)
    private = root / "private.txt"
    private.write_text(PRIVATE)
    private.chmod(0o600)
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    (course / "victim.txt").write_text("a course file\n")
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    kit = SimpleNamespace(course=course, home=home, private=private, root=root, release=generate(course))
    answers = reference_answers(course / "source" / ASSIGNMENT / NOTEBOOK)
    codes, scratch = kernel_code(kit), scratch_code(kit)
    students = ["honest-a", *codes, *scratch, *BY_HAND, "honest-z"]
    for name in students:
        notebook = make_submission(answers, release_notebook=kit.release)
        if name in codes:
            cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution")
                        and c.cell_type == "code")
            cell.source = codes[name] + "\n\n" + cell.source
        if name in scratch:
            first = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code")
            notebook.cells.insert(first + 1, nbformat.v4.new_code_cell(scratch[name]))
        folder = write_submission(notebook, course / "submitted", name).parent
        (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
        (folder / "submission_secret.txt").write_text(f"secret-of-{name}")
    tamper_submitted(kit)
    before = fingerprint(course, private)
    graders.hand_over(root, user, keep=[exchange])
    env = nbgrader_env(HOME=str(home), PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    command = ([python, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"] if how == "autograde" else
               [python, "-m", "posenc_course.instructor.grade", ASSIGNMENT, "--jobs", "2", "--force"])
    graded = graders.as_grader(user, command, course, env, timeout=1800)
    log = graded.stdout + graded.stderr
    named = re.search(r"; log: (\S+\.log)$", graded.stderr, re.MULTILINE)
    if named:
        log += Path(named.group(1)).read_text()
    # a graded folder that holds a link (one graded before this engine made them plain): feedback must not follow it
    os.symlink(course / "source" / ASSIGNMENT / NOTEBOOK, course / "autograded" / "honest-a" / ASSIGNMENT / "old.txt")
    feedback = graders.as_grader(user, [python, "-m", "nbgrader", "generate_feedback", ASSIGNMENT, "--force"],
                         course, env, timeout=900)
    # before release: one feedback page is made a link to the source notebook
    page = course / "feedback" / "k-links-out" / ASSIGNMENT / "exercises.html"
    if page.exists():
        page.unlink()
        os.symlink(course / "source" / ASSIGNMENT / NOTEBOOK, page)
    released = graders.as_grader(user, [python, "-m", "nbgrader", "release_feedback", ASSIGNMENT], course, env,
                         timeout=900)
    return SimpleNamespace(course=course, exchange=exchange, private=private, home=home, before=before,
                           after=fingerprint(course, private), graded=graded, log=log, feedback=feedback,
                           released=released, students=students,
                           scores=report.exercise_scores(course / "gradebook.db"))


def fingerprint(course, private):
    """What no submission may change: the release, the source, the course's files, a private file and its mode."""
    paths = [course / "release" / ASSIGNMENT / NOTEBOOK, course / "source" / ASSIGNMENT / NOTEBOOK,
             course / "victim.txt", course / "nbgrader_config.py", private]
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), stat.S_IMODE(p.stat().st_mode)) for p in paths}


def total(scores, student):
    return sum(score for score, _ in scores[student].values())


def shown_files(attacked):
    """Every entry under autograded/, feedback/ and the exchange's released feedback."""
    course = attacked.course
    folders = [course / "autograded", course / "feedback", attacked.exchange / ASSIGNMENT / "feedback"]
    placed = attacked.course / "feedback" / "k-links-out" / ASSIGNMENT / "exercises.html"  # by this test, see grade()
    return [p for folder in folders if folder.exists() for p in [folder, *folder.rglob("*")] if p != placed]


def test_the_class_is_graded_and_released(attacked):
    assert attacked.graded.returncode == 0, attacked.log[-4000:]
    assert attacked.feedback.returncode == 0, (attacked.feedback.stdout + attacked.feedback.stderr)[-4000:]
    # one page was made a link to the source notebook: it is refused, the others are released
    output = attacked.released.stdout + attacked.released.stderr
    assert attacked.released.returncode == 1 and "could not release the feedback of k-links-out" in output, output
    released = {path.name for path in (attacked.exchange / ASSIGNMENT / "feedback").iterdir()}
    # h-linked-folder's files went with its link: no submission_secret.txt, so it is named and skipped
    assert re.search(r"Not releasing feedback for student 'h-linked-folder'", output), output
    # each under the secret its submission came with, not one its kernel wrote; the kernel's own page not at all
    expected = {f"{notebook_hash(secret=f'secret-of-{name}', notebook_id='exercises')}.html"
                for name in attacked.students if name not in ("k-links-out", "h-linked-folder")}
    assert released == expected, output
    assert "Not releasing" in output and "evil.html" in output, output


def test_no_file_outside_a_students_folder_is_written_or_chmodded(attacked):
    assert attacked.after == attacked.before


def test_nothing_shown_or_released_is_a_link_or_a_special_file(attacked):
    for path in shown_files(attacked):
        status = os.lstat(path)
        assert stat.S_ISDIR(status.st_mode) or (stat.S_ISREG(status.st_mode) and status.st_nlink == 1), path


def test_the_done_marker_is_the_graders_and_stays_in_autograded(attacked):
    found = (attacked.course / "autograded").glob("*/*/.hardened-grading-done")
    markers = {path.parent.parent.name: path.read_text() for path in found}
    assert markers == dict.fromkeys(attacked.students, "graded\n")
    assert not list((attacked.course / "feedback").rglob(".hardened-grading-done"))


def test_no_secret_reaches_the_graded_folders_the_feedback_or_the_exchange(attacked):
    """Not the grader's home, the private file, the gradebook or the solutions anywhere; not the hidden tests in
    what a student receives (a graded notebook holds them: it is the instructor's)."""
    for path in shown_files(attacked):
        secrets = [SECRET, PRIVATE, SOLUTION_MARK, "SQLite format 3"]
        if not path.is_relative_to(attacked.course / "autograded"):
            secrets.append(HIDDEN_MARK)
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace")
            assert not [s for s in secrets if s in text], f"{path} shows a secret"


def test_honest_students_and_correct_answers_keep_full_marks(attacked):
    kernel_side = [name for name in attacked.students if name.startswith(("honest", "k-"))]
    assert {name: total(attacked.scores, name) for name in kernel_side} == dict.fromkeys(kernel_side, FULL)


def test_by_hand_attacks_score_as_their_notebook_deserves(attacked):
    assert {name: total(attacked.scores, name) for name in BY_HAND} == BY_HAND


def test_a_notebook_that_was_no_file_says_why_in_its_feedback(attacked):
    for student, why in [("h-fifo-notebook", "a FIFO"), ("h-dangling-notebook", "a symbolic link"),
                         ("h-linked-folder", "was a symbolic link")]:
        page = attacked.course / "feedback" / student / ASSIGNMENT / "exercises.html"
        assert why in page.read_text(), student


def test_every_entry_left_out_is_named_in_the_log(attacked):
    log = attacked.log
    for entry in ["k-swap-notebook/posenc/exercises.ipynb in the graded folder is a symbolic link",
                  "k-links-out/posenc/solutions.txt in the graded folder is a symbolic link",
                  "k-marker-chmod/posenc/private.txt in the graded folder is a symbolic link",
                  "k-special-files/posenc/notes.txt in the graded folder is a FIFO",
                  "k-special-files/posenc/plot.png in the graded folder is a socket",
                  "k-special-files/posenc/mine.txt in the graded folder is a hard link",
                  "k-special-files/posenc/numpy.py in the graded folder is a stand-in for the module numpy",
                  "beyond the limit of 1000 files",
                  "h-lms-links/posenc/grades.db is a symbolic link",
                  "h-fifo-notebook/posenc/exercises.ipynb is a FIFO",
                  "h-linked-folder is a symbolic link",
                  "h-hard-gradebook/posenc/grades.db is a hard link"]:
        assert entry in log, entry


def test_feedback_is_made_from_plain_files_only(attacked):
    output = attacked.feedback.stdout + attacked.feedback.stderr
    assert "honest-a/posenc/old.txt is a symbolic link" in output, output[-3000:]
    assert not os.path.lexists(attacked.course / "feedback" / "honest-a" / ASSIGNMENT / "old.txt")


def test_no_module_of_the_students_folder_runs_outside_the_sandbox(attacked):
    """A ``hardened_grading`` package and a ``runpy.py`` in the student's folder, made by a kernel before it
    crashed or sent with the submission: the kernel's launcher, which starts there, imports neither (on the engine
    before this, ``python -m`` did, as the grader's user, before entering the sandbox)."""
    assert not list(attacked.course.glob("PWNED-*")), [p.name for p in attacked.course.glob("PWNED-*")]
    graded = (attacked.course / "autograded" / "k-engine-shadow" / ASSIGNMENT / NOTEBOOK).read_text()
    assert "KernelDied" in graded, "the scratch cell did not crash, so no kernel started again in that folder"


def test_the_kernels_files_are_capped_and_the_rest_kept(attacked):
    folder = attacked.course / "autograded" / "k-many-files" / ASSIGNMENT
    entries = [p for p in folder.rglob("*") if p.name != ".hardened-grading-done"]  # marked after
    assert len(entries) == untrusted_folder.MAX_FILES  # files and folders
    assert (folder / NOTEBOOK).is_file() and (folder / "submission_secret.txt").is_file()
    special = attacked.course / "autograded" / "k-special-files" / ASSIGNMENT
    assert {p.name for p in special.iterdir()} == {".hardened-grading-done", NOTEBOOK, "timestamp.txt",
                                                   "submission_secret.txt", "evil.html"}  # regular files: kept
