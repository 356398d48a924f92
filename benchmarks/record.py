"""Run a benchmark and keep its report: ``python benchmarks/record.py benchmarks/bench_grading.py [ARGS]``.

The report goes to the terminal as it is printed, and whole to ``docs/measured/<script>.txt``, where the site
includes it (docs/maintainers/benchmarks.md). Its first line names the commit and the machine. The file is
written only when the benchmark succeeds; the exit code is the benchmark's.
"""

import subprocess
import sys
from pathlib import Path

MEASURED = Path(__file__).resolve().parents[1] / "docs" / "measured"


def main(argv=None):
    script, *args = argv if argv is not None else sys.argv[1:]
    process = subprocess.Popen([sys.executable, script, *args], stdout=subprocess.PIPE, text=True)
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    code = process.wait()
    if code == 0:
        MEASURED.mkdir(parents=True, exist_ok=True)
        target = MEASURED / (Path(script).stem + ".txt")
        target.write_text("".join(lines))
        print(f"recorded in {target}")
    return code


if __name__ == "__main__":
    sys.exit(main())
