"""The notebook's progress cell (:func:`posenc_course.authoring.notebook.tracker_source`): what it says of a test
cell that failed is the check's message on one line, cut between words, with what it expected and what came back.
The tracker's source is run here in a namespace with a stand-in for IPython's events: no kernel."""

import contextlib
import io
import types

from posenc_course.authoring.notebook import tracker_source

SINUSOIDAL = ("sinusoidal_row(0, 6): interleaved, sin(0) = 0 and cos(0) = 1 in every pair:\n"
              "  expected [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]\n  got      [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]")
#: one exercise, as the notebook's table lists it: (exercise, title, points, [(test cell, key)], [answer cells])
TABLE = [("ex01", "Sinusoidal rows", 5.0, [("ex01_slowest_period_test", "k1"), ("ex01_sinusoidal_row_test", "k2")],
          ["ex01_slowest_period_answer", "ex01_sinusoidal_row"])]


class Events:
    """IPython's ``get_ipython().events``, as far as the tracker uses it."""

    def __init__(self):
        self.callbacks = {"post_run_cell": []}

    def register(self, name, callback):
        self.callbacks[name].append(callback)

    def unregister(self, name, callback):
        self.callbacks[name].remove(callback)


def ran_cell(events, cell_id, error=None):
    """Tell the tracker that the cell `cell_id` ran, raising `error` (None: it passed)."""
    info = types.SimpleNamespace(raw_cell=f"# the cell {cell_id}", cell_id=cell_id)
    result = types.SimpleNamespace(info=info, error_in_exec=error, error_before_exec=None)
    for callback in events.callbacks["post_run_cell"]:
        callback(result)


def progress_after(*cells):
    """What ``show_progress()`` prints after `cells` (``(cell id, error)``) ran."""
    events = Events()
    namespace = {"get_ipython": lambda: types.SimpleNamespace(events=events)}
    exec(tracker_source("__grader__", repr(TABLE), "{}"), namespace)
    for cell_id, error in cells:
        ran_cell(events, cell_id, error)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["show_progress"]()
    return printed.getvalue()


def test_a_failed_test_cell_is_said_by_its_message_with_what_it_expected_and_what_came_back():
    text = progress_after(("ex01-slowest-period-test", None), ("ex01-sinusoidal-row-test", AssertionError(SINUSOIDAL)))
    said = next(line.strip() for line in text.splitlines() if line.strip().startswith("sinusoidal_row(0, 6)"))
    assert said.startswith("sinusoidal_row(0, 6): interleaved,"), text
    assert " expected [0.0, 1.0," in said and " got [0.0, 0.0," in said, text
    assert set(said.split()) - {"..."} <= set(SINUSOIDAL.split()), said  # no word cut in two
    assert "1 of 2 test cells pass; ex01_sinusoidal_row_test" in text


def test_an_answer_cell_that_raised_is_said_in_whole_words():
    error = NotImplementedError("not answered yet: write this function here, in place of this line " * 3)
    text = progress_after(("ex01-sinusoidal-row", error))
    said = next(line.strip() for line in text.splitlines() if line.strip().startswith("NotImplementedError: not"))
    assert set(said.split()) - {"..."} <= set(f"NotImplementedError: {error}".split()), said
    assert "the answer cell ex01_sinusoidal_row raised" in text


def test_an_answer_cell_with_a_syntax_error_is_found_by_the_name_it_would_define():
    """Where the front end sends no cell id (nbclient), an answer cell is found by the names it defines; one that
    does not compile defined none, so its exercise said only its test cell's NameError."""
    unclosed = "def sinusoidal_row(p, d):\n    x = (\n"
    try:
        compile(unclosed, "/tmp/ipykernel_812/1824540003.py", "exec")  # the file name ipykernel gives a cell
    except SyntaxError as raised:
        error = raised
    events = Events()
    namespace = {"get_ipython": lambda: types.SimpleNamespace(events=events)}
    exec(tracker_source("__grader__", repr(TABLE), repr({"ex01_sinusoidal_row": ["sinusoidal_row"]})), namespace)
    info = types.SimpleNamespace(raw_cell=unclosed, cell_id=None)
    for callback in events.callbacks["post_run_cell"]:
        callback(types.SimpleNamespace(info=info, error_in_exec=None, error_before_exec=error))
    ran_cell(events, "ex01-sinusoidal-row-test", NameError("name 'sinusoidal_row' is not defined"))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["show_progress"]()
    text = printed.getvalue()
    assert "the answer cell ex01_sinusoidal_row raised:" in text, text
    assert "SyntaxError: '(' was never closed (line 2)" in text and ".py" not in text, text
