"""``make release``: ``nbgrader generate_assignment A --force`` for each assignment, without losing the release.

nbgrader removes ``release/A/`` first, then refuses to record the new notebook in the gradebook when
its cells changed and the gradebook has submissions of it ("Cannot add or remove cells ... because
there are submissions associated with it"), in a long traceback. The release is then gone. Here the old
``release/A/`` is put back when nbgrader fails, and a refusal is told in a few lines, with what to do.

    python -m posenc_course.authoring.generate posenc posenc-advanced theory     # as make release does
"""

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from ..course import load_config, run_nbgrader
from ..layout import course_root

REFUSAL = "because there are submissions associated with it"


def submitters(course, assignment):
    """The ids of the students with a submission of `assignment` in `course`'s gradebook (sorted)."""
    from nbgrader.api import Gradebook, MissingEntry

    config = load_config(course)
    url = config.CourseDirectory.get("db_url") or f"sqlite:///{Path(course) / 'gradebook.db'}"
    try:
        with Gradebook(url) as gradebook:
            return sorted(s.student.id for s in gradebook.find_assignment(assignment).submissions)
    except MissingEntry:
        return []


def refusal_message(assignment, students):
    """What to say, in two or three lines, when nbgrader refuses to change `assignment`."""
    shown = ", ".join(students[:5]) + (f" and {len(students) - 5} more" if len(students) > 5 else "")
    lines = [f"make release: nbgrader refused to regenerate {assignment}: its cells changed, and this course's "
             f"gradebook has submissions of it ({shown or 'see gradebook.db'}). release/{assignment}/ is left as it was."]
    if students and all(s.startswith("demo-") for s in students):
        lines.append("  They are an older `make demo`'s (the demo now grades in demo/); remove them, then run make "
                     "release again: " + "; ".join(f"nbgrader db student remove {s} --force" for s in students))
    else:
        lines.append("  A class has submitted it: release the change as a new assignment (a new folder in source/), "
                     "or, to discard those grades, nbgrader db student remove ID --force for each student.")
    return "\n".join(lines)


def generate(course, assignment):
    """Regenerate `assignment`'s release in `course`; on failure put the old one back. Return True if done."""
    course = Path(course)
    release = course / "release" / assignment
    with tempfile.TemporaryDirectory(prefix="posenc-release-") as backup:
        kept = Path(backup) / assignment
        if release.exists():
            shutil.copytree(release, kept, symlinks=True)
        print(f"$ nbgrader generate_assignment {assignment} --force", flush=True)
        result = run_nbgrader(course, "generate_assignment", assignment, "--force")
        if result.returncode == 0:
            sys.stdout.write(result.stdout)
            sys.stderr.write(result.stderr)
            return True
        if release.exists():
            shutil.rmtree(release)
        if kept.exists():
            shutil.copytree(kept, release, symlinks=True)
    output = result.stdout + result.stderr
    if REFUSAL in output:
        print(refusal_message(assignment, submitters(course, assignment)), file=sys.stderr)
    else:
        sys.stderr.write(output)
        print(f"make release: nbgrader generate_assignment {assignment} failed (exit code {result.returncode}); "
              f"release/{assignment}/ is left as it was.", file=sys.stderr)
    return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0].replace("``", ""))
    parser.add_argument("assignments", nargs="*", metavar="ASSIGNMENT", help="an assignment of source/ to release")
    assignments = parser.parse_args(argv).assignments
    course = course_root()
    failed = [a for a in assignments if not generate(course, a)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
