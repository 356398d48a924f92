"""A real one-node Slurm cluster on the loopback, in a folder of its own, for the tests (tests/system/test_slurm.py)
and the benchmark (benchmarks/bench_slurm.py), which may both import the course's tooling but not each other.

Debian's ``slurmctld``, ``slurmd`` and ``munge``, started as root: munged (as the ``munge`` user, with a new key)
on a socket in the folder, then the controller and the node daemon in the foreground, on two free ports, with a
generated ``slurm.conf``. Nothing is written outside the folder. :func:`one_node_cluster` stops every daemon it
started, and every job step still running, whatever happens.
"""

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel")
NODE = "grader1"
PARTITION = "grade"
READY_WITHIN = 120  #: seconds for the node to be idle after the daemons start (seconds on an idle machine)

SLURM_CONF = """ClusterName=posenc-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={folder}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=5
NodeName={node} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName={partition} Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def unavailable():
    """Why a cluster cannot be started here, or None."""
    if os.name != "posix" or not Path("/proc").exists():
        return "Slurm's daemons run on Linux"
    if os.geteuid() != 0:
        return "starting slurmctld, slurmd and munged takes root"
    missing = [p for p in PROGRAMS if not shutil.which(p) and not Path("/usr/sbin", p).exists()]
    if missing:
        return (f"Slurm is not installed ({', '.join(missing)} not found; Debian: sudo apt-get install slurmctld "
                "slurmd slurm-client munge, which `make test` does as root)")
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "there is no 'munge' user to run munged as (Debian's munge package makes it)"
    return None


def program(name):
    return shutil.which(name) or str(Path("/usr/sbin", name))


def memory_mb():
    """This machine's memory in MiB, as the node's RealMemory: jobs ask for memory per CPU (not enforced here)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def one_node_cluster(cpus=None):
    """Start the cluster in a new temporary folder (removed at the end); yield the environment in which ``sbatch``
    and the other client commands reach it (``SLURM_CONF`` set). `cpus`: the node's CPUs (default: this machine's).
    The folder is not under pytest's: munged needs every folder above its socket searchable by all."""
    folder = Path(tempfile.mkdtemp(prefix="posenc-slurm-"))
    folder.chmod(0o755)  # munged checks that its socket's folders can be searched by all
    munge = pwd.getpwnam("munge")
    (folder / "munge").mkdir(mode=0o755)
    (folder / "munge" / "munge.key").write_bytes(os.urandom(1024))
    (folder / "munge" / "munge.key").chmod(0o400)
    for path in [folder / "munge", *(folder / "munge").iterdir()]:
        os.chown(path, munge.pw_uid, munge.pw_gid)
    for name in ("state", "spool", "log"):
        (folder / name).mkdir()
    conf = folder / "slurm.conf"
    conf.write_text(SLURM_CONF.format(folder=folder, ctld_port=free_port(), d_port=free_port(), node=NODE,
                                      partition=PARTITION, cpus=cpus or os.cpu_count(), memory_mb=memory_mb()))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    socket_path = folder / "munge" / "munge.socket"
    daemons = []
    try:
        started = subprocess.run(["runuser", "-u", "munge", "--", program("munged"), f"--socket={socket_path}",
                        f"--key-file={folder}/munge/munge.key", f"--log-file={folder}/munge/munged.log",
                        f"--pid-file={folder}/munge/munged.pid", f"--seed-file={folder}/munge/munged.seed"],
                                 capture_output=True, text=True, timeout=60)
        if started.returncode != 0:
            raise RuntimeError(f"munged did not start: {started.stderr.strip() or started.stdout.strip()}")
        for command in ([program("slurmctld"), "-D", "-f", str(conf)],
                        [program("slurmd"), "-D", "-f", str(conf), "-N", NODE]):
            log = open(folder / "log" / f"{Path(command[0]).name}.out", "w")
            daemons.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=folder))
            log.close()
        wait_for_idle(env, daemons, folder)
        yield env
    finally:
        stop(env, daemons, folder, socket_path)
        shutil.rmtree(folder, ignore_errors=True)


def wait_for_idle(env, daemons, folder):
    """Until the node says it is idle (its daemon registered with the controller); raise if a daemon ends
    first or it takes over READY_WITHIN seconds."""
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline:
        for daemon in daemons:
            if daemon.poll() is not None:
                raise RuntimeError(f"{daemon.args[0]} ended with {daemon.returncode}:\n" + logs(folder))
        state = subprocess.run([program("sinfo"), "-h", "-n", NODE, "-o", "%T"], env=env, capture_output=True,
                               text=True, timeout=30).stdout.strip()
        if state == "idle":
            return
        time.sleep(0.2)
    raise RuntimeError(f"the node was not idle {READY_WITHIN} s after the daemons started:\n" + logs(folder))


def logs(folder):
    return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
                     for path in sorted((Path(folder) / "log").glob("*")) if path.is_file())


def stop(env, daemons, folder, socket_path):
    """Cancel every job, stop the daemons (asked, then killed), every job step left, and munged."""
    client = {"env": env, "capture_output": True, "timeout": 30}
    with contextlib.suppress(Exception):
        subprocess.run([program("scancel"), "--full", "--signal=KILL", f"--partition={PARTITION}"], **client)
    with contextlib.suppress(Exception):
        subprocess.run([program("scontrol"), "shutdown"], **client)
    for daemon in daemons:
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
    for pid in processes_naming(folder):  # a job step's slurmstepd, and what it ran, if the daemons left any
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        subprocess.run(["runuser", "-u", "munge", "--", program("munged"), "--stop", f"--socket={socket_path}"],
                       capture_output=True, timeout=30)


def processes_naming(folder):
    """Pids of the processes whose command line or environment names `folder` (the cluster's own)."""
    found, needle = [], str(folder).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            seen = Path(f"/proc/{entry}/cmdline").read_bytes() + Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in seen:
            found.append(int(entry))
    return found
