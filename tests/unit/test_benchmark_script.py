"""The benchmark script runs and reports a ratio per function. It asserts no timing."""

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_solutions.py"


def test_benchmark_script_reports_a_ratio_for_each_function():
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--repeats", "1"],
                            capture_output=True, text=True, check=True, timeout=120)
    lines = result.stdout.splitlines()
    for name in ("apply_rope", "alibi_attention", "t5_relative_bias"):
        [row] = [line for line in lines if line.startswith(name)]
        assert re.search(r"ms\s+\d+\.\d+ms\s+\d+\.\d\dx\s", row), row


def test_the_grading_benchmarks_build_their_class_and_name_the_commit_and_machine(tmp_path, monkeypatch):
    """``make bench``'s grading benchmarks build their class (a third right, a third with the demo's two
    mistakes, a third blank) from the course as it is, and say what was measured where. The grading itself
    is what ``make bench`` times; a class that cannot be built stops it before any number."""
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import bench_class
    import bench_grading  # noqa: F401  (bench_class reads its plain nbgrader settings)

    from posenc_course.course import new_course

    course = new_course(tmp_path / "course")
    bench_class.make_class(course, 3)
    submitted = sorted(p.parent.parent.name for p in (course / "submitted").glob("*/posenc/exercises.ipynb"))
    assert submitted == ["s000", "s001", "s002"]
    texts = [(course / "submitted" / s / "posenc" / "exercises.ipynb").read_text() for s in submitted]
    assert len(set(texts)) == 3, "right, with two mistakes, and blank: three different submissions"
    assert re.fullmatch(r"commit \S+; \d+ cores \(.+\), Python 3\.\d+\.\d+, \S+ .*", bench_class.machine())
    assert "c.Execute.timeout" in bench_grading.PLAIN_CONFIG and "ResilientExecute" not in bench_grading.PLAIN_CONFIG
