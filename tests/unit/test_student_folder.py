"""A student's folder is untrusted input (``engine/hardened_grading/untrusted/folder.py``): unit tests, in milliseconds.

Each entry a student's code or an LMS can leave (a symbolic link, a dangling one, a hard link, a FIFO, a
socket, a device, a folder that is a link) is found, removed or left out, and never read, written or
chmodded through; regular files and folders are kept as they are. The app tests, with real nbgrader runs,
are ``tests/grading/test_attacks_folder.py``.
"""

import os
import socket
import stat
import threading
import time

import pytest

from hardened_grading import nbgrader_app
from hardened_grading import errors
from hardened_grading.untrusted import folder as untrusted_folder


@pytest.fixture
def outside(tmp_path):
    """A secret file outside the student's folder, 0600, that links point to."""
    secret = tmp_path / "outside" / "gradebook.db"
    secret.parent.mkdir()
    secret.write_text("hidden tests and grades")
    secret.chmod(0o600)
    return secret


def hostile_folder(folder, outside):
    """`folder` with plain entries and one of every kind a grader must not follow; return the hostile names."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "exercises.ipynb").write_text("{}")
    (folder / "data").mkdir()
    (folder / "data" / "table.csv").write_text("1,2\n")
    os.symlink(outside, folder / "link.txt")
    os.symlink(outside.parent, folder / "link-to-folder")
    os.symlink(folder / "nowhere", folder / "dangling.ipynb")
    os.link(folder / "data" / "table.csv", folder / "hard.csv")
    os.mkfifo(folder / "fifo.txt")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "data" / "socket"))
    hostile = {"link.txt", "link-to-folder", "dangling.ipynb", "hard.csv", os.path.join("data", "table.csv"),
               "fifo.txt", os.path.join("data", "socket")}
    if os.geteuid() == 0:
        os.mknod(folder / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        hostile.add("null")
    return hostile


def test_scan_finds_every_entry_that_is_not_plain_and_keeps_the_rest(tmp_path, outside):
    hostile = hostile_folder(tmp_path / "student", outside)
    found = untrusted_folder.scan(tmp_path / "student")
    assert {path for path, _ in found.unsafe} == hostile
    assert [path for path, _ in found.files] == ["exercises.ipynb"]
    assert found.folders == ["data"]
    why = dict(found.unsafe)
    assert why["link.txt"] == f"a symbolic link to {outside}"
    assert why["hard.csv"].startswith("a hard link") and why["fifo.txt"] == "a FIFO"
    assert why[os.path.join("data", "socket")] == "a socket"


def test_a_folder_that_is_a_link_is_refused(tmp_path, outside):
    os.symlink(outside.parent, tmp_path / "student")
    with pytest.raises(errors.UnsafeEntry, match="symbolic link"):
        untrusted_folder.scan(tmp_path / "student")
    assert untrusted_folder.not_a_folder(tmp_path / "student").startswith("a symbolic link")
    assert untrusted_folder.not_a_folder(outside.parent) is None


def test_remove_unsafe_removes_links_not_what_they_point_to(tmp_path, outside, caplog):
    folder = tmp_path / "student"
    hostile = hostile_folder(folder, outside)
    removed = untrusted_folder.remove_unsafe(folder, "mallory", "the submitted file")
    assert {path for path, _ in removed} == hostile
    assert not any(os.path.lexists(folder / path) for path in hostile)
    assert outside.read_text() == "hidden tests and grades" and stat.S_IMODE(outside.stat().st_mode) == 0o600
    assert (folder / "exercises.ipynb").read_text() == "{}"
    assert "link.txt is a symbolic link" in caplog.text and "mallory" in caplog.text


def test_rebuild_keeps_plain_files_only_and_leaves_the_old_folder_behind(tmp_path, outside):
    folder = tmp_path / "student"
    hostile = hostile_folder(folder, outside)
    (folder / "exercises.ipynb").chmod(0o640)
    held = os.open(folder, os.O_RDONLY)  # as a process of the sandbox holds its working folder
    try:
        left_out = untrusted_folder.rebuild(folder, who="mallory")
        assert {path for path, _ in left_out} == hostile
        assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == ["data", "exercises.ipynb"]
        assert stat.S_IMODE((folder / "exercises.ipynb").stat().st_mode) == 0o640
        # the held folder is the old one, removed: a link made in it now cannot reach the new one
        with pytest.raises(FileNotFoundError):
            os.symlink(outside, "late-link", dir_fd=held)
        assert not os.path.lexists(folder / "late-link") and os.fstat(held).st_ino != folder.stat().st_ino
    finally:
        os.close(held)
    assert [p.name for p in tmp_path.iterdir() if p.name != "outside"] == ["student"], "the old folder is removed"


def test_rebuild_caps_files_and_bytes(tmp_path):
    folder = tmp_path / "student"
    (folder / "deep").mkdir(parents=True)
    (folder / "exercises.ipynb").write_text("{}")
    for index in range(30):
        (folder / "deep" / f"f{index:02}.txt").write_text("x")
    left_out = untrusted_folder.rebuild(folder, max_files=11)  # the folder deep, the notebook and 9 files of deep
    assert (folder / "exercises.ipynb").exists(), "the entries at the top come first"
    assert len(list((folder / "deep").iterdir())) == 9
    assert [path for path, _ in left_out] == [os.path.join("deep", f"f{index:02}.txt") for index in range(9, 29)] + \
        ["1 more entries"], "the first 20 named, the rest counted"
    assert all("max_files" in why for _, why in left_out)
    (folder / "big.bin").write_bytes(bytes(3 * 2**20))
    left_out = untrusted_folder.rebuild(folder, max_mb=2)
    assert [path for path, _ in left_out] == ["big.bin"] and "max_folder_mb" in left_out[0][1]
    assert not (folder / "big.bin").exists() and (folder / "exercises.ipynb").exists()


def test_a_flood_of_folders_is_capped_and_logged_in_a_few_lines(tmp_path, caplog):
    """Folders count as entries too, and the log names the first few left out and counts the rest: a kernel that
    makes a million empty folders leaves neither a million folders nor a million log lines."""
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "exercises.ipynb").write_text("{}")
    for index in range(500):
        (folder / f"d{index:03}").mkdir()
    caplog.set_level("ERROR", logger="hardened_grading")
    left_out = untrusted_folder.rebuild(folder, max_files=50)
    assert len(list(folder.iterdir())) == 50  # 501 entries: 50 kept, 20 named and 431 counted left out
    beyond = "beyond the limit of 50 files and folders (ResilientExecute.max_files)"
    assert len(left_out) == 21 and left_out[-1] == ("431 more entries", beyond)
    assert len(caplog.records) == 21


def test_rebuild_leaves_out_modules_that_a_kernel_started_there_would_import_in_place_of_its_own(tmp_path):
    """The graded notebook opened live, or validated, starts a kernel in its folder, which comes first on sys.path:
    an ipykernel_launcher.py there runs as it starts, a numpy.py at the first cell, as the instructor."""
    folder = tmp_path / "student"
    (folder / "json").mkdir(parents=True)
    (folder / "json" / "__init__.py").write_text("")
    (folder / "scratch").mkdir()  # a folder, no package: the real one would come first
    for name in ("numpy.py", "ipykernel_launcher.py", "os.pyc", "my_helpers.py", "exercises.ipynb", "data.csv"):
        (folder / name).write_text("")
    (folder / "scratch" / "numpy.py").write_text("")  # not at the top: never on the kernel's path
    left_out = dict(untrusted_folder.rebuild(folder))
    assert sorted(left_out) == ["ipykernel_launcher.py", "json", "numpy.py", "os.pyc"]
    assert left_out["numpy.py"].startswith("a stand-in for the module numpy")
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv", "exercises.ipynb", "my_helpers.py", "scratch"]


def test_rebuild_leaves_out_folders_nested_too_deep(tmp_path):
    folder = tmp_path / "student"
    deep = folder.joinpath(*["d"] * (untrusted_folder.MAX_DEPTH + 3))
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    (folder / "exercises.ipynb").write_text("{}")
    left_out = untrusted_folder.rebuild(folder)
    assert [why for _, why in left_out] == [f"nested deeper than {untrusted_folder.MAX_DEPTH} folders"]
    assert (folder / "exercises.ipynb").exists() and not list(folder.rglob("bottom.txt"))


def test_rebuild_never_leaves_the_folders_tree_when_a_folder_becomes_a_link(tmp_path, outside, monkeypatch):
    """A folder swapped for a link after it was checked (by a process that outlived its kernel): the walk opens
    each folder without following a link, so it moves nothing from where the link points. Simulated by a check
    that takes every entry for a plain one; moving by path, through the link, would take the secret away."""
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "exercises.ipynb").write_text("{}")
    os.symlink(outside.parent, folder / "data")
    monkeypatch.setattr(untrusted_folder, "why_unsafe", lambda status: None)
    monkeypatch.setattr(untrusted_folder.stat, "S_ISDIR", lambda mode: not stat.S_ISREG(mode))  # the link: a folder
    left_out = untrusted_folder.rebuild(folder)
    monkeypatch.undo()
    assert outside.read_text() == "hidden tests and grades", "a file was moved out of the folder the link points to"
    assert ("data", "no longer a folder") in left_out
    assert sorted(p.name for p in folder.iterdir()) == ["exercises.ipynb"]


def test_open_regular_never_follows_a_link_nor_waits_on_a_fifo(tmp_path, outside):
    os.symlink(outside, tmp_path / "link.ipynb")
    os.mkfifo(tmp_path / "fifo.ipynb")
    (tmp_path / "plain.ipynb").write_text("{}")
    os.link(tmp_path / "plain.ipynb", tmp_path / "hard.ipynb")
    (tmp_path / "single.ipynb").write_text("{}")
    done = {}

    def try_all():
        for name in ("link.ipynb", "fifo.ipynb", "hard.ipynb"):
            try:
                untrusted_folder.open_regular(tmp_path / name)
                done[name] = "opened"
            except errors.UnsafeEntry as error:
                done[name] = error.strerror

    worker = threading.Thread(target=try_all, daemon=True)
    worker.start()
    worker.join(60)  # nothing to wait for: a FIFO opened to read with no writer would block for ever
    assert not worker.is_alive(), "open_regular blocked on a FIFO"
    assert done["link.ipynb"].startswith("a symbolic link") and done["fifo.ipynb"].startswith("a FIFO")
    assert done["hard.ipynb"].startswith("a hard link")
    with untrusted_folder.open_regular(tmp_path / "single.ipynb") as stream:
        assert stream.read() == b"{}"


def test_write_new_replaces_a_link_and_never_writes_through_it(tmp_path, outside):
    os.symlink(outside, tmp_path / ".hardened-grading-done")
    untrusted_folder.write_new(tmp_path / ".hardened-grading-done", "graded\n")
    assert outside.read_text() == "hidden tests and grades"
    assert not os.path.islink(tmp_path / ".hardened-grading-done")
    assert (tmp_path / ".hardened-grading-done").read_text() == "graded\n"


def test_plain_path_refuses_a_folder_on_the_way_that_is_a_link(tmp_path, outside):
    (tmp_path / "course" / "feedback" / "ann").mkdir(parents=True)
    os.symlink(outside.parent, tmp_path / "course" / "feedback" / "bob")
    course = tmp_path / "course"
    assert untrusted_folder.plain_path(course, course / "feedback" / "ann" / "exercises.html")
    assert not untrusted_folder.plain_path(course, course / "feedback" / "bob" / "exercises.html")
    assert not untrusted_folder.plain_path(course, outside)


def test_shown_escapes_what_a_terminal_would_obey():
    assert untrusted_folder.shown("exercises.ipynb") == "exercises.ipynb"
    assert "\x1b" not in untrusted_folder.shown("\x1b]0;pwned\x07x") and "\\x1b" in untrusted_folder.shown("\x1b[2J")
    assert "\n" not in untrusted_folder.shown("a\n[AutogradeApp | INFO] fake")


# nbgrader's is_ignored, in linear time -----------------------------------------------------------------------

NAMES = [".ipynb_checkpoints", "__pycache__", "a.pyc", ".hidden.pyc", "x.ipynb", ".x.ipynb", "feedback", "A.PYC",
         "data.csv", "[x].txt", "*star", "q?.txt", ".git", "notes.md"]
PATTERNS = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.ipynb", ".*", "*", "[ab].pyc", "q?.txt",
            "*star", "?.csv", "*.PYC", "sub/*.txt", "[x].txt"]


def test_is_ignored_gives_nbgrader_verdict_for_every_name_and_pattern(tmp_path):
    nbgrader_app.linear_ignore_globs()
    original = nbgrader_app._nbgrader_is_ignored
    (tmp_path / "sub").mkdir()
    for name in NAMES:
        (tmp_path / name).write_text("")
        (tmp_path / "sub" / name).write_text("")
    for folder in (tmp_path, tmp_path / "sub"):
        for name in NAMES:
            for pattern in [*PATTERNS, None]:
                patterns = None if pattern is None else [pattern]
                path = str(folder / name)
                assert nbgrader_app.is_ignored(path, patterns) == original(path, patterns), (path, pattern)


def test_nbgrader_lists_a_folder_no_more_per_file_than_before(tmp_path, monkeypatch):
    """nbgrader's find_all_files, with the course's ignore patterns, lists no folder once per file it holds:
    its cost grows with the number of files, not its square (the old way listed the folder for every file)."""
    import nbgrader.utils

    nbgrader_app.linear_ignore_globs()
    for index in range(300):
        (tmp_path / f"f{index}.txt").write_text("x")
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real_scandir(path))
    started = time.perf_counter()
    found = nbgrader.utils.find_all_files(str(tmp_path), [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"])
    assert len(found) == 300 and time.perf_counter() - started < 60
    assert len(listed) <= 2, f"the folder was listed {len(listed)} times for 300 files"
