"""The private exchange's layout (hardened_grading.exchange.folders), on folders of this test's own: what
``prepare`` makes, and what ``problems`` finds in nbgrader's default layout. The attacks themselves, as Unix
users, are tests/system/test_exchange_privacy.py."""

import os
import stat

import pytest

from hardened_grading.exchange import command, folders
from hardened_grading.exchange.submit import make_private


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_prepare_makes_every_folder_with_its_mode_and_check_calls_it_private(tmp_path, capsys):
    root = tmp_path / "exchange"
    assert command.main(["prepare", str(root), "c101"]) == 0
    assert {str(path.relative_to(tmp_path)): mode(path) for path, _ in folders.course_folders(root, "c101")} == {
        "exchange": 0o1777, "exchange/c101": 0o2775, "exchange/c101/outbound": 0o2775,
        "exchange/c101/inbound": 0o3773, "exchange/c101/feedback": 0o2771}
    assert folders.problems(root, "c101") == []
    assert command.main(["check", str(root), "c101"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{root / 'c101'}: private"


def nbgrader_default_layout(root, course):
    """The modes nbgrader's release_assignment gives (nbgrader/exchange/default/release_assignment.py)."""
    for path, wanted in ((root, 0o777), (root / course, 0o755), (root / course / "outbound", 0o755),
                         (root / course / "inbound", 0o2733), (root / course / "feedback", 0o711)):
        path.mkdir()
        os.chmod(path, wanted)


def test_check_names_each_hole_of_nbgrader_default_layout_and_the_mode_to_give(tmp_path, capsys):
    root = tmp_path / "exchange"
    nbgrader_default_layout(root, "c101")
    found = folders.problems(root, "c101")
    assert [(path.name, problem.split(":")[1].strip()[:28]) for path, problem in found] == [
        ("exchange", "with no sticky bit, any user"), ("inbound", "with no sticky bit, any user")]
    assert "(make it 1777)" in found[0][1] and "(make it 3773)" in found[1][1]
    assert command.main(["check", str(root), "c101"]) == 1
    assert capsys.readouterr().out.count("\n") == 2


@pytest.mark.parametrize("folder, wide, said", [("outbound", 0o777, "rename or remove"),
                                                ("feedback", 0o755, "any user can list it"),
                                                ("inbound", 0o3777, "any user can list it"),
                                                ("", 0o1775, "those commands fail"),
                                                ("inbound", 0o3770, "those commands fail")])
def test_check_finds_a_folder_opened_to_others(tmp_path, folder, wide, said):
    root = tmp_path / "exchange"
    folders.prepare(root, "c101")
    changed = root / folder if folder == "" else root / "c101" / folder
    os.chmod(changed, wide)
    [(path, problem)] = folders.problems(root, "c101")
    assert path == changed and said in problem


def test_a_home_others_can_enter_is_named(tmp_path):
    home = os.path.expanduser("~")
    found = command.home_problems([os.environ.get("USER") or "root", "no-such-user-x"])
    assert found[-1][0] == "no-such-user-x" and "no such account" in found[-1][1]
    assert (len(found) == 2) == bool(os.stat(home).st_mode & 0o005)


def test_a_submission_is_made_private_without_following_its_links(tmp_path):
    submission, elsewhere = tmp_path / "alice+ps1+x", tmp_path / "elsewhere.txt"
    (submission / "data").mkdir(parents=True)
    (submission / "problem1.ipynb").write_text("{}")
    (submission / "data" / "table.csv").write_text("1")
    elsewhere.write_text("not the submission's")
    os.chmod(elsewhere, 0o644)
    (submission / "link").symlink_to(elsewhere)
    os.chmod(submission, 0o777)
    make_private(submission)
    assert [mode(submission), mode(submission / "data")] == [0o750, 0o750]
    assert [mode(submission / "problem1.ipynb"), mode(submission / "data" / "table.csv")] == [0o640, 0o640]
    assert mode(elsewhere) == 0o644


@pytest.mark.parametrize("mode, holes", [(0o755, 1), (0o751, 1), (0o2770, 0), (0o700, 0)])
def test_a_course_folder_students_can_enter_is_named(tmp_path, capsys, mode, holes):
    root, course = tmp_path / "exchange", tmp_path / "course101"
    folders.prepare(root, "c101")
    course.mkdir()
    os.chmod(course, mode)
    assert command.main(["check", str(root), "c101", "--course-folder", str(course)]) == (1 if holes else 0)
    out = capsys.readouterr().out
    assert out.count("gradebook") == holes, out
