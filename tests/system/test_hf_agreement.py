"""The course's reference functions agree with Hugging Face transformers' own implementations, run as HF's models run
them (tests/system/hf/compare.py: what is compared, on which configurations, and each tolerance, with its reason).

compare.py runs in the test-only environment .venv-hf (``make hf-env``: transformers and CPU torch, pinned in
tests/system/hf/requirements.lock), once for the module; each comparison is a test of its own, named by its id. The ids are
read from compare.py's registry (imported here without torch), so a comparison that raises, or that a crashed run
never reached, fails by name; MUST_COMPARE keeps a comparison from being dropped unnoticed. Without .venv-hf every
test fails and says how to make it: `make test` makes it, and CI runs `make test`.

Layer: system (slow): it runs no grading, but needs a venv of its own with torch, which `make test-fast` does not
build; it takes 10 to 30 seconds (compare.py, twice). The module runs
whole on one xdist worker (tests/conftest.py), so compare.py runs once for its tests, and once more for the test
that shows the comparisons can fail.

``POSENC_RECORD_RUN=1`` (a recorded `make test`, docs/measured/README.md) also writes the table, with the commit and
the versions, to docs/measured/hf_agreement.txt; otherwise no file is written.
"""

import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from ..conftest import RUN_MARKER, machine_line

ROOT = Path(__file__).resolve().parents[2]
COMPARE = ROOT / "tests" / "system" / "hf" / "compare.py"
LOCK = ROOT / "tests" / "system" / "hf" / "requirements.lock"
HF_VENV = ROOT / ".venv-hf"
HF_PYTHON = HF_VENV / "bin" / "python"
RECORDED = ROOT / "docs" / "measured" / "hf_agreement.txt"
#: Seconds one run of compare.py may take. It bounds the whole run: starting Python, importing torch and transformers
#: (2 to 5 s here) and every comparison (5 to 6 s together, on 2 busy cores); a run past it is stuck (a hung import, a
#: lock), not slow.
TIMEOUT = 300

#: The posenc functions that must keep at least this many comparisons (ids ``function[configuration]``): one deleted
#: or renamed by mistake fails test_no_comparison_was_dropped. A new comparison needs nothing here; a new function
#: compared should be added.
MUST_COMPARE = {
    "rope_scaling.linear_scaled_inv_freq": 5,
    "rope_scaling.dynamic_ntk_inv_freq": 9,
    "rope_scaling.yarn_inv_freq": 6,
    "rope_scaling.yarn_inv_freq:attention_factor": 6,
    "rope_scaling.llama3_inv_freq": 6,
    "rope_layouts.apply_rope_half_split": 5,
    # the third assignment, posenc-current
    "rope_config.rope_parameters_from_config": 14,
    "rope_config.inv_freq_from_config": 13,
    "rope_config.inv_freq_from_config:attention_factor": 13,
    "rope_config.llama3_frequency_bands": 4,
    "longrope.longrope_inv_freq": 6,
    "longrope.longrope_inv_freq:attention_factor": 6,
    "longrope.longrope_inv_freq:switch": 5,
    "longrope.longrope_attention_factor": 5,
    "dynamic_cache.cached_keys": 5,
    "dynamic_cache.stale_keys": 5,
    "partial_rotary.apply_partial_rotary": 5,  # GPT-NeoX's 3 and Phi's 2
    "partial_rotary.apply_proportional_rope": 5,  # Llama's rope_type proportional 3 and Gemma 4's 2
    "deepseek_yarn.deepseek_yarn_scales": 6,
    "deepseek_yarn.deepseek_yarn_scales:softmax_scale": 6,
    "deepseek_yarn.yarn_mscale": 6,
    "layer_plans.gemma3_layer_types": 5,
    "layer_plans.gemma3_layer_inv_freq": 5,
    "layer_plans.irope_uses_rope": 2,
    "layer_plans.irope_uses_rope:layer_types": 2,
    "layer_plans.chunked_causal_mask": 4,  # sdpa_mask's sweep 1 and create_chunked_causal_mask's 3
    "layer_plans.nope_attention_scale": 4,
    "tiled_attention.tiled_biased_attention": 7,
    "mrope.mrope_position_ids": 6,
    "mrope.apply_mrope": 4,
    "swin_v2.swin_v2_relative_coords_table": 5,
    "swin_v2.swin_v2_position_bias": 6,
}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compare = _load(COMPARE, "posenc_hf_compare")  # its registry and table; torch is imported only when it runs
IDS = compare.ids()


def run_compare(*args):
    """Run compare.py in .venv-hf: ``(completed process, {id: row})``. Fails, saying what to do, when it cannot."""
    if not HF_PYTHON.exists():
        pytest.fail(f"no {HF_VENV.name}, the environment with Hugging Face transformers and torch these tests run "
                    "compare.py in: make it with `make hf-env` (CPython 3.11 and the network; "
                    "tests/system/hf/requirements.lock). `make test` makes it.", pytrace=False)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["HF_HUB_OFFLINE"] = "1"  # nothing is downloaded: the configs are built in the code
    try:
        result = subprocess.run([str(HF_PYTHON), str(COMPARE), *args], capture_output=True, text=True, cwd=ROOT,
                                env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"compare.py {' '.join(args)} ran past {TIMEOUT} s (stuck). Its output so far:\n"
                    f"{error.stdout or ''}\n{error.stderr or ''}", pytrace=False)
    rows = {}
    for line in result.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            pytest.fail(f"compare.py printed a line that is not JSON: {line!r}\n{result.stderr[-3000:]}", pytrace=False)
        assert row["id"] not in rows, f"compare.py printed {row['id']} twice"
        rows[row["id"]] = row
    if not rows:
        pytest.fail(f"compare.py {' '.join(args)} compared nothing (exit {result.returncode}); its stderr:\n"
                    f"{result.stderr[-3000:]}", pytrace=False)
    return result, rows


def recording_this_run(config):
    """Whether to record: asked for, and this process is the run itself or one of its xdist workers (whose parent
    is the run, tests/conftest.py: RUN_MARKER), not a pytest that a test started."""
    run = os.environ.get(RUN_MARKER)
    this = os.getppid() if hasattr(config, "workerinput") else os.getpid()
    return bool(os.environ.get("POSENC_RECORD_RUN")) and run == str(this)


def record(rows, path=RECORDED):
    """Write the table, with the commit, the machine and the versions compared, to `path`."""
    against = next(iter(rows.values()))["against"]
    path.write_text(f"{machine_line()}\n{against} in {HF_VENV.name} (tests/system/hf/requirements.lock); written by "
                    f"tests/system/test_hf_agreement.py (POSENC_RECORD_RUN=1)\n"
                    + compare.table([rows[i] for i in IDS if i in rows]))


@pytest.fixture(scope="module")
def compared(request):
    result, rows = run_compare()
    if rows and recording_this_run(request.config):
        record(rows)
    return result, rows


def _explain(row):
    """What a failed comparison's message shows: the configuration, both values, the difference, the tolerance."""
    head = f"{row['id']}: {row['posenc']} against {row['hf']}\n  configuration: {row['config']}\n  versions: {row['against']}\n"
    if row.get("error"):
        return head + f"  the comparison raised:\n{row['error']}"
    worst, tolerance = row["worst"], row["tolerance"]
    return head + (f"  largest difference (against what is allowed) at index {worst['index']}: HF ({row['hf_dtype']}) "
                   f"{worst['hf']!r}, posenc {worst['posenc']!r}, |difference| {worst['diff']:.3g} > allowed "
                   f"{worst['allowed']:.3g}\n  over all {row['size']} values: max |difference| "
                   f"{row['max_abs_diff']:.3g}, max relative {row['max_rel_diff']:.3g}; tolerance rtol "
                   f"{tolerance['rtol']:.3g}, atol {tolerance['atol']:.3g} ({tolerance['rule']})")


@pytest.mark.parametrize("comparison", IDS)
def test_agrees_with_hugging_face(compared, comparison):
    result, rows = compared
    row = rows.get(comparison)
    if row is None:
        pytest.fail(f"compare.py printed no row for {comparison} (exit {result.returncode}); its stderr:\n"
                    f"{result.stderr[-3000:]}", pytrace=False)
    assert row["ok"] and not row.get("error"), _explain(row)


def test_every_row_is_a_comparison_and_the_exit_status_says_so(compared):
    result, rows = compared
    assert list(rows) == IDS, (f"compare.py's rows are not its registry's comparisons, in order: missing "
                               f"{[i for i in IDS if i not in rows]}, unknown {[i for i in rows if i not in IDS]}")
    assert result.returncode == (0 if all(row["ok"] for row in rows.values()) else 1), result.stderr[-3000:]


def test_no_comparison_was_dropped():
    counts = {name: sum(i.partition("[")[0] == name for i in IDS) for name in MUST_COMPARE}
    assert all(counts[name] >= least for name, least in MUST_COMPARE.items()), \
        {name: f"{counts[name]} comparisons, at least {least} expected" for name, least in MUST_COMPARE.items()}


def test_runs_the_pinned_versions(compared):
    """.venv-hf has what tests/system/hf/requirements.lock pins (after a change of the lock: make hf-env)."""
    _, rows = compared
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", LOCK.read_text(), re.M))
    against = next(iter(rows.values()))["against"]
    expected = f"transformers {pins['transformers']}, torch {pins['torch']}, numpy {pins['numpy']}"
    assert against == expected, f"{HF_VENV.name} runs {against}; the lock pins {expected}: make hf-env"


def test_a_wrong_posenc_function_fails_its_comparisons():
    """Every comparison can fail: with each posenc function's results off by compare.PERTURBATION (1e-5, relative;
    exact ones by the least change, compare.perturb), every row reports a difference above its tolerance, none an
    error, and compare.py exits 1."""
    functions = sorted({i.partition("[")[0].partition(":")[0] for i in IDS})
    result, rows = run_compare(*[arg for name in functions for arg in ("--perturb", name)])
    assert list(rows) == IDS, result.stderr[-3000:]
    missed = {i: f"max |difference| {row.get('max_abs_diff')}, error {row.get('error')}"
              for i, row in rows.items() if row["ok"] or row.get("error") or row["worst"]["diff"] <= row["worst"]["allowed"]}
    assert not missed, f"these comparisons did not see the wrong function: {missed}"
    assert result.returncode == 1


def test_the_table_is_recorded_only_when_asked(tmp_path, monkeypatch, compared, request):
    _, rows = compared
    monkeypatch.delenv("POSENC_RECORD_RUN", raising=False)
    assert not recording_this_run(request.config)
    monkeypatch.setenv("POSENC_RECORD_RUN", "1")
    monkeypatch.setenv(RUN_MARKER, "1")  # another run's: a pytest that a test started
    assert not recording_this_run(request.config)
    this_run = os.getppid() if hasattr(request.config, "workerinput") else os.getpid()
    monkeypatch.setenv(RUN_MARKER, str(this_run))
    assert recording_this_run(request.config)
    record(rows, tmp_path / "hf_agreement.txt")
    text = (tmp_path / "hf_agreement.txt").read_text()
    assert text.startswith("commit ") and "transformers " in text.splitlines()[1]
    assert all(i.partition("[")[2].rstrip("]") in text for i in IDS)
