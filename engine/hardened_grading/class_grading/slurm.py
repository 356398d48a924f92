"""``hardened-slurm``: grade a class on a Slurm cluster: submit an array of shards, then the job that finishes the class.

    hardened-slurm ps1 --tasks 4 --cpus 2                # in the course directory
    hardened-slurm --tasks 4 --cpus 2 --wait             # its only assignment; return when the class is finished
    hardened-slurm ps1 --tasks 8 --sbatch=--partition=short --finish-sbatch=--time=4:00:00

Two jobs, with ``sbatch``, from the engine's batch scripts (``hardened_grading/class_grading/sbatch/``, shipped
with the engine), or a course's own (:class:`Scripts`):

1. ``grade-class.sbatch`` as an array of ``--tasks`` tasks. Task i runs ``hardened-grade ASSIGNMENT --shard i/TASKS
   --jobs CPUS``: its part of the sorted class, one worker per CPU Slurm gives it.
2. ``finish-class.sbatch``, once every task has ended, however (``--dependency=afterany``). It runs
   ``hardened-grade`` over the whole class, which skips what the tasks graded and grades what a failed or killed
   task left. Then it writes ``grades.csv`` (``nbgrader export``) and the class report (``hardened-report``).

The scripts read what to grade from variables that the submission passes with ``sbatch --export``:
``HARDENED_COURSE``, ``HARDENED_ASSIGNMENT``, ``HARDENED_NOTEBOOK`` (the report's, for an assignment with several),
``HARDENED_BIN`` (the venv's ``bin/``), ``HARDENED_SHARDS`` and ``HARDENED_DB_URL``. A course that ships its own
scripts, with its own command in place of ``hardened-grade`` and its own variables' prefix, gives them as a
:class:`Scripts`: the engine's submission, waiting and messages are the same.

Every task writes to one PostgreSQL gradebook: SQLite cannot be shared between machines. The URL carries no
password, since a job's environment and command line are visible to the cluster's other users. The password is
read from PostgreSQL's password file: ``~/.pgpass``, or the file ``PGPASSFILE`` names (mode 0600).

The course directory and the engine's venv must be on storage that every node sees.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..nbgrader_app import load_config
from ..sandbox.limits import Limits
from ..cells import CONFIG_FILE, course_root
from .course import default_assignment
from .gradebook import gradebook_url, safe_url

PROGRAM = "hardened-slurm"
SCRIPTS = Path(__file__).resolve().parent / "sbatch"  #: the engine's batch scripts (package data)
WORKER_MB = 1024  #: memory a grading worker (nbgrader, the judge) takes beside its kernel, with room, in MiB
POLL_FIRST, POLL_LONGEST = 1.0, 10.0  #: seconds between questions to Slurm while waiting: at first, and at most
QUESTIONS_FAILED = 5  #: questions about a job that may fail in a row, while waiting, before it gives up
#: Slurm's job states before a job has ended (``squeue``'s long names)
RUNNING_STATES = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
                  "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "SPECIAL_EXIT"}


@dataclass(frozen=True)
class Scripts:
    """The two batch scripts a course submits, and what they need.

    Attributes
    ----------
    grade, finish : pathlib.Path
        One array task (one shard of the class), and the job after the array (what is left, grades.csv, the class
        report).
    prefix : str
        Of the variables the scripts read: PREFIX + ``COURSE``, ``ASSIGNMENT``, ``BIN``, ``SHARDS``, ``DB_URL``, and
        ``NOTEBOOK`` where `notebook` says so.
    programs : tuple of str
        What the scripts run from the venv's ``bin/``: each must be beside the submitting Python.
    run_with : str
        How to submit with the course's venv, said when a program is missing.
    postgresql_help : str
        Where the course's instructors read how to set up a PostgreSQL gradebook, said when it has none.
    notebook : bool
        Whether the scripts read PREFIX + ``NOTEBOOK`` (the class report's notebook): ``--notebook`` is offered.
    """

    grade: Path = SCRIPTS / "grade-class.sbatch"
    finish: Path = SCRIPTS / "finish-class.sbatch"
    prefix: str = "HARDENED_"
    programs: tuple = ("hardened-grade", "hardened-report", "nbgrader")
    run_with: str = "run hardened-slurm from the venv the engine is installed in"
    postgresql_help: str = "nbgrader's docs: the gradebook's db_url"
    notebook: bool = True


ENGINE_SCRIPTS = Scripts()  #: the engine's own


def shared_gradebook(course, db_url=None, *, scripts=ENGINE_SCRIPTS, config=None):
    """The gradebook every task writes to: `db_url`, else the course's ``CourseDirectory.db_url`` (from `config`,
    its loaded ``nbgrader_config.py``, loaded here if not given). Raise :class:`UsageError` for a SQLite one or one
    with a password in its URL, saying what to do."""
    from sqlalchemy.engine import make_url

    url = make_url(gradebook_url(load_config(course) if config is None else config, course, db_url))
    if url.get_backend_name() != "postgresql":
        raise UsageError(f"the gradebook is {safe_url(url)}: the tasks of a Slurm job need one PostgreSQL gradebook "
                         "that every node reaches. Set c.CourseDirectory.db_url in nbgrader_config.py, or give "
                         f"--db-url postgresql://USER@HOST/DATABASE ({scripts.postgresql_help})")
    if url.password:
        raise UsageError("the gradebook's URL holds a password, which the job's environment would show to the "
                         "cluster's users: leave it out of the URL, and put it in ~/.pgpass or the file PGPASSFILE "
                         "names, as a line HOST:PORT:DATABASE:USER:PASSWORD (chmod 600)")
    return url.render_as_string(hide_password=False)


def only_this_machine(url):
    """A warning when the gradebook at `url` is on this machine (localhost, or a Unix socket), where other nodes
    may not reach it; else None."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    host = parsed.host or parsed.query.get("host") or ""
    host = host[0] if isinstance(host, tuple) else host
    if not host or host.startswith("/") or host in ("localhost", "127.0.0.1", "::1"):
        return (f"warning: the gradebook {safe_url(parsed)} is reached on this machine only ({host or 'a Unix socket'}); "
                "every node of the cluster must reach it: name its host in the URL, unless the tasks run here")
    return None


def memory_per_cpu(course, config=None):
    """MiB of memory per CPU for a task: one grading worker per CPU, whose kernel may use ``memory_mb`` and a private
    /tmp of ``tmp_mb`` (the course's ``ResilientExecute`` settings, from `config`, its loaded ``nbgrader_config.py``,
    loaded here if not given), and WORKER_MB for the worker itself."""
    settings = (load_config(course) if config is None else config).ResilientExecute
    limits = Limits()
    return settings.get("memory_mb", limits.memory_mb) + settings.get("tmp_mb", limits.tmp_mb) + WORKER_MB


def environment(course, *, assignment, db_url, bin_folder, shards, notebook=None, scripts=ENGINE_SCRIPTS):
    """The variables the batch scripts read, as ``--export=ALL,NAME=VALUE,...``. The rest of the submitter's
    environment is passed on as it is, PGPASSFILE made absolute (the jobs run in the course folder)."""
    prefix = scripts.prefix
    variables = {f"{prefix}COURSE": str(course), f"{prefix}ASSIGNMENT": assignment, f"{prefix}BIN": str(bin_folder),
                 f"{prefix}SHARDS": str(shards)}
    if notebook:
        variables[f"{prefix}NOTEBOOK"] = notebook
    if db_url:
        variables[f"{prefix}DB_URL"] = db_url
    if os.environ.get("PGPASSFILE"):
        variables["PGPASSFILE"] = os.path.abspath(os.environ["PGPASSFILE"])
    if any("," in value for value in variables.values()):  # sbatch splits --export at commas
        raise UsageError(f"a comma in {variables}: sbatch's --export cannot pass it; move the course, or name the "
                         "gradebook in nbgrader_config.py rather than with --db-url")
    return "--export=ALL," + ",".join(f"{name}={value}" for name, value in variables.items())


def sbatch_commands(course, *, tasks, cpus, assignment, notebook=None, db_url=None, bin_folder=None, extra=(),
                    finish_extra=(), memory_mb=None, scripts=ENGINE_SCRIPTS):
    """The two ``sbatch`` command lines: the array, and the job that finishes the class (its dependency,
    ``{array}``, is filled in with the array's job id). `extra`: more sbatch options for both (a partition, an
    account, a time limit); `finish_extra`: for the finish job only, after `extra`. `memory_mb`: per CPU."""
    if tasks < 1 or cpus < 1:
        raise UsageError(f"--tasks {tasks} --cpus {cpus}: give 1 or more of each")
    bin_folder = bin_folder or Path(sys.executable).parent
    common = ["--parsable", f"--chdir={course}", f"--cpus-per-task={cpus}",
              *([f"--mem-per-cpu={memory_mb}M"] if memory_mb else []),
              environment(course, assignment=assignment, db_url=db_url, bin_folder=bin_folder, shards=tasks,
                          notebook=notebook, scripts=scripts), *extra]
    sbatch = shutil.which("sbatch") or "sbatch"
    return ([sbatch, f"--array=0-{tasks - 1}", *common, str(scripts.grade)],
            [sbatch, "--dependency=afterany:{array}", "--kill-on-invalid-dep=no", *common, *finish_extra,
             str(scripts.finish)])


def missing_programs(bin_folder, scripts):
    """The programs the scripts run that are not in `bin_folder`."""
    return [name for name in scripts.programs if not (Path(bin_folder) / name).exists()]


def submit(course=None, *, tasks, cpus, assignment=None, notebook=None, db_url=None, extra=(), finish_extra=(),
           memory_mb=None, scripts=ENGINE_SCRIPTS):
    """Submit the array and the job that finishes the class; return their two :class:`Job` objects.

    Parameters
    ----------
    course : path, optional
        The course directory, or a folder in it (default: the working folder).
    assignment : str, optional
        Default: the course's only one in ``source/``.
    memory_mb : int, optional
        Per CPU (default: :func:`memory_per_cpu`; 0 leaves it to the cluster's default).
    scripts : Scripts
        The batch scripts: the engine's, or a course's own.

    Raises
    ------
    UsageError
        When the course, sbatch, the venv's programs or a shared gradebook are missing, or Slurm refuses a job: it
        says what to do.
    """
    course = course_root(course)
    if not (course / CONFIG_FILE).exists():
        raise UsageError(f"{course}: not a course directory (no {CONFIG_FILE}); give --course")
    assignment = assignment or default_assignment(course)
    if not shutil.which("sbatch"):
        raise UsageError("Slurm's sbatch is not on PATH: run this on a machine that submits jobs to your cluster "
                         "(a login node)")
    bin_folder = Path(sys.executable).parent
    missing = missing_programs(bin_folder, scripts)
    if missing:
        raise UsageError(f"{', '.join(missing)} not in {bin_folder}: {scripts.run_with}")
    config = load_config(course)  # once: the gradebook and the memory per CPU both read it
    url = shared_gradebook(course, db_url, scripts=scripts, config=config)
    warning = only_this_machine(url)
    if warning:
        print(warning, file=sys.stderr)
    (course / "logs").mkdir(exist_ok=True)  # Slurm writes the tasks' output there, and makes no folder
    memory_mb = memory_per_cpu(course, config) if memory_mb is None else memory_mb
    grade, finish = sbatch_commands(course, tasks=tasks, cpus=cpus, assignment=assignment, notebook=notebook,
                                    db_url=db_url and url, bin_folder=bin_folder, extra=extra,
                                    finish_extra=finish_extra, memory_mb=memory_mb, scripts=scripts)
    array = _sbatch(grade)
    finish = [part.replace("{array}", array.id) for part in finish]
    try:
        return array, _sbatch([*finish[:1], *array.cluster_options(), *finish[1:]])
    except UsageError as error:
        raise UsageError(f"{error}\nThe array, job {array.id}, is queued without the job that finishes the class: "
                         f"cancel it (scancel {array.id}), or submit that job by hand once the problem is "
                         f"mended: sbatch --dependency=afterany:{array.id} ... {scripts.finish}") from None


@dataclass(frozen=True)
class Job:
    """A job Slurm accepted: its id, and its cluster when sbatch named one (``--clusters``)."""

    id: str
    cluster: str = ""

    def cluster_options(self):
        return ["--clusters", self.cluster] if self.cluster else []


def _sbatch(command):
    """Run an ``sbatch --parsable`` command; return the :class:`Job` it submitted."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise UsageError(f"sbatch refused the job ({' '.join(command)}): {done.stderr.strip() or done.stdout.strip()}")
    answer = re.fullmatch(r"(\d+)(?:;(\S+))?", done.stdout.strip())
    if not answer:
        raise UsageError(f"sbatch answered {done.stdout.strip()!r}, not a job id ({' '.join(command)})")
    return Job(answer.group(1), answer.group(2) or "")


def wait_for(job, poll=POLL_FIRST, longest=POLL_LONGEST):
    """Wait until `job` (a :class:`Job`) has ended; return ``(its state, its exit code)``, as ``scontrol show job``
    gives them. It asks every `poll` seconds, then less often, up to every `longest`: ``sbatch --wait`` is not used,
    as it returned tens of seconds after the job ended. A few failed questions in a row (a busy controller) are
    borne; more raise :class:`UsageError`."""
    failures = 0
    while True:
        shown = subprocess.run([shutil.which("scontrol") or "scontrol", *job.cluster_options(), "show", "job", "-o",
                                job.id], capture_output=True, text=True)
        state = re.search(r"\bJobState=(\S+)", shown.stdout)
        if shown.returncode != 0 or not state:
            failures += 1
            if failures > QUESTIONS_FAILED:
                raise UsageError(f"Slurm does not answer about job {job.id} "
                                 f"({shown.stderr.strip() or 'no state'}): see its output")
        else:
            failures = 0
            if state.group(1) not in RUNNING_STATES:
                code, signum = re.search(r"\bExitCode=(\d+):(\d+)", shown.stdout).groups()
                return state.group(1), int(code) or (128 + int(signum) if int(signum) else 0)
        time.sleep(poll)
        poll = min(poll * 1.5, longest)


@dataclass(frozen=True)
class Command:
    """How a course names and sets up the command (its own, or ``hardened-slurm``)."""

    program: str = PROGRAM  #: argparse's program name, in usage and help
    description: str = "Grade a class on a Slurm cluster: submit an array of shards, then the job that finishes the class."
    name: str = PROGRAM  #: what its error messages start with
    default_assignment: str | None = None  #: None: the course's only one in source/
    scripts: Scripts = ENGINE_SCRIPTS


def parser(command=Command()):
    """The command line of `command`."""
    default = command.default_assignment
    p = argparse.ArgumentParser(prog=command.program, description=command.description)
    p.add_argument("assignment", nargs="?", default=default,
                   help=f"the assignment (default: {default or 'the only one in source/'})")
    p.add_argument("--tasks", type=int, required=True, help="array tasks: the shards the class is cut into")
    p.add_argument("--cpus", type=int, default=2, help="CPUs per task, one grading worker each (default: 2)")
    p.add_argument("--mem-per-cpu", type=int, default=None, metavar="MIB",
                   help="memory per CPU, in MiB (default: what one worker and its kernel may use, from the "
                        "course's ResilientExecute.memory_mb and tmp_mb; 0: the cluster's default)")
    if command.scripts.notebook:
        p.add_argument("--notebook", default=None, help="the class report's notebook, as nbgrader names it "
                                                        "(default: the assignment's only one)")
    p.add_argument("--course", default=None, help="the course directory (default: the one you are in)")
    p.add_argument("--db-url", default=None, help="the PostgreSQL gradebook, in place of CourseDirectory.db_url "
                                                  "(no password: ~/.pgpass or PGPASSFILE holds it)")
    p.add_argument("--sbatch", action="append", default=[], metavar="OPTION",
                   help="one more sbatch option for both jobs, e.g. --sbatch=--partition=short, "
                        "--sbatch=--account=cs101, --sbatch=--time=2:00:00; may be repeated")
    p.add_argument("--finish-sbatch", action="append", default=[], metavar="OPTION",
                   help="one more sbatch option for the finish job only (after --sbatch's), e.g. a longer "
                        "--finish-sbatch=--time=4:00:00: it grades alone whatever the tasks left")
    p.add_argument("--wait", action="store_true", help="return when the class is finished, with its exit code")
    return p


def submitted_text(course, array, finish, *, tasks, cpus, scripts):
    """What the command says once both jobs are queued: how to follow them, cancel them, and where their output goes."""
    cluster = f" -M {array.cluster}" if array.cluster else ""
    return (f"submitted: job {array.id}, {tasks} array tasks of {cpus} CPUs ({scripts.grade.name}), then job "
            f"{finish.id} ({scripts.finish.name}) once they have ended\n"
            f"  follow them: squeue{cluster} -j {array.id},{finish.id}\n"
            f"  cancel them: scancel{cluster} {array.id} {finish.id}\n"
            f"  their output: {course / 'logs'}/slurm-{array.id}_*.out and slurm-{finish.id}-finish.out\n"
            f"  at the end: {course / 'grades.csv'} and the class report in {course / 'reports'}/")


def main(argv=None, command=Command()):
    """Submit as the command line `argv` says; return the exit code (with ``--wait``, the finish job's)."""
    args = parser(command).parse_args(argv)
    try:
        course = course_root(args.course)
        array, finish = submit(course, tasks=args.tasks, cpus=args.cpus, assignment=args.assignment,
                               notebook=getattr(args, "notebook", None), db_url=args.db_url, extra=args.sbatch,
                               finish_extra=args.finish_sbatch, memory_mb=args.mem_per_cpu, scripts=command.scripts)
    except UsageError as error:
        print(f"{command.name}: {error}", file=sys.stderr)
        return 2
    print(submitted_text(course, array, finish, tasks=args.tasks, cpus=args.cpus, scripts=command.scripts), flush=True)
    if not args.wait:
        return 0
    cluster = f" -M {array.cluster}" if array.cluster else ""
    try:
        state, code = wait_for(finish)
    except KeyboardInterrupt:
        print(f"\nno longer waiting; the jobs go on (scancel{cluster} {array.id} {finish.id} cancels them)",
              file=sys.stderr)
        return 130
    except UsageError as error:
        print(f"{command.name}: {error}", file=sys.stderr)
        return 1
    print(f"job {finish.id} ended: {state}, exit code {code}"
          + ("" if state == "COMPLETED" and code == 0 else f": see {course / 'logs'}/slurm-{finish.id}-finish.out"))
    return code if state == "COMPLETED" else (code or 1)


if __name__ == "__main__":
    sys.exit(main())
