"""How much grading costs, measured side by side in one run.

1. Executing the graded notebook (reference answers and hidden tests) in a plain python3 kernel,
   next to executing an empty notebook (the kernel's start-up and shutdown alone) and one that only
   imports numpy: the ratios show what the exercises and their tests add. Goal: within 1.5 of the
   empty notebook.
2. ``nbgrader autograde`` of one submission, end to end (start-up, database, kernel, tests).
3. ``nbgrader autograde`` of a class of 20 submissions in one run.
4. The same class graded with plain nbgrader settings (no hardening: stock preprocessors and
   kernel), to show what the hardening of ``hardened_grading.preprocessors.execute`` costs an honest student.
5. The same class hardened, but with ``ResilientExecute.predict_calls`` off: what the batched
   prediction of a test cell's calls saves.

    python benchmarks/bench_grading.py [--repeats N] [--class-size N]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from posenc_course.course import generate, new_course, run_nbgrader
from posenc_course.submissions import MARKER, make_submission, reference_answers, write_submission


PLAIN_CONFIG = """c = get_config()
c.CourseDirectory.course_id = "posenc"
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout = 20
c.ClearSolutions.enforce_metadata = False
"""


def execute_seconds(notebook):
    """Seconds to execute a copy of `notebook` in a fresh python3 kernel: its start-up, the cells and its shutdown.
    The kernel talks over Unix sockets in a folder of its own (over TCP it warns on every start)."""
    copy = nbformat.from_dict(notebook)
    client = NotebookClient(copy, timeout=120, kernel_name="python3", allow_errors=False)
    with tempfile.TemporaryDirectory() as folder:
        client.km = client.create_kernel_manager()  # created here, still owned (and shut down) by the client
        client.km.transport, client.km.ip = "ipc", os.path.join(folder, "kernel-ipc")
        client.km.connection_file = os.path.join(folder, "kernel.json")
        started = time.perf_counter()
        client.execute()
        return time.perf_counter() - started


def graded_notebook(source_path):
    """The source notebook with its solution markers removed: what autograde executes."""
    notebook = nbformat.read(str(source_path), as_version=4)
    for cell in notebook.cells:
        cell.source = MARKER.sub("", cell.source)
        cell.source = "\n".join(line for line in cell.source.split("\n") if "HIDDEN TESTS" not in line)
    return notebook


def timed_autograde(course, students):
    started = time.perf_counter()
    result = run_nbgrader(course, "autograde", "posenc", "--force", f"--student={students}")
    if result.returncode != 0:
        sys.exit(result.stdout + result.stderr)
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="executions of each notebook (best is kept)")
    parser.add_argument("--class-size", type=int, default=20)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        course = new_course(Path(tmp) / "course")
        release = generate(course)
        source = course / "source" / "posenc" / "exercises.ipynb"
        exercises = graded_notebook(source)
        code_cells = sum(cell.cell_type == "code" for cell in exercises.cells)
        numpy_only = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import numpy as np")])
        # The same number of cells doing nothing: the floor set by the kernel's per-cell round trip.
        empty_cells = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell("import numpy as np")]
            + [nbformat.v4.new_code_cell("pass") for _ in range(code_cells - 1)])
        empty = nbformat.v4.new_notebook()
        numpy_only.metadata = empty_cells.metadata = empty.metadata = exercises.metadata
        from bench_class import machine

        print(machine())
        print(f"1. Notebook execution, best of {args.repeats}, in turn:", flush=True)
        notebooks = {"exercises": exercises, "numpy": numpy_only, "empty": empty_cells, "nothing": empty}
        times = {name: [] for name in notebooks}
        for _ in range(args.repeats):
            for name, notebook in notebooks.items():
                times[name].append(execute_seconds(notebook))
        best = {name: min(values) for name, values in times.items()}
        print(f"   graded notebook (answers + hidden tests, {code_cells} code cells) {best['exercises']:6.2f} s")
        print(f"   empty notebook: the kernel's start-up and shutdown       {best['nothing']:6.2f} s")
        print(f"   ratio                                                  {best['exercises'] / best['nothing']:6.2f}x"
              "   (goal: within 1.5x)")
        print(f"   notebook that imports numpy only                       {best['numpy']:6.2f} s"
              f"   (graded notebook {best['exercises'] / best['numpy']:.2f}x)")
        print(f"   for scale: numpy import + {code_cells - 1} empty cells              {best['empty']:6.2f} s"
              f"   ({best['empty'] / best['numpy']:.2f}x)", flush=True)

        answers = reference_answers(source)
        for number in range(args.class_size):
            write_submission(make_submission(answers, release_notebook=release), course / "submitted", f"s{number:02d}")
        one = timed_autograde(course, "s00")
        print(f"2. nbgrader autograde, one submission      {one:6.2f} s", flush=True)
        many = timed_autograde(course, "*")
        print(f"3. nbgrader autograde, {args.class_size} submissions     {many:6.2f} s"
              f"   ({many / args.class_size:.2f} s each)", flush=True)

        # Plain, hardened, and hardened without call prediction, in turn, best of two each: the
        # machine is shared and noisy.
        hardened_config = (course / "nbgrader_config.py").read_text()
        configs = {"plain": PLAIN_CONFIG, "hardened": hardened_config,
                   "no prediction": hardened_config + "\nc.ResilientExecute.predict_calls = False\n"}
        seconds = {name: [] for name in configs}
        seconds["hardened"].append(many)
        for _ in range(2):
            for name, config in configs.items():
                if len(seconds[name]) < 2:
                    (course / "nbgrader_config.py").write_text(config)
                    seconds[name].append(timed_autograde(course, "*"))
        (course / "nbgrader_config.py").write_text(hardened_config)
        plain, hardened, unpredicted = (min(seconds[name]) for name in configs)
        print(f"4. the same class with plain nbgrader      {plain:6.2f} s   ({plain / args.class_size:.2f} s each, "
              "best of 2)")
        print(f"   hardened / plain, per submission         {hardened / plain:6.2f}x   (goal: at most 1.20x; "
              f"hardened best of 2: {hardened:.2f} s)", flush=True)
        print(f"5. hardened without call prediction        {unpredicted:6.2f} s   ({unpredicted / plain:.2f}x plain; "
              f"prediction saves {(unpredicted - hardened) / args.class_size:.2f} s per submission)", flush=True)


if __name__ == "__main__":
    main()
