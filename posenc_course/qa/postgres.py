"""A PostgreSQL server of a test's or a benchmark's own: Debian's ``postgresql`` (``make test-tools`` installs it as
root), started with ``initdb`` and ``pg_ctl`` in a temporary folder, on a Unix socket only, and stopped afterwards.
The tests' module fixture is ``tests/helpers/postgres.py``'s ``postgresql``; ``benchmarks/bench_slurm.py`` starts one
with :func:`postgresql_server`. Both may import the course's tooling, not each other."""

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path


def postgresql_programs():
    """The folder of PostgreSQL's server programs (Debian keeps them off PATH), or None."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


def postgresql_unavailable():
    """Why a PostgreSQL server cannot be started here, or None."""
    if postgresql_programs() is None:
        return "PostgreSQL is not installed (Debian: sudo apt-get install postgresql; `make install` does it as root)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no 'postgres' user to run the PostgreSQL server as"
    return None


@contextlib.contextmanager
def postgresql_server():
    """Start a PostgreSQL server in a new temporary folder, on a Unix socket only; yield ``new_database()`` ->
    the URL of a new, empty database on it. The server is stopped and its folder removed at the end."""
    programs = postgresql_programs()
    # PostgreSQL refuses to run as root: the server runs as Debian's postgres user
    user = {"user": pwd.getpwnam("postgres").pw_uid} if os.geteuid() == 0 else {}
    folder = Path(tempfile.mkdtemp(prefix="posenc-pg-"))
    folder.chmod(0o755)
    if user:
        os.chown(folder, user["user"], -1)

    def server(program, *args):
        return subprocess.run([str(programs / program), *args], capture_output=True, text=True, timeout=120,
                              check=True, cwd=folder, **user)

    try:
        server("initdb", "-D", str(folder / "data"), "-U", "posenc", "--auth=trust", "-E", "UTF8")
        server("pg_ctl", "-D", str(folder / "data"), "-l", str(folder / "server.log"), "-w", "start",
               "-o", f"-k {folder} -c listen_addresses='' -c max_connections=100")
        count = iter(range(1000))

        def new_database():
            name = f"gradebook{next(count)}"
            server("createdb", "-h", str(folder), "-U", "posenc", name)
            return f"postgresql://posenc@/{name}?host={folder}"

        yield new_database
    finally:
        subprocess.run([str(programs / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"],
                       capture_output=True, cwd=folder, timeout=120, **user)
        shutil.rmtree(folder, ignore_errors=True)
