"""What a venv holds that a lock does not name, for ``make install`` to uninstall: installing a lock over an existing
venv adds and moves packages but removes none, so one that an older lock had (or one installed by hand) stayed.

    .venv/bin/python -I posenc_course/venv_extras.py requirements.lock    # the names, one a line

It uses only the standard library and reads the venv of the Python that runs it (``-I``: not this folder's
modules), so that it runs before the course is installed. Kept whatever the lock says: pip and uv, which install
the lock, and the course and its engine, installed editable from this repository (:data:`KEPT`).
"""

import re
import sys
from importlib import metadata

#: Distributions a venv keeps though no lock names them: the installers, and this repository's own two.
KEPT = frozenset({"pip", "uv", "posenc", "hardened-grading"})

#: A lock's requirement line: a name, then ``==`` and its version (uv pip compile writes one a line).
LOCKED_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==")


def canonical(name):
    """`name` as packaging normalises a distribution's name (PEP 503): lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock_text):
    """The canonical names the lock `lock_text` pins, whatever their markers (a package the lock names only for
    another platform is not this script's to remove)."""
    return {canonical(match[1]) for line in lock_text.splitlines() if (match := LOCKED_LINE.match(line.strip()))}


def installed():
    """The canonical names of the distributions this Python's ``sys.path`` holds."""
    return {canonical(dist.metadata["Name"]) for dist in metadata.distributions() if dist.metadata["Name"]}


def extras(lock_text, present):
    """The names among `present` that neither the lock `lock_text` nor :data:`KEPT` names, sorted."""
    return sorted(set(present) - locked(lock_text) - KEPT)


def main(argv=None):
    """Print the extras of this Python's venv against the lock file `argv` names; 2 with what to do if it cannot."""
    import argparse

    parser = argparse.ArgumentParser(prog="venv_extras", description=__doc__.splitlines()[0])
    parser.add_argument("lock", help="the lock, e.g. requirements.lock")
    path = parser.parse_args(argv).lock
    try:
        with open(path, encoding="utf-8") as lock:
            lock_text = lock.read()
    except OSError as error:
        print(f"venv_extras: cannot read the lock {path} ({error.strerror}): give its path, e.g. requirements.lock "
              "in the repository's root", file=sys.stderr)
        return 2
    if not locked(lock_text):
        print(f"venv_extras: {path} pins no package (no NAME==VERSION line): is it a lock? Nothing removed",
              file=sys.stderr)
        return 2
    print("\n".join(extras(lock_text, installed())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
