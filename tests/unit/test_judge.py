"""The judge's parts, without a kernel: what crosses from the kernel, and what a test cell reads.

The whole judge, in real kernels under ``nbgrader autograde``, is tested in test_grading.py.
"""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hardened_grading.judge import agent
from hardened_grading import errors
from hardened_grading.judge import checks as judge_checks
from hardened_grading.judge import judge
from hardened_grading.judge import magics
from hardened_grading.judge import messages
from hardened_grading.judge import setup as judge_setup

from ..helpers.cells import answer_cell, grade_cell


def roundtrip(value):
    return agent.decode(json.loads(json.dumps(agent.encode(value))))


@given(hnp.arrays(dtype=st.sampled_from([np.float64, np.float32, np.int64, np.uint8, np.bool_, np.complex128]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)))
def test_arrays_cross_unchanged(array):
    back = roundtrip(array)
    assert isinstance(back, np.ndarray) and back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)


@pytest.mark.parametrize("value", [None, True, 3, -2**70, 1.5, float("inf"), "hidden states", [1, (2.0, "x")],
                                   {"a": [np.int64(3)]}, (np.float32(0.5), np.arange(3))])
def test_python_values_keep_their_types(value):
    back = roundtrip(value)
    assert type(back) is type(value) and repr(back) == repr(value)


@given(hnp.arrays(dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int16, np.uint8, np.bool_,
                                         np.complex128, np.dtype(">f8")]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)),
       st.booleans())
def test_the_judge_reads_what_numpy_saves_as_numpy_reads_it_without_numpys_reader(array, fortran):
    """The judge's reader of an answer's array (:func:`agent.read_npy`) gives what ``numpy.load`` gives, writable,
    in the same order, without calling it (its header parse was the judge's largest cost)."""
    import io
    from unittest import mock

    buffer = io.BytesIO()
    np.save(buffer, np.asfortranarray(array) if fortran else array, allow_pickle=False)
    expected = np.load(io.BytesIO(buffer.getvalue()), allow_pickle=False)
    with mock.patch.object(np, "load", side_effect=AssertionError("numpy's reader was used")):
        back = agent.read_npy(buffer.getvalue())
    assert back.dtype == expected.dtype and back.shape == expected.shape and back.flags.writeable
    assert back.flags.f_contiguous == expected.flags.f_contiguous
    np.testing.assert_array_equal(back, expected)


@given(hnp.arrays(dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int16, np.uint8, np.bool_,
                                         np.complex128, np.dtype(">f8"), np.dtype(">i4")]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)),
       st.booleans())
def test_the_agent_writes_arrays_numpy_reads_as_they_were(array, fortran):
    """The agent's writer of an answer's array (:func:`agent.npy_bytes`, in place of ``numpy.save``) writes ``.npy``
    bytes that ``numpy.load`` reads back the same: dtype, shape, values and order."""
    import io

    array = np.asfortranarray(array) if fortran else array
    back = np.load(io.BytesIO(agent.npy_bytes(array)), allow_pickle=False)
    assert back.dtype == array.dtype and back.shape == array.shape
    assert back.flags.f_contiguous == array.flags.f_contiguous and back.flags.c_contiguous == array.flags.c_contiguous
    np.testing.assert_array_equal(back, array)
    assert len(agent.npy_bytes(array)) - array.nbytes in (64, 128)  # the data 64-byte aligned, as numpy's
    if array.ndim:  # a view that is neither C nor Fortran contiguous is written in C order
        strided = array[..., ::2]
        np.testing.assert_array_equal(np.load(io.BytesIO(agent.npy_bytes(strided)), allow_pickle=False), strided)


def test_bytes_the_judge_does_not_write_are_numpys_to_read_and_to_refuse():
    """A kernel can send anything: what is not exactly an array of numbers as numpy saves it (objects, a cut-short
    body, a header of another form) is read by numpy's own reader, which refuses what numpy refuses."""
    import io

    def saved(array, allow_pickle=False):
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=allow_pickle)
        return buffer.getvalue()

    with pytest.raises(ValueError, match="allow_pickle"):
        agent.read_npy(saved(np.array([{"a": 1}], dtype=object), allow_pickle=True))
    with pytest.raises(ValueError):
        agent.read_npy(saved(np.arange(10.0))[:-8])
    forged = saved(np.arange(3.0)).replace(b"'shape': (3,)", b"'shape': (4,)")
    with pytest.raises(ValueError):
        agent.read_npy(forged)
    text = saved(np.array(["hidden"]))
    np.testing.assert_array_equal(agent.read_npy(text), np.array(["hidden"]))  # not a number type: numpy reads it


def test_nan_crosses():
    assert np.isnan(roundtrip(float("nan"))) and np.isnan(roundtrip(np.array([np.nan]))[0])


def test_objects_that_are_not_data_become_opaque_and_compare_as_nothing():
    class Sneaky:
        def __eq__(self, other):
            return True

    for value in (Sneaky(), np.array([Sneaky()], dtype=object), lambda: 1):
        back = roundtrip(value)
        assert isinstance(back, agent.Opaque) and back != 0 and not (back == "hidden states")


def test_a_pickled_array_is_refused():
    import base64
    import io
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        agent.decode({"t": "array", "v": base64.b64encode(buffer.getvalue()).decode()})


def test_free_names_are_what_the_test_reads_from_the_submission():
    source = ("q = np.arange(3)\nfor i in range(2):\n    got = apply_rope(q, i)\n"
              "check_close([f(x) for x in q], expected_values, 'what')\n"
              "def helper(a):\n    return a + offset\ntry:\n    g(1)\nexcept ValueError as error:\n    print(error)\n")
    setup = {"np": np, "check_close": None}
    assert judge_setup.free_names(source, setup) == ["apply_rope", "expected_values", "f", "g", "offset"]


def test_a_callback_request_from_the_kernel_is_not_trusted():
    calls = []
    the_judge = judge.Judge(ask=None)
    the_judge._encode(lambda p: calls.append(p) or p * 2)
    good = json.dumps({"callback": 0, "args": [agent.encode(np.arange(3))], "kwargs": []})
    reply = json.loads(the_judge.answer_callback(good))
    assert reply["status"] == "ok" and agent.decode(reply["value"]).tolist() == [0, 2, 4] and len(calls) == 1
    for bad in ("not json", json.dumps({"callback": 7, "args": [], "kwargs": []}),
                json.dumps({"callback": 0, "args": [{"t": "array", "v": "!!"}], "kwargs": []})):
        reply = json.loads(the_judge.answer_callback(bad))
        assert reply["status"] == "raised", bad


def test_a_student_exception_keeps_its_meaning():
    the_judge = judge.Judge(ask=lambda request: {"status": "raised", "types": ["ValueError", "Exception"],
                                                 "message": "P = 9", "traceback": []})
    with pytest.raises(ValueError, match="P = 9"):
        the_judge.call("add_positions", (), {})
    the_judge = judge.Judge(ask=lambda request: {"status": "raised", "types": ["TypeError", "Exception"],
                                                 "message": "bad", "traceback": ["  File x\n"]})
    with pytest.raises(judge_setup.StudentError, match="add_positions raised TypeError: bad"):
        the_judge.call("add_positions", (), {})
    the_judge = judge.Judge(ask=lambda request: {"status": "raised", "types": ["MemoryError"], "message": ""})
    with pytest.raises(judge_setup.Abort):
        the_judge.call("add_positions", (), {})


def test_a_change_the_submission_made_to_an_argument_is_seen_by_the_test():
    def ask(request):
        changed = agent.decode(request["args"][0]) * 0
        return {"status": "ok", "value": agent.encode(None), "args_after": [agent.encode(changed)]}

    argument = np.ones(3)
    judge.Judge(ask).call("mutating", (argument,), {})
    assert argument.tolist() == [0.0, 0.0, 0.0]


def in_process_kernel(namespace):
    """A judge whose calls run in `namespace` here, through the kernel's own agent (no kernel)."""
    return judge.Judge(lambda request: json.loads(json.dumps(agent.answer(request, namespace))))


def test_a_change_to_a_dict_or_list_argument_is_seen_by_the_test_nested_parts_too():
    """As in a test cell run in the kernel: a function that adds to the caller's settings, or changes a nested
    list, changes the test's own objects, including a part the test holds apart, and a removed key is gone."""
    def add_to_settings(config):
        settings = config["rope_scaling"]
        settings.setdefault("rope_theta", 10000.0)
        settings["long_factor"].append(4.0)
        del config["gone"]
        return settings

    inner = {"rope_type": "longrope", "long_factor": [2.0, 3.0]}
    config = {"rope_scaling": inner, "gone": 1, "kept": (1, 2)}
    returned = in_process_kernel({"add_to_settings": add_to_settings}).call("add_to_settings", (config,), {})
    assert config == {"rope_scaling": {"rope_type": "longrope", "long_factor": [2.0, 3.0, 4.0], "rope_theta": 10000.0},
                      "kept": (1, 2)}
    assert config["rope_scaling"] is inner and inner["long_factor"] == [2.0, 3.0, 4.0]
    assert returned == inner and returned is not inner  # what came back is the kernel's, decoded


def test_an_argument_that_comes_back_holding_an_object_is_left_as_it_was():
    """What the kernel cannot carry (an object) is not written over the test's own argument."""
    def put_an_object(items):
        items.append(object())
        items[0] = 9

    items = [1, 2]
    in_process_kernel({"put_an_object": put_an_object}).call("put_an_object", (items,), {})
    assert items == [1, 2]


@pytest.mark.parametrize("reply", [
    {"status": "ok"},  # no value
    {"status": "ok", "value": {"t": "array", "v": "not base64 npy"}},
    {"status": "ok", "value": {"t": "dict", "v": [[{"t": "list", "v": []}, {"t": "py", "v": 1}]]}},
    {"status": "raised"},
])
def test_a_malformed_reply_fails_the_test_cell_and_nothing_else(reply):
    the_judge = judge.Judge(ask=lambda request: reply)
    stdout, error = the_judge.run("got = answer(1)\ncheck_close(got, 1.0, 'answer(1)')", {"check_close": None},
                                  "<test cell t>", functions={"answer"})
    assert error is not None and error["output_type"] == "error"


def test_a_malformed_lookup_fails_the_test_cell_and_nothing_else():
    unhashable_key = {"t": "dict", "v": [[{"t": "list", "v": []}, {"t": "py", "v": 1}]]}
    forged = {"status": "ok", "values": {"ex01_where": unhashable_key}}
    the_judge = judge.Judge(ask=lambda request: forged)
    stdout, error = the_judge.run("assert ex01_where == 'hidden states'", {}, "<test cell t>")
    assert error is not None and error["ename"] == "TypeError"


def test_predicted_calls_are_the_calls_of_right_answers_up_to_one_that_passes_a_function():
    reference = {"double": lambda x: 2 * x, "apply": lambda f, x: f(x), "check_close": lambda *a: None}
    source = "y = double(np.arange(3))\ncheck_close(double(y), [0, 4, 8])\napply(double, 1)\ndouble(5)\n"
    calls = judge_setup.predicted_calls(source, {**reference, "np": np}, functions={"double", "apply"})
    assert [c["name"] for c in calls] == ["double", "double"]
    assert agent.decode(calls[1]["args"][0]).tolist() == [0, 2, 4]


def test_a_call_that_was_not_predicted_is_asked_for_and_so_are_all_after_it():
    asked = []

    def ask(request):
        asked.append(request["op"])
        if request["op"] == "batch":
            return {"status": "ok", "replies": [{"status": "ok", "value": agent.encode(-1)} for _ in request["calls"]]}
        return {"status": "ok", "value": agent.encode(x_of(request) * 2)}

    def x_of(request):
        return agent.decode(request["args"][0])

    predicted = judge_setup.predicted_calls("double(1)\ndouble(2)\ndouble(3)\n", {"double": lambda x: 2 * x}, {"double"})
    source = "out = [double(1), double(20), double(3)]"
    stdout, error = judge.Judge(ask).run(source + "\nresults.extend(out)", {"results": (results := [])}, "<t>",
                                         functions={"double"}, predicted=predicted)
    assert error is None and asked == ["batch", "call", "call"]
    assert results == [-1, 40, 6], "the first from the batch, then asked one by one"


def _in_process_kernel(**functions):
    """`ask` answered by the agent itself, in this process, over a namespace of `functions`."""
    namespace = dict(functions)
    return lambda request: json.loads(agent.answer_text(json.dumps(request), namespace))


def log_of_distance(n):  # warns at distance 0, as HF's torch-style bucket code does in numpy
    return np.log(np.abs(n))


def quiet_log_of_distance(n):  # the same, with the warning silenced where it is made
    with np.errstate(divide="ignore"):
        return np.log(np.abs(n))


@pytest.mark.parametrize("source, function, ename, shown", [
    ("import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('error')\n    f(np.array([0, 3]))",
     log_of_distance, "RuntimeWarning", ""),
    ("import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('error')\n    f(np.array([0, 3]))",
     quiet_log_of_distance, None, ""),
    ("f(np.array([0, 3]))", log_of_distance, None, "RuntimeWarning: divide by zero encountered in log"),
    ("with np.errstate(divide='raise'):\n    f(np.array([0, 3]))", log_of_distance, "FloatingPointError", ""),
    ("with np.errstate(divide='raise'):\n    f(np.array([0, 3]))", quiet_log_of_distance, None, ""),
], ids=["warning-made-an-error", "silenced-inside", "warning-shown", "errstate-raise", "errstate-inside-wins"])
def test_the_tests_warning_filters_and_numpy_error_state_reach_the_call(source, function, ename, shown):
    """A test cell means the same in the judge as in the student's kernel: its warning filters and
    np.errstate apply to the student's function, whether its calls are predicted or not."""
    for predicted in ([], judge_setup.predicted_calls(source, {"f": function, "np": np}, {"f"})):
        the_judge = judge.Judge(_in_process_kernel(f=function))
        stdout, error = the_judge.run(source, {"np": np}, "<test cell t>", functions={"f"}, predicted=predicted)
        assert (error and error["ename"]) == ename, error
        # shown where the kernel shows warnings: on stderr, Python's own warnings.showwarning here
        printed = "".join(text for name, text in the_judge.streams if name == "stderr")
        assert shown in printed and bool(shown) == bool(printed) and not stdout, the_judge.streams


# Partial credit: what each check of a test cell scores -----------------------------------------------

def _checks_setup():
    namespace = {"np": np}
    exec("def check_true(condition, message):\n"
         "    if not condition:\n"
         "        raise AssertionError(message)\n", namespace)
    return namespace


def _answers(**functions):
    """A kernel stand-in whose answer functions are `functions`, called here."""
    def ask(request):
        if request["op"] == "get":
            return {"status": "ok", "values": {}}
        try:
            value = functions[request["name"]](*[agent.decode(a) for a in request["args"]])
        except Exception as error:
            return {"status": "raised", "types": [type(error).__name__], "message": str(error)}
        return {"status": "ok", "value": agent.encode(value)}
    return ask


PARTIAL = [
    # (what, cell source, answers, passed flags, score of 4 points)
    ("all pass", "check_true(f(1) == 1, 'f(1)')\ncheck_true(f(2) == 4, 'f(2)')", {"f": lambda x: x * x},
     [True, True], 4.0),
    ("one of two fails", "check_true(f(1) == 1, 'f(1)')\ncheck_true(f(2) == 4, 'f(2)')", {"f": lambda x: x},
     [True, False], 2.0),
    ("a weight", "check_true(f(1) == 1, 'f(1)')\ncheck_true(f(2) == 4, 'f(2)')  # weight 3", {"f": lambda x: x},
     [True, False], 1.0),
    ("a weight of 0 counts for nothing", "check_true(f(1) == 1, 'f')  # weight 0\ncheck_true(f(2) == 4, 'f(2)')",
     {"f": lambda x: x}, [True, False], 0.0),
    ("the answer raises inside one check: only that one fails",
     "check_true(f(0) == 0, 'f(0)')\ncheck_true(f(-1) == 1, 'f(-1)')\ncheck_true(f(2) == 4, 'f(2)')",
     {"f": lambda x: x * x if x >= 0 else 1 / 0}, [True, False, True], 8 / 3),
    ("a step outside the checks fails: the checks after it fail",
     "check_true(f(2) == 4, 'f(2)')\ny = f(-1)\ncheck_true(y == 1, 'y')\ncheck_true(f(3) == 9, 'f(3)')",
     {"f": lambda x: x * x if x >= 0 else 1 / 0}, [True, False, False], 4 / 3),
    ("a check in a loop counts once, and fails if one round fails; one it cut short keeps what it passed",
     "for x in range(3):\n    check_true(f(x) == x * x, f'f({x})')\n    check_true(True, 'after')\ncheck_true(True, 'last')",
     {"f": lambda x: x * x if x < 2 else 0}, [False, True, True], 8 / 3),
    ("a check of a loop that never reached it fails",
     "for x in range(3):\n    check_true(f(x) == x * x, f'f({x})')\n    check_true(True, 'after')",
     {"f": lambda x: -1}, [False, False], 0.0),
    ("a blank answer fails everything", "check_true(f(1) == 1, 'f(1)')\ncheck_true(f(2) == 4, 'f(2)')",
     {"f": lambda x: (_ for _ in ()).throw(NotImplementedError())}, [False, False], 0.0),
]


@pytest.mark.parametrize("what, source, functions, passed, score", PARTIAL, ids=[row[0] for row in PARTIAL])
def test_a_test_cell_scores_the_weighted_share_of_its_checks_that_pass(what, source, functions, passed, score):
    the_judge = judge.Judge(_answers(**functions))
    the_judge.run(source, _checks_setup(), "<test cell t>", functions=set(functions))
    assert [check.passed for check in the_judge.checks] == passed
    assert judge_checks.score_of(the_judge.checks, 4) == pytest.approx(round(score, 2))
    assert all(check.message for check in the_judge.checks if not check.passed)


def test_the_same_cell_judged_again_starts_from_nothing():
    """A class's students share their test cells, and the judge parses and compiles each once: what one student's
    run recorded (a failed check, its message, a result) never reaches the next student's."""
    source = "check_true(f(1) == 1, 'f(1)')\ncheck_true(f(2) == 4, 'f(2)')\nf(3)"
    wrong, right = judge.Judge(_answers(f=lambda x: x)), judge.Judge(_answers(f=lambda x: x * x))
    wrong.run(source, _checks_setup(), "<test cell t>", functions={"f"})
    right.run(source, _checks_setup(), "<test cell t>", functions={"f"})
    assert [(c.passed, c.message) for c in right.checks] == [(True, ""), (True, "")] and right.result == 9
    assert [c.passed for c in wrong.checks] == [True, False] and wrong.checks[1].message and wrong.result == 3
    first = magics.translate("%%capture --bad\nx = 1\n")
    first.unsupported.append("changed by its caller")
    assert magics.translate("%%capture --bad\nx = 1\n").unsupported == first.unsupported[:-1]


def test_a_check_knows_whether_it_is_hidden_and_where_it_is():
    source = "check_true(True, 'seen')\n### BEGIN HIDDEN TESTS\ncheck_true(\n    True, 'hidden')\n### END HIDDEN TESTS\n"
    _, checks = judge_checks.routed_checks(source)
    assert [(c.line, c.hidden) for c in checks] == [(1, False), (3, True)]
    assert checks[1].text == "check_true( True, 'hidden')"


def test_a_kernel_that_gives_out_fails_the_checks_not_yet_run_and_keeps_the_rest():
    def ask(request):
        if request["op"] == "get":
            return {"status": "ok", "values": {}}
        if agent.decode(request["args"][0]) == 2:
            raise judge_setup.Abort("KernelDied", "the kernel died")
        return {"status": "ok", "value": agent.encode(1)}

    the_judge = judge.Judge(ask)
    with pytest.raises(judge_setup.Abort):
        the_judge.run("check_true(f(1) == 1, 'f(1)')\ncheck_true(f(2) == 1, 'f(2)')\ncheck_true(True, 'x')",
                      _checks_setup(), "<t>", functions={"f"})
    assert [c.passed for c in the_judge.checks] == [True, False, False]
    assert "the kernel died" in the_judge.checks[2].message


@pytest.mark.parametrize("length", [10, 399, 400, 401, 5000])
def test_a_long_message_keeps_its_start_and_what_came_back(length):
    message = "expected [" + "1 " * length + "] got [7]"
    shown = messages.elide(message, 400)
    assert len(shown) <= 400 and shown.startswith("expected [1") and shown.endswith("got [7]")
    assert (" ... " in shown) == (len(" ".join(message.split())) > 400)


def test_a_long_expected_and_a_long_got_both_show():
    message = "apply_rope: expected [" + "1.5 " * 300 + "] got [" + "2.5 " * 300 + "]"
    shown = messages.elide(message, 400)
    assert len(shown) <= 400 and shown.startswith("apply_rope: expected [1.5") and " got [2.5" in shown


@pytest.mark.parametrize("what, source, functions, passed, score", PARTIAL, ids=[row[0] for row in PARTIAL])
def test_without_credit_per_check_a_test_cell_scores_all_or_nothing(what, source, functions, passed, score):
    """``credit_per_check`` off (the engine's default): all the points when the cell raised nothing, else none, as
    stock nbgrader scores it; the checks are still listed."""
    from hardened_grading.cells import engine_meta
    from hardened_grading.judge.link import record_verdict

    the_judge = judge.Judge(_answers(**functions))
    stdout, error = the_judge.run(source, _checks_setup(), "<test cell t>", functions=set(functions))
    cell = grade_cell(source, "t", 4)
    record_verdict(cell, the_judge.checks, stdout, error, per_check=False)
    assert engine_meta(cell)["score"] == (4.0 if error is None else 0.0)
    assert (error is None) == all(passed)  # every row of PARTIAL that fails a check raises
    scored = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert not scored, "no partial score for nbgrader to record"
    assert any(o.output_type == "error" for o in cell.outputs) == (error is not None)


def test_a_set_up_cell_that_needs_the_kernel_says_which_cell_and_why():
    """A set-up cell that calls an answer (nbgrader's documentation course: ``squares(10)`` below the answer)
    cannot run in the grader: the error names the cell, so the log can say why its tests run in the kernel."""
    import nbformat

    answer = answer_cell("def squares(n):\n    return [i * i for i in range(1, n + 1)]", "squares")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import math"), answer,
                                               nbformat.v4.new_code_cell("squares(10)")])
    with pytest.raises(errors.SetupError) as raised:
        judge_setup.setup_namespace(notebook)
    assert judge_setup.setup_problem(raised.value) == "cell 3: NameError: name 'squares' is not defined"
    del notebook.cells[2]
    assert "math" in judge_setup.setup_namespace(notebook)


def test_source_answers_that_do_not_run_predict_nothing_and_judging_goes_on(tmp_path):
    """A source notebook whose answer cell is itself a stub (nbgrader's own test fixture ``p1``): the calls of
    right answers cannot be predicted, so none are, and the test cell is judged call by call."""
    import nbformat

    answer = answer_cell("# YOUR CODE HERE\nraise NotImplementedError()", "set_a")
    path = tmp_path / "p1.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[answer]), str(path))
    namespace, functions, predict = judge_setup.trusted_setup(path, path)
    assert functions == set() and predict("assert a == 1") == ()


@pytest.mark.parametrize("last, outputs, score", [
    ("passed / 4 * 2", ["execute_result"], 1.0),  # nbgrader's partial credit (#1090)
    ("passed", ["execute_result"], 2.0),           # 2 of 2 points: a number, all of them
    ("'ok'", ["execute_result"], 2.0),             # not a number: all the points, as nbgrader reads it
    ("print(passed)", ["stream"], 2.0),            # not a value: all the points
], ids=["a share", "all", "text", "printed"])
def test_a_passing_test_cell_whose_last_value_is_a_number_scores_it(last, outputs, score):
    from hardened_grading.cells import engine_meta
    from hardened_grading.judge.link import record_verdict

    the_judge = judge.Judge(_answers(f=lambda x: x * x if x < 3 else 0))
    source = f"passed = sum(f(x) == x * x for x in range(1, 5))\n{last}"
    stdout, error = the_judge.run(source, _checks_setup(), "<test cell t>", functions={"f"})
    cell = grade_cell(source, "t", 2)
    record_verdict(cell, the_judge.checks, stdout, error, per_check=False, result=the_judge.result)
    assert error is None and [o.output_type for o in cell.outputs] == outputs
    assert engine_meta(cell)["score"] == score


def _printing_kernel(printed):
    """A kernel stand-in whose every call returns 1, having printed `printed` (``[[stream, text], ...]``)."""
    def ask(request):
        if request["op"] == "call":
            return {"status": "ok", "value": agent.encode(1), "printed": printed}
        return {"status": "ok", "values": {}}
    return ask


def test_what_the_test_and_its_calls_print_is_kept_in_order_each_on_its_stream():
    the_judge = judge.Judge(_printing_kernel([["stdout", "in f\n"], ["stderr", "debug\n"]]))
    stdout, error = the_judge.run("print('before')\nf()\nimport sys\nprint('own', file=sys.stderr)\nprint('after')",
                                  {}, "<t>", functions={"f"})
    assert error is None and stdout == "before\nin f\nafter\n"
    assert the_judge.streams == [["stdout", "before\nin f\n"], ["stderr", "debug\nown\n"], ["stdout", "after\n"]]


def test_what_is_printed_past_max_output_is_dropped_and_said_once():
    the_judge = judge.Judge(_printing_kernel([["stdout", "x" * 30]]), max_output=50)
    the_judge.run("for _ in range(5):\n    f()", {}, "<t>", functions={"f"})
    text = "".join(text for _, text in the_judge.streams)
    assert text.startswith("x" * 50 + "\n[more output was dropped") and text.count("dropped") == 1, text


def test_a_kernel_that_cannot_say_its_state_leaves_the_graders():
    """The kernel's state is its word: a malformed one (an unknown action, a print option of the wrong type, a
    folder outside the notebook's) is not taken."""
    state = judge.Judge(lambda request: {})._kernel_state(
        {"errstate": {"divide": "raise", "over": "explode", "bogus": "raise"}, "cwd": "/etc",
         "printoptions": {"precision": "3", "linewidth": 10**12, "threshold": 5, "formatter": {"all": "x"}}})
    assert state == {"errstate": {"divide": "raise"}, "printoptions": {"threshold": 5}, "folder": None,
                     "warnings_to": "stderr"}


def test_a_test_follows_the_kernel_into_a_folder_inside_the_notebooks_but_never_through_a_link(tmp_path, monkeypatch):
    """A test's relative paths lead where the kernel's working folder is (the student's code moved it into a folder
    of its own), as in a plain run; but only to a real folder inside the notebook's, reached name by name without
    following a link: a link swapped in after a check (simulated: the check sees every path as real) leads nowhere."""
    import os

    notebook = tmp_path / "student"
    (notebook / "work").mkdir(parents=True)
    (notebook / "work" / "out.txt").write_text("inside")
    secret = tmp_path / "outside" / "gradebook.db"
    secret.parent.mkdir()
    secret.write_text("hidden tests")
    os.symlink(secret.parent, notebook / "link")
    monkeypatch.setattr(os.path, "realpath", os.path.abspath)  # as if the link came after the check
    read = "with open(NAME) as file:\n    print(file.read())"
    for cwd, name, expected in ((notebook / "work", "out.txt", "inside\n"), (notebook / "link", "gradebook.db", None)):
        the_judge = judge.Judge(lambda request: {"status": "ok", "cwd": str(cwd), "values": {}}, folder=str(notebook))
        stdout, error = judge_setup.in_folder(str(notebook), the_judge.run, read, {"NAME": name}, "<t>")
        assert stdout == (expected or ""), stdout
        assert (error is None) == (expected is not None), error
    assert os.getcwd() != str(notebook / "work"), "the grader's own folder is put back"


# A name an answer cell with a syntax error would define ------------------------------------------------------

#: the answer cell of a function, left with "x = (" unclosed on its line 2: it never ran, so its name is not defined
UNCLOSED = "def relative_position_matrix(L):\n    x = (\n"
SAID = ("the answer cell ex03_relative_position_matrix, which defines it, has a syntax error (line 2: '(' was never "
        "closed), so it never ran: fix that cell and run it again")


@pytest.mark.parametrize("source, functions", [
    ("check_true(relative_position_matrix(3) is not None, 'r(3)')", {"relative_position_matrix"}),
    ("y = relative_position_matrix(3)\ncheck_true(y is not None, 'y')", {"relative_position_matrix"}),
    ("check_true(relative_position_matrix is not None, 'r')", set()),
], ids=["called in a check", "called before the checks", "read as a value"])
def test_a_name_whose_answer_cell_does_not_compile_is_said_to_have_a_syntax_error(source, functions):
    """The kernel never ran the answer cell, so the name is not defined; "NameError: name ... is not defined" alone
    sent the student to run the cells above, when the cell above ran and failed."""
    cells = [answer_cell("import numpy as np", "ex01_setup"), answer_cell(UNCLOSED, "ex03_relative_position_matrix")]
    the_judge = judge.Judge(_in_process_kernel(), cells=cells)
    stdout, error = the_judge.run(source, _checks_setup(), "<test cell t>", functions=functions)
    assert error["ename"] == "NameError"
    assert error["evalue"] == f"name 'relative_position_matrix' is not defined: {SAID}"
    assert the_judge.checks[0].passed is False and SAID in the_judge.checks[0].message
    assert the_judge.checks[0].message.count("syntax error") == 1  # said once, though seen by a check and its cell


@pytest.mark.parametrize("cells", [
    [],
    [answer_cell("def relative_position_matrix(L):\n    return L\n", "ex03_relative_position_matrix")],
    [answer_cell(UNCLOSED, "ex03_relative_position_matrix"),
     answer_cell("def relative_position_matrix(L):\n    return L\n", "ex03_again")],
    [grade_cell(UNCLOSED, "ex03_relative_position_matrix_test", 1)],
    [answer_cell("def other(L):\n    x = (\n", "ex03_other")],
], ids=["no cells", "an answer cell that compiles", "fixed in a later answer cell", "not an answer cell",
        "another name's cell"])
def test_a_name_that_is_not_defined_for_another_reason_is_said_as_python_says_it(cells):
    the_judge = judge.Judge(_in_process_kernel(), cells=cells)
    stdout, error = the_judge.run("check_true(relative_position_matrix(3) is not None, 'r(3)')", _checks_setup(),
                                  "<test cell t>", functions={"relative_position_matrix"})
    assert error["evalue"] == "name 'relative_position_matrix' is not defined"


def test_an_answer_cells_names_are_read_from_its_text_and_its_magics_are_not_syntax_errors():
    from hardened_grading.judge import syntax

    assert syntax.defined_names("import numpy as np\nP = 1024\nrows: int = 3\ndef f(a):\n    y = (\nclass C:\n") == \
        ["P", "rows", "f", "C"]
    assert syntax.syntax_problem("%matplotlib inline\nx = 1\n") is None
    problem = syntax.syntax_problem("x = 1\nex02_tokens_with_a_row = (24\n")
    assert (problem.lineno, problem.msg) == (2, "'(' was never closed")


def _course_checks_setup():
    """A test cell's namespace with numpy and the course's check helpers (authoring/check_helpers.py)."""
    from posenc_course.layout import ROOT

    namespace = {"np": np}
    exec((ROOT / "authoring" / "check_helpers.py").read_text(), namespace)
    return namespace


@pytest.mark.parametrize("value, described", [
    (np.array(["a", "b"]), "a numpy array of str, shape (2,)"),
    (np.array([[b"x"]]), "a numpy array of bytes, shape (1, 1)"),
    (np.array([None, 1], dtype=object), "a numpy array of objects, shape (2,)"),
    (np.str_("a"), "a numpy str scalar"),
])
def test_an_array_that_is_not_numbers_is_described_by_its_dtype_and_shape_not_as_opaque(value, described):
    """The judge cannot read an array of strings as data; a check's message still says what came back."""
    the_judge = judge.Judge(_answers(f=lambda: value))
    the_judge.run("check_dtype(f(), 'f', 'f()')\ncheck_number(f(), 'int', 'n')", _course_checks_setup(),
                  "<test cell t>", functions={"f"})
    messages = [check.message for check in the_judge.checks]
    assert messages[0] == f"f(): expected a numpy array, got {described}"
    assert messages[1].endswith(f"({described})") and "Opaque" not in " ".join(messages)
    back = roundtrip(value)
    assert isinstance(back, agent.Opaque) and back.description == described


def test_what_the_kernel_says_of_an_array_is_believed_only_when_it_is_a_known_kind_and_a_shape():
    forged = {"t": "opaque", "type": "ndarray", "repr": "x", "kind": "U", "shape": ["expected 42"]}
    assert agent.decode(forged).description == "a ndarray"
    assert agent.decode(dict(forged, kind="<script>", shape=[2])).description == "a ndarray"
    assert agent.decode({"t": "opaque", "type": "Sneaky", "repr": "x"}).description == "a Sneaky"
