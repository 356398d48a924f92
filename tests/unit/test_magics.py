"""IPython's magics in the trusted judge, without a kernel: how a cell is turned into Python, what the judge's
``get_ipython()`` carries out, and which cells are left to the kernel (:mod:`hardened_grading.judge.magics`).

That a course whose set-up cells use magics is judged in real kernels, so that a patched ``math.isclose`` gains
nothing, is tests/grading/test_foreign_courses.py's (the course ``magics``).
"""

import math

import nbformat
import numpy as np
import pytest

from hardened_grading.judge import agent
from hardened_grading.judge import magics
from hardened_grading.judge import judge
from hardened_grading.judge import setup as judge_setup
from hardened_grading.cells import engine_meta
from hardened_grading.judge.link import record_verdict

from ..helpers.cells import answer_cell, grade_cell
from ..helpers.cells import code_cell as _cell


def _test_cell(source, grade_id, points=2):
    return grade_cell(source, grade_id, points)


def _answer(source, grade_id="answer"):
    return answer_cell(source, grade_id)


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def _kernel(**functions):
    """A kernel stand-in whose answer functions are `functions`, called here (as tests/unit/test_judge.py's)."""
    def ask(request):
        if request["op"] == "get":
            return {"status": "ok", "values": {}}
        value = functions[request["name"]](*[agent.decode(a) for a in request["args"]])
        return {"status": "ok", "value": agent.encode(value)}
    return ask


def _judged(source, setup, **functions):
    """``(score of 2 points, stdout)`` of test cell `source`, judged as grading judges it: its Python, run in
    `setup` against the kernel stand-in's `functions`, one check per assert-free ``check_`` call."""
    code = judge_setup.judged_source(source)
    assert code is not None, magics.translate(source).unsupported
    the_judge = judge.Judge(_kernel(**functions))
    stdout, error = the_judge.run(code, setup, "<test cell t>", functions=set(functions))
    cell = grade_cell(code, "t", 2)
    record_verdict(cell, the_judge.checks, stdout, error, per_check=True, result=the_judge.result)
    return engine_meta(cell)["score"], stdout


SET_UP = """%reset -f
%matplotlib inline
%config InlineBackend.figure_format = "retina"
%load_ext autoreload
%autoreload 2
import math
import numpy as np
np.mean?
!pip list
%timeit np.arange(3)
"""


def test_set_up_cells_with_the_magics_the_grader_carries_out_make_the_namespace():
    """The common set-up magics run in the grader: the namespace is the set-up's (IPython's ``%reset -f`` first
    clears nothing of it), ``%%capture out`` keeps what its body printed, as IPython's ``CapturedIO``."""
    notebook = _notebook(_cell("stale = 1"), _cell(SET_UP, "setup"),
                         _cell("%%capture out\nprint('loaded')\nTOLERANCE = 1e-9\n"),
                         _answer("def mean(xs):\n    return sum(xs) / len(xs)\n"),
                         _test_cell("assert math.isclose(mean([1, 2, 3]), 2.0, rel_tol=TOLERANCE)", "test_mean"))
    namespace = judge_setup.setup_namespace(notebook)
    assert judge_setup.magic_fallbacks(notebook) == []
    assert "stale" not in namespace, "%reset -f clears what the cells above it defined"
    assert namespace["math"] is math and namespace["np"] is np and namespace["TOLERANCE"] == 1e-9
    assert namespace["out"].stdout == "loaded\n"
    assert not any(name.startswith("__hardened_grading_cell") for name in namespace)


def test_a_patched_isclose_in_the_kernel_cannot_reach_a_test_judged_after_set_up_magics():
    """The set-up magics no longer send the tests to the kernel: a wrong answer fails, whatever the kernel did
    to its own ``math.isclose``; the right one passes."""
    setup = judge_setup.setup_namespace(_notebook(_cell(SET_UP, "setup")))
    test = "assert math.isclose(mean([1, 2, 3]), 2.0)\nassert np.allclose(mean(np.array([0.5, 1.5])), 1.0)"
    assert _judged(test, setup, mean=lambda xs: sum(xs) / len(xs))[0] == 2
    assert _judged(test, setup, mean=lambda xs: sum(xs))[0] == 0


def test_a_capture_or_time_body_is_lines_of_the_test_cell_itself():
    """A ``%%capture`` or ``%%time`` test cell: its body's names are looked up in the kernel and its checks are
    counted, on the cell's own lines (a failed check names its line); ``%%time`` prints the time."""
    setup = judge_setup.setup_namespace(_notebook(_cell("import math\n" + "def check_close(a, b):\n"
                                                  "    assert math.isclose(a, b), f'expected {b} got {a}'\n")))
    capture = "%%capture shown\nprint(mean([1, 3]))\ncheck_close(mean([1, 3]), 2.0)\ncheck_close(mean([2]), 3.0)\n"
    assert judge_setup.judged_source(capture).splitlines()[2] == "check_close(mean([1, 3]), 2.0)"
    score, stdout = _judged(capture, setup, mean=lambda xs: sum(xs) / len(xs))
    assert score == 1.0 and stdout == ""  # one check of two; the print captured
    score, stdout = _judged("%%time\ncheck_close(mean([1, 3]), 2.0)\n", setup, mean=lambda xs: sum(xs) / len(xs))
    assert score == 2 and stdout.startswith("CPU times:") and "Wall time:" in stdout
    # its last value is the cell's result, as IPython shows it: nbgrader's partial credit
    assert _judged("%%time\nsum(mean([x]) == x for x in (1, 2)) / 2\n", setup, mean=lambda xs: 1)[0] == 0.5


def test_display_and_show_only_magics_in_a_test_cell_change_nothing_of_its_score():
    """``%%html`` shows nothing in the grader and scores the cell's points, as in a kernel; a show-only line is
    left out, with a line in its place that says so."""
    setup = judge_setup.setup_namespace(_notebook(_cell("import math")))
    assert _judged("%%html\n<b>well done</b>\n", setup) == (2, "")
    score, stdout = _judged("!ls\nassert math.isclose(f(2), 4)", setup, f=lambda x: x * x)
    assert score == 2 and stdout == "[!ls: only shows something; the trusted judge leaves it out, and the kernel runs it]\n"


@pytest.mark.parametrize("source, unsupported", [
    ("%run helpers.py", "%run helpers.py"),
    ("!pip install numpy", "!pip install numpy"),
    ("%pip install numpy", "%pip install numpy"),
    ("%cd data", "%cd data"),
    ("%env GRADING=1", "%env GRADING=1"),
    ("files = !ls", "!ls"),  # its value is used
    ("names = %who_ls", "%who_ls"),
    ("!echo 1 > n.txt", "!echo 1 > n.txt"),
    ("!ls; rm -rf data", "!ls; rm -rf data"),
    ("%time x = f()", "%time x = f()"),
    ("%%writefile helpers.py\ndef f(): pass", "%%writefile helpers.py"),
    ("%%bash\nls", "%%bash"),
    ("%reset --aggressive", "%reset --aggressive"),
    ("%%capture --bogus\nx = 1", "%%capture --bogus (options '--bogus')"),
    ("%sql SELECT 1", "%sql SELECT 1"),
    ("%%capture\n%run helpers.py", "%run helpers.py"),  # in a body too
])
def test_magics_the_grader_cannot_carry_out_are_named_and_refused(source, unsupported):
    """What the judge cannot honestly carry out in the grader is named, never faked: the cell goes to the kernel
    (:func:`judge_setup.judged_source` is None), and the stand-in refuses it if called anyway."""
    assert magics.translate(source).unsupported == [unsupported]
    assert judge_setup.judged_source(source) is None
    if unsupported.startswith("%") and not unsupported.startswith("%%") and "=" not in source.split("%")[0]:
        with pytest.raises(magics.MagicNotInJudge):
            exec(magics.translate(source).code, {magics.SHELL: magics.get_ipython})


def test_a_cells_own_get_ipython_is_plain_python_not_in_ipython_in_the_grader():
    """Only the magics call the judge's stand-in: a set-up cell that asks whether it runs in IPython (this
    course's check helpers install a traceback hook so) finds it does not, in the grader, as before."""
    notebook = _notebook(_cell("%matplotlib inline\ntry:\n    get_ipython().set_custom_exc((), None)\n"
                               "    where = 'IPython'\nexcept NameError:\n    where = 'the grader'\n"))
    assert judge_setup.magic_fallbacks(notebook) == [] and judge_setup.setup_namespace(notebook)["where"] == "the grader"


def test_a_set_up_cell_the_grader_cannot_run_sends_only_the_tests_below_it_to_the_kernel():
    """The namespace is made by the set-up cells above the first that cannot run in the grader; the test cells
    above it are judged, those below it run in the kernel; a test cell with such a magic runs there alone."""
    notebook = _notebook(_cell("import math"), _answer("def f(x):\n    return x"),
                         _test_cell("assert f(1) == 1", "test_above"),
                         _test_cell("%env CHECKING=1\nassert f(2) == 2", "test_env"),
                         _cell("%run helpers.py\nTOLERANCE = 0.1", "helpers"),
                         _cell("LATER = 1"),
                         _test_cell("assert f(3) == 3", "test_below"))
    namespace = judge_setup.setup_namespace(notebook)
    assert "math" in namespace and "TOLERANCE" not in namespace and "LATER" not in namespace
    fallbacks = judge_setup.magic_fallbacks(notebook)
    assert [(f.kind, f.number, f.grade_id, f.tests) for f in fallbacks] == [
        ("test", 4, "test_env", ["test_env"]), ("set-up", 5, "helpers", ["test_below"])]
    assert str(fallbacks[1]) == ("set-up cell 5 (helpers) `%run helpers.py`: the test cells below it (test_below) "
                                 "run in the kernel, as do the set-up cells from it on")
    assert str(fallbacks[0]) == "test cell 4 (test_env) `%env CHECKING=1`: it runs in the kernel"


def test_reset_clears_as_ipython_does():
    """``%reset -s`` keeps the names that start with ``_``; ``%reset -f array`` deletes only numpy arrays;
    ``%reset -f in`` only the input history (the kernel's)."""
    def after(line):
        namespace = {"__name__": "__main__", magics.SHELL: magics.get_ipython, "a": np.arange(2), "n": 1, "_p": 2}
        exec(magics.translate(line).code, namespace)
        return sorted(name for name in namespace if name not in ("__builtins__", "__name__", magics.SHELL))

    assert after("%reset -f") == [] and after("%reset") == []  # a notebook has no one to confirm
    assert after("%reset -f -s") == ["_p"]
    assert after("%reset -f array") == ["_p", "n"]
    assert after("%reset -f in out dhist") == ["_p", "a", "n"]


def test_reference_answers_and_predicted_calls_read_ipython_too():
    """The reference answers and the predicted calls (what makes a test cell's calls one round trip) are
    translated as the set-up is: an answer with ``%%time`` defines its function, a test with ``%%capture``
    predicts its calls."""
    setup = judge_setup.setup_namespace(_notebook(_cell("%matplotlib inline\nimport math")))
    source = _notebook(_answer("%%time\ndef double(x):\n    return 2 * x\n"))
    reference = judge_setup.reference_namespace(source, setup)
    assert reference["double"](2) == 4
    calls = judge_setup.predicted_calls("%%capture\nassert double(1) == 2\nassert double(3) == 6\n", reference, {"double"})
    assert [call["args"] for call in calls] == [[agent.encode(1)], [agent.encode(3)]]
