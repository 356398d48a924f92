import re
import sys
import warnings
from copy import deepcopy as _deepcopy


def _show(value):
    try:
        return np.array2string(np.asarray(value), precision=6, suppress_small=True,
                               max_line_width=100)
    except Exception:
        return repr(value)


def _all_close(got, expected, atol, rtol):
    """Element-wise |got - expected| <= atol + rtol |expected|; NaN is never close."""
    return bool(np.all(np.abs(got - expected) <= atol + rtol * np.abs(expected)))


def _all_equal(got, expected):
    return got.shape == expected.shape and bool((got == expected).all())


def check_close(got, expected, what, atol=1e-8, rtol=1e-7):
    """Fail unless `got` has the shape of `expected` and is close to it."""
    expected = np.asarray(expected, dtype=float)
    try:
        got_array = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise AssertionError(f"{what}: expected a numeric array of shape {expected.shape}, got "
                             f"{got!r}") from None
    if got_array.shape != expected.shape:
        raise AssertionError(f"{what}: expected shape {expected.shape}, got shape "
                             f"{got_array.shape}")
    if not _all_close(got_array, expected, atol, rtol):
        raise AssertionError(f"{what}:\n  expected {_show(expected)}\n  got      "
                             f"{_show(got_array)}")


def check_equal(got, expected, what):
    """Fail unless `got` equals `expected` exactly, element by element."""
    expected = np.asarray(expected)
    got_array = np.asarray(got)
    if got_array.shape != expected.shape:
        raise AssertionError(f"{what}: expected shape {expected.shape}, got shape "
                             f"{got_array.shape}")
    if not _all_equal(got_array, expected):
        raise AssertionError(f"{what}:\n  expected {_show(expected)}\n  got      "
                             f"{_show(got_array)}")


def check_true(condition, message):
    """Fail with `message` unless `condition` holds."""
    if not condition:
        raise AssertionError(message)


def check_dtype(got, kind, what):
    """Fail unless `got` is a numpy array of dtype kind `kind`: "f" float, "i" integer, "b" bool."""
    names = {"f": "a floating", "i": "an integer", "b": "a bool"}
    if not isinstance(got, np.ndarray):
        raise AssertionError(f"{what}: expected a numpy array, got {_kind_of(got)}")
    if got.dtype.kind != kind and not (kind == "i" and got.dtype.kind == "u"):
        raise AssertionError(f"{what}: expected {names[kind]} dtype, got {got.dtype}")


def check_raises_value_error(function, *args, what, **kwargs):
    """Fail unless `function(*args, **kwargs)` raises ValueError."""
    try:
        function(*args, **kwargs)
    except ValueError:
        return
    except NotImplementedError:
        raise AssertionError(f"{what}: the function is not implemented yet") from None
    except Exception as error:
        got = f"{type(error).__name__}: {error}"
        raise AssertionError(f"{what}: expected ValueError, got {got}") from None
    raise AssertionError(f"{what}: expected ValueError, but nothing was raised")


def check_inputs_unchanged(function, *args, what, **kwargs):
    """Call `function` and fail if it modified any of its arguments in place (an array's
    values, a list's items, a dict's keys or values, nested settings); return its result."""
    copies = [_deepcopy(a) for a in args]
    keyword_copies = {name: _deepcopy(value) for name, value in kwargs.items()}
    result = function(*args, **kwargs)
    changed = [(f"argument {number + 1}", after)
               for number, (before, after) in enumerate(zip(copies, args))
               if not _same_value(after, before)]
    changed += [(f"argument {name}", kwargs[name]) for name, before in keyword_copies.items()
                if not _same_value(kwargs[name], before)]
    if changed:
        where, value = changed[0]
        kinds = {np.ndarray: "array", dict: "dict", list: "list"}
        kind = kinds.get(type(value), type(value).__name__)
        raise AssertionError(f"{what}: {where} (the caller's {kind}) was modified in place; "
                             f"leave it as it was: copy it before you change it, and return a "
                             f"new {kind}")
    return result


def _same_value(got, before):
    """Whether `got` is still what `before` (a deep copy taken before the call) was: arrays
    by shape, dtype and values (NaN equal to NaN), dicts and lists item by item, nested."""
    if isinstance(before, np.ndarray):
        return (isinstance(got, np.ndarray) and got.shape == before.shape
                and got.dtype == before.dtype
                and bool(np.array_equal(got, before, equal_nan=before.dtype.kind in "fc")))
    if isinstance(before, dict):
        return (type(got) is type(before) and got.keys() == before.keys()
                and all(_same_value(got[key], value) for key, value in before.items()))
    if isinstance(before, (list, tuple)):
        return (type(got) is type(before) and len(got) == len(before)
                and all(_same_value(g, b) for g, b in zip(got, before)))
    try:
        return bool(got == before) or (got != got and before != before)  # NaN stays NaN
    except Exception:
        return got is before


def check_answered(answer, what):
    """Fail if `answer` is still the `...` that the notebook came with."""
    if answer is ...:
        raise AssertionError(f"{what}: not answered yet: replace the ... in its cell with your "
                             "answer, and run that cell")


def check_number(got, kind, what):
    """Fail unless `got` is a number of `kind`, Python's or numpy's: "int", "float", "real"
    (either), or "whole" (an int, or a float that is a whole number: a concept answer's 24.0 is
    24)."""
    check_answered(got, what)
    kinds = {"int": (int, np.integer), "float": (float, np.floating),
             "real": (int, float, np.integer, np.floating),
             "whole": (int, float, np.integer, np.floating)}[kind]
    right = not isinstance(got, (bool, np.bool_)) and isinstance(got, kinds)
    if right and kind == "whole" and isinstance(got, (float, np.floating)):
        right = float(got).is_integer()
    if not right:
        raise AssertionError(f"{what}: {_not_the_number(got, kind)}")


def _not_the_number(got, kind):
    """What a check says of `got`, which is not a number of `kind` (check_number)."""
    wanted = {"int": "a whole number (an int)", "whole": "a whole number", "float": "a float",
              "real": "a number (an int or a float)"}[kind]
    if isinstance(got, (float, np.floating)) and not isinstance(got, (bool, np.bool_)):
        shown, kind_of = repr(float(got)), "a float"
        if float(got).is_integer():
            return f"expected {wanted}, got {shown} ({kind_of}): write {int(got)}"
    elif isinstance(got, (int, np.integer)) and not isinstance(got, (bool, np.bool_)):
        shown, kind_of = repr(int(got)), "an int"
    else:
        shown, kind_of = _short_repr(got), _kind_of(got)
    return f"expected {wanted}, got {shown} ({kind_of})"


def check_answer(answer, expected, what, hint, tolerance=None):
    """Fail unless the concept answer `answer` is `expected` (within `tolerance`, for a number).

    The message says which answer was given and that it is not right, with `hint`: a way to get
    there that names no value. It never shows `expected`. An unanswered question says it is not
    answered yet.
    """
    check_answered(answer, what)
    numbers = (int, float, np.integer, np.floating)
    try:
        if tolerance is not None:
            is_number = isinstance(answer, numbers) and not isinstance(answer, (bool, np.bool_))
            right = is_number and abs(answer - expected) <= tolerance
        elif isinstance(expected, (list, tuple)):
            is_list = isinstance(answer, (list, tuple, np.ndarray))
            right = is_list and [int(a) for a in answer] == list(expected)
        elif isinstance(answer, (bool, np.bool_)) and not isinstance(expected, (bool, np.bool_)):
            right = False  # True is not the count 1
        else:
            right = bool(answer == expected)
    except (TypeError, ValueError):
        right = False
    if not right:
        raise AssertionError(f"{what} = {_short_repr(answer)}: not right. {hint}")


def _kind_of(value):
    """What `value` is, for a message: the judge's description of a value it could not read
    (a numpy array of str, with its shape), else its type."""
    description = getattr(value, "description", None)
    return description if isinstance(description, str) else f"a {type(value).__name__}"


def _short_repr(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 4] + " ..."


def check_choice(answer, choices, what):
    """Fail unless `answer` is one of `choices` (this does not say whether it is right)."""
    check_answered(answer, what)
    if answer not in choices:
        raise AssertionError(f"{what}: {answer!r} is not one of the choices {choices}")


# Warnings show as usual, but on standard output: nbgrader fails a test cell that writes anything
# to standard error, and a warning costs points only where an exercise says so (by turning it into
# an error).
def _show_warning(message, category, filename, lineno, file=None, line=None,
                  _format=warnings.formatwarning):
    sys.stdout.write(_format(message, category, filename, lineno, line))


warnings.showwarning = _show_warning


def _syntax_error_defining(shell, name):
    """The syntax error of the cell run last that defines `name` (`def name(`, `name =`), or None:
    its code never ran, so `name` is not defined."""
    name = re.escape(name)
    defines = re.compile(rf"^(?:(?:async\s+)?def\s+{name}\s*\(|class\s+{name}\b"
                         rf"|{name}\s*(?::[^=\n]*)?=(?!=))", re.M)
    for source in reversed(shell.history_manager.input_hist_raw):
        if defines.search(source):
            try:
                compile(shell.transform_cell(source), "<cell>", "exec")
            except SyntaxError as error:
                return error
            return None
    return None


def _name_hint(shell, name):
    """What to do about the name `name` that is not defined, to follow Python's message."""
    try:
        error = _syntax_error_defining(shell, name) if name else None
    except Exception:  # the history cannot be read: the usual hint
        error = None
    if error is None:
        return (". Run the cells above this one first (Run → Run All Above Selected Cell), or "
                "check the spelling")
    return (f": the cell that defines it has {_syntax_error_words(error)}, so it never ran: fix "
            "that cell and run it again")


def _stale_stub(shell, value, frames):
    """What to say in place of a stub's "not answered yet" when the student did change the cell
    that defines it, and that cell has a syntax error: the stub is still the one that ran. None
    otherwise. `frames`: the traceback's, the innermost last."""
    if isinstance(value, NotImplementedError) and frames:
        name = frames[-1].tb_frame.f_code.co_name  # the stub that raised
    else:
        found = re.match(r"(\w+): not answered yet", str(value))
        name = found and found.group(1)  # a concept answer still the ...
    if "not answered yet" not in str(value) or not name:
        return None
    try:
        error = _syntax_error_defining(shell, name)
    except Exception:  # the history cannot be read: the stub's own words
        return None
    if error is None:
        return None
    return (f"{name} is still the stub: you changed the cell that defines it, but it has "
            f"{_syntax_error_words(error)}, so it never ran: fix that cell and run it again")


def _syntax_error_words(error):
    """How a student reads the SyntaxError `error`: "a syntax error (line 3: '(' was never
    closed)", as the grader says it."""
    where = f"line {error.lineno}: " if error.lineno else ""
    return f"a syntax error ({where}{error.msg})"


# A failed check shows the line of your test cell and the check's message, not the code of this
# cell; a name that is not defined gets a hint: the syntax error of the cell that defines it, or
# to run the cells above; a stub still there because its new code has a syntax error says so.
def _short_traceback(shell, etype, value, tb, tb_offset=None):
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    keep = len(frames)
    while keep > 1 and frames[keep - 1].tb_frame.f_code.co_filename == _show.__code__.co_filename:
        keep -= 1
    if keep < len(frames):
        frames[keep - 1].tb_next = None
    if isinstance(value, NameError) and len(value.args) == 1:
        value.args = (value.args[0] + _name_hint(shell, getattr(value, "name", None)),)
    stale = _stale_stub(shell, value, frames)
    if stale is not None:
        value.args = (stale,)
    shell.showtraceback((etype, value, frames[0] if frames else None), tb_offset=tb_offset)


try:
    get_ipython().set_custom_exc((AssertionError, NameError, NotImplementedError), _short_traceback)
except NameError:  # not in IPython: the grader's own copy of these helpers
    pass

print("check helpers ready")
