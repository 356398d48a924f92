"""Run a benchmark and keep its report: ``python benchmarks/record.py benchmarks/bench_grading.py [ARGS]``, or
``python benchmarks/record.py -m posenc_course.qa.mutants [ARGS]`` for a module (kept as ``mutants.txt``). ``make demo``
keeps the demo's output the same way, as ``demo.txt``: its score table is what the instructor's workflow page shows.

The report goes to the terminal as it is printed, and whole to ``docs/measured/<script>.txt``, where the site
includes it (docs/maintainers/benchmarks.md). Its first line names the commit and the machine. The file is
written only when the benchmark succeeds; the exit code is the benchmark's.
"""

import subprocess
import sys
from pathlib import Path

MEASURED = Path(__file__).resolve().parents[1] / "docs" / "measured"


def main(argv=None):
    argv = list(argv if argv is not None else sys.argv[1:])
    if argv[0] == "-m":
        command, name = ["-m", argv[1]], argv[1].rsplit(".", 1)[-1]
        args = argv[2:]
    else:
        command, name, args = [argv[0]], Path(argv[0]).stem, argv[1:]
    process = subprocess.Popen([sys.executable, *command, *args], stdout=subprocess.PIPE, text=True)
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    code = process.wait()
    if code == 0:
        MEASURED.mkdir(parents=True, exist_ok=True)
        target = MEASURED / (name + ".txt")
        if not lines or not lines[0].startswith("commit "):  # the report names no commit and machine: say them
            from bench_class import machine

            lines.insert(0, machine() + "\n")
        target.write_text("".join(lines))
        print(f"recorded in {target}")
    return code


if __name__ == "__main__":
    sys.exit(main())
