"""The benchmark script runs and reports a ratio per function. It asserts no timing."""

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_solutions.py"


def test_benchmark_script_reports_a_ratio_for_each_function():
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--repeats", "1"],
                            capture_output=True, text=True, check=True, timeout=120)
    lines = result.stdout.splitlines()
    for name in ("apply_rope", "alibi_attention", "t5_relative_bias"):
        [row] = [line for line in lines if line.startswith(name)]
        assert re.search(r"ms\s+\d+\.\d+ms\s+\d+\.\d\dx\s", row), row
