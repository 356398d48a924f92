"""The notebook's check helpers (``authoring/check_helpers.py``) in a real IPython shell, in memory: what a test
cell's red box says of a name that is not defined."""

import functools
import json

import numpy as np
import pytest

from hardened_grading.judge import agent, judge
from posenc_course.layout import ROOT

#: the answer cell of a function, with "x = (" left unclosed on its line 2
UNCLOSED = "def relative_position_matrix(L):\n    x = (\n"


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """An IPython shell (no history file) that ran the notebook's set-up and check helpers cells."""
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    the_shell = InteractiveShell(config=config)
    the_shell.run_cell("import numpy as np", store_history=True)
    the_shell.run_cell((ROOT / "authoring" / "check_helpers.py").read_text(), store_history=True)
    yield the_shell
    the_shell.cleanup()


def raised(shell, source):
    """The error the cell `source` raised, run as a notebook runs it, in `shell`."""
    result = shell.run_cell(source, store_history=True)
    return result.error_before_exec or result.error_in_exec


def test_a_name_whose_cell_has_a_syntax_error_is_said_to_need_that_cell_fixed(shell):
    assert isinstance(raised(shell, UNCLOSED), SyntaxError)
    error = raised(shell, "check_true(relative_position_matrix(3) is not None, 'r')")
    assert str(error) == ("name 'relative_position_matrix' is not defined: the cell that defines it has a syntax "
                          "error (line 2: '(' was never closed), so it never ran: fix that cell and run it again")


def test_a_name_never_run_is_said_to_need_the_cells_above_run(shell):
    error = raised(shell, "check_true(relative_position_matrix(3) is not None, 'r')")
    assert str(error) == ("name 'relative_position_matrix' is not defined. Run the cells above this one first "
                          "(Run → Run All Above Selected Cell), or check the spelling")


def test_a_cell_fixed_and_run_again_is_no_longer_blamed(shell):
    raised(shell, UNCLOSED)
    assert raised(shell, "def relative_position_matrix(L):\n    return L\n") is None
    assert raised(shell, "check_true(relative_position_matrix(3) == 3, 'r')") is None
    raised(shell, "del relative_position_matrix")
    assert "syntax error" not in str(raised(shell, "relative_position_matrix(3)"))


#: a function's stub, as the release has it
STUB = ('def relative_position_matrix(L):\n    # YOUR CODE HERE\n'
        '    raise NotImplementedError("not answered yet: write this function here, in place of this line")\n')


def test_a_stub_still_there_because_its_new_code_has_a_syntax_error_says_so(shell):
    """Run All ran the stub; the student's code, run again, has a syntax error: the stub is what the test cell
    calls, and its red box says why, in place of "not answered yet"."""
    raised(shell, STUB)
    assert isinstance(raised(shell, UNCLOSED), SyntaxError)
    error = raised(shell, "check_true(relative_position_matrix(3) is not None, 'r')")
    assert isinstance(error, NotImplementedError)
    assert str(error) == ("relative_position_matrix is still the stub: you changed the cell that defines it, but it "
                          "has a syntax error (line 2: '(' was never closed), so it never ran: fix that cell and run "
                          "it again")


def test_a_concept_answer_still_the_dots_because_its_new_cell_has_a_syntax_error_says_so(shell):
    raised(shell, "ex02_tokens_with_a_row = ...  # YOUR ANSWER HERE")
    assert isinstance(raised(shell, "ex02_tokens_with_a_row = (24"), SyntaxError)
    error = raised(shell, "check_answered(ex02_tokens_with_a_row, 'ex02_tokens_with_a_row')")
    assert str(error).startswith("ex02_tokens_with_a_row is still the stub: you changed the cell that defines it, "
                                 "but it has a syntax error (line 1: "), str(error)


def test_a_stub_left_as_released_still_says_not_answered_yet(shell):
    raised(shell, STUB)
    assert str(raised(shell, "relative_position_matrix(3)")).startswith("not answered yet: write this function")
    raised(shell, "ex02_tokens_with_a_row = ...  # YOUR ANSWER HERE")
    error = raised(shell, "check_answered(ex02_tokens_with_a_row, 'ex02_tokens_with_a_row')")
    assert str(error).startswith("ex02_tokens_with_a_row: not answered yet: replace the ..."), str(error)


@pytest.fixture
def helpers():
    """The check helpers as the grader runs them: in a namespace of their own, outside IPython."""
    import numpy as np

    namespace = {"np": np}
    exec((ROOT / "authoring" / "check_helpers.py").read_text(), namespace)
    return namespace


def failure(check, *args, **kwargs):
    """The message `check` fails with (None when it passes)."""
    try:
        check(*args, **kwargs)
    except AssertionError as error:
        return str(error)
    return None


def test_a_whole_number_written_as_a_float_is_a_whole_number(helpers):
    import numpy as np

    for answer in (24, 24.0, np.int64(24), np.float32(24.0)):
        assert failure(helpers["check_number"], answer, "whole", "rows") is None, answer
    assert failure(helpers["check_number"], 24.5, "whole", "rows") == "rows: expected a whole number, got 24.5 (a float)"
    assert failure(helpers["check_number"], True, "whole", "rows") == "rows: expected a whole number, got True (a bool)"
    assert failure(helpers["check_number"], "24", "whole", "rows") == "rows: expected a whole number, got '24' (a str)"


def test_a_float_where_an_int_is_expected_is_said_plainly(helpers):
    """It said "expected a number (int, Python or numpy scalar), got float 24.0": a float is a number."""
    assert failure(helpers["check_number"], 24.0, "int", "rows") == \
        "rows: expected a whole number (an int), got 24.0 (a float): write 24"
    assert failure(helpers["check_number"], 2.5, "int", "f(1)") == \
        "f(1): expected a whole number (an int), got 2.5 (a float)"
    assert failure(helpers["check_number"], 3, "float", "s") == "s: expected a float, got 3 (an int)"


def test_a_concept_answer_that_is_a_bool_is_not_a_count(helpers):
    """``True == 1`` in Python; the form check refuses a bool, and so does the value's check."""
    assert failure(helpers["check_answer"], True, 1, "count", "Count them.") == "count = True: not right. Count them."
    assert failure(helpers["check_answer"], 1.0, 1, "count", "Count them.") is None


def judge_in_process(namespace):
    """A judge whose calls run in `namespace` here, through the kernel's own agent (no kernel)."""
    return judge.Judge(lambda request: json.loads(json.dumps(agent.answer(request, namespace))))


def test_check_inputs_unchanged_sees_a_dict_changed_in_the_kernel():
    """The notebook's own check, run by the judge on a function that adds to the caller's dict, fails."""
    namespace = {"np": np}
    exec((ROOT / "authoring" / "check_helpers.py").read_text(), namespace)

    def keeps(config):
        return {**config, "rope_theta": 1.0}

    def adds(config):
        config.setdefault("rope_theta", 1.0)
        return config

    for function, fails in ((keeps, False), (adds, True)):
        proxy = judge_in_process({function.__name__: function})
        call = functools.partial(proxy.call, function.__name__)
        config = {"rope_type": "linear", "nested": {"factor": [2.0]}}
        try:
            namespace["check_inputs_unchanged"](lambda c: call((c,), {}), config, what=function.__name__)
        except AssertionError as error:
            assert fails and "was modified in place" in str(error) and "dict" in str(error), error
        else:
            assert not fails, f"{function.__name__} changed the caller's dict, and the check passed"
