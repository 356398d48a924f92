"""The Kubernetes Job (``deploy/grade-class-job.yaml``) and its image (``deploy/Containerfile``), checked without a
cluster: the manifest against the schemas of a current Kubernetes release (kubernetes-validate, strict: no field
the API does not know), its command as a ``posenc-grade`` command line, and the image it names as the Containerfile
builds it. Neither was applied to a real cluster or built here (no container registry to pull a base image from);
the site's page on grading across machines says so. Slurm, which runs here for real, is :mod:`tests.system.test_slurm`'s.
"""

import copy
import re
import shlex
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from hardened_grading.class_grading import command as class_grading_command
from hardened_grading.class_grading import students
from posenc_course import ROOT
from posenc_course.layout import ASSIGNMENT

MANIFEST = ROOT / "deploy" / "grade-class-job.yaml"
CONTAINERFILE = ROOT / "deploy" / "Containerfile"
KUBERNETES = kubernetes_validate.latest_version()  #: the newest release whose schemas kubernetes-validate has


def job():
    return yaml.safe_load(MANIFEST.read_text())


def problems(resource, version=KUBERNETES):
    """kubernetes-validate's verdict on `resource`, strict: every error's message, or [] when it is valid."""
    try:
        kubernetes_validate.validate(resource, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(map(str, error.path))}: {error.message}"]
    return []


def test_the_manifest_is_a_valid_job_of_a_current_kubernetes_release():
    assert tuple(int(n) for n in KUBERNETES.split(".")[:2]) >= (1, 37), KUBERNETES
    assert problems(job()) == []
    print(f"deploy/grade-class-job.yaml: valid, strict, against Kubernetes {KUBERNETES}")


def broken(change):
    resource = copy.deepcopy(job())
    change(resource)
    return resource


@pytest.mark.parametrize("change", [
    lambda j: j["spec"].update(completion=4),  # a misspelt field: strict rejects what the API would drop
    lambda j: j["spec"].update(completions="four"),
    lambda j: j["spec"]["template"]["spec"]["containers"][0].pop("name"),
    lambda j: j["spec"]["template"]["spec"]["containers"][0]["resources"].update(limit={"cpu": "2"}),
], ids=["misspelt-field", "wrong-type", "missing-name", "misspelt-nested-field"])
def test_the_validation_catches_a_broken_manifest(change):
    assert problems(broken(change)), "the check must be able to fail"


def test_the_manifest_runs_one_shard_per_completion_index():
    """An Indexed Job whose pods' command is a valid posenc-grade command line, with as many shards as
    completions."""
    resource = job()
    spec = resource["spec"]
    assert resource["kind"] == "Job" and spec["completionMode"] == "Indexed"
    [container] = spec["template"]["spec"]["containers"]
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert int(env["SHARD_COUNT"]) == spec["completions"], "SHARD_COUNT must equal completions"
    assert container["command"] == ["sh", "-c"]
    words = shlex.split(container["args"][0])
    assert words[0] == "exec" and words[1].endswith("/posenc-grade")
    index = spec["completions"] - 1  # the last pod, as the shell would expand its command
    expanded = [w.replace("$JOB_COMPLETION_INDEX", str(index)).replace("$SHARD_COUNT", env["SHARD_COUNT"])
                .replace("$GRADEBOOK_URL", "postgresql://u@db/posenc") for w in words[2:]]
    args = class_grading_command.parser("posenc-grade", ASSIGNMENT).parse_args(expanded)
    assert students.parse_shard(args.shard) == (index, spec["completions"])
    assert args.db_url.startswith("postgresql://") and args.course == container["workingDir"]


def test_the_pods_may_make_the_grading_sandbox():
    """What bubblewrap needed to grade in the image, run by podman here (docs: grading across machines): SYS_ADMIN
    for its namespaces, NET_ADMIN for its network of one loopback, and no seccomp filter that forbids them."""
    [container] = job()["spec"]["template"]["spec"]["containers"]
    context = container["securityContext"]
    assert {"SYS_ADMIN", "NET_ADMIN"} <= set(context["capabilities"]["add"])
    assert context["seccompProfile"] == {"type": "Unconfined"}


def test_the_image_the_containerfile_builds_has_what_the_job_runs():
    """The Job runs /opt/posenc/.venv/bin/posenc-grade in a mounted /course, and its sandbox needs bubblewrap:
    the Containerfile copies the repository to /opt/posenc, installs bubblewrap and runs `make install`."""
    [container] = job()["spec"]["template"]["spec"]["containers"]
    program = shlex.split(container["args"][0])[1]
    lines = [line for line in CONTAINERFILE.read_text().splitlines() if line and not line.startswith("#")]
    copied = next(re.fullmatch(r"COPY \. (\S+)", line).group(1) for line in lines if line.startswith("COPY . "))
    assert program == f"{copied}/.venv/bin/posenc-grade", (program, copied)
    build = "\n".join(lines)
    assert re.search(r"apt-get install .*\bbubblewrap\b", build) and f"WORKDIR {copied}\nRUN make install" in build
    assert lines[-1] == f"WORKDIR {container['workingDir']}"
    ignored = (ROOT / ".containerignore").read_text().split()
    assert ".venv/" in ignored, "the image makes its own venv: this machine's is not copied in"
    assert {"logs/", "submitted/", "autograded/", "feedback/", "gradebook.db", "grades.csv"} <= set(ignored), \
        "no student's work, id or score goes into the image"
