"""The reference solutions' input checks, read against their numpy docstrings.

- Every ``raise X(...)`` in a public function of ``posenc_solutions`` is listed in that function's ``Raises``
  section, and so is every argument whose name the raised message gives (``head_dim must be ...``).
- An integer argument (``name : int`` in ``Parameters``) given ``inf``, ``nan``, ``True`` or ``-1`` never makes
  a reference fail with anything but ValueError or TypeError (not OverflowError from ``int(inf)``, not
  ZeroDivisionError); where the ``Raises`` section names that argument, each of the four is refused.

A function's valid arguments are those of the first call in its docstring's examples, recorded by running them.
"""

import ast
import contextlib
import doctest
import importlib
import inspect
import io
import math
import pkgutil
import re
import textwrap
import warnings

import pytest

import posenc_solutions

#: The values an integer argument is tried with: none is a valid size.
NOT_SIZES = (math.inf, math.nan, True, -1)


def public_functions():
    """``{qualified name: function}`` of every public function defined in a module of posenc_solutions."""
    found = {}
    for info in pkgutil.iter_modules(posenc_solutions.__path__):
        module = importlib.import_module(f"posenc_solutions.{info.name}")
        for name, value in vars(module).items():
            if inspect.isfunction(value) and not name.startswith("_") and value.__module__ == module.__name__:
                found[f"{info.name}.{name}"] = value
    return found


def section(function, title):
    """The lines of the numpy-docstring section `title` of `function` (its underline left out)."""
    lines = inspect.cleandoc(function.__doc__ or "").splitlines()
    inside, found = False, []
    for line, following in zip(lines, lines[1:] + [""]):
        if line.strip() and following.strip() and set(following.strip()) == {"-"}:
            inside = line.strip() == title
        elif inside and not (line.strip() and set(line.strip()) == {"-"}):
            found.append(line)
    return found


def literal_text(node):
    """The text a message node writes whatever its values: a string's, or an f-string's with ``{}`` for each value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(literal_text(part) if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return ""


def raised(function):
    """``[(exception name, the literal text of its message)]`` for every ``raise`` in `function`'s body."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            call = node.exc if isinstance(node.exc, ast.Call) else None
            name = ast.unparse(call.func if call else node.exc)
            found.append((name, literal_text(call.args[0]) if call and call.args else ""))
    return found


def names(text, candidates):
    """The `candidates` that `text` names as whole words."""
    return [name for name in candidates if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text)]


FUNCTIONS = public_functions()


@pytest.mark.parametrize("qualified", sorted(FUNCTIONS))
def test_every_exception_a_reference_raises_is_in_its_raises_section(qualified):
    function = FUNCTIONS[qualified]
    raises = section(function, "Raises")
    listed = {line.strip() for line in raises if line and not line[0].isspace()}
    described = " ".join(raises)
    parameters = list(inspect.signature(function).parameters)
    for exception, message in raised(function):
        assert exception in listed, (
            f"posenc_solutions/{qualified.replace('.', '.py: ', 1)} raises {exception} ({message!r}), which its "
            f"docstring's Raises section does not list: add {exception} and when it is raised")
        unnamed = [name for name in names(message, parameters) if not names(described, [name])]
        assert not unnamed, (
            f"posenc_solutions/{qualified.replace('.', '.py: ', 1)} raises {exception} for {', '.join(unnamed)} "
            f"({message!r}), but its Raises section does not name {' or '.join(f'`{n}`' for n in unnamed)}: "
            "say there when it is raised")


def integer_parameters(function):
    """The parameters `function`'s docstring documents as ``name : int`` (``int, optional`` and ``int or None``
    too)."""
    return [line.split(" : ")[0] for line in section(function, "Parameters") if re.match(r"^\w+ : int\b", line)]


def example_call(qualified):
    """The arguments of the first call to `qualified` in its docstring's examples, as a BoundArguments."""
    function = FUNCTIONS[qualified]
    recorded = []

    def recorder(*args, **kwargs):
        recorded.append(inspect.signature(function).bind(*args, **kwargs))
        return function(*args, **kwargs)

    namespace = dict(vars(inspect.getmodule(function)), **{function.__name__: recorder})
    with contextlib.redirect_stdout(io.StringIO()):
        for example in doctest.DocTestParser().get_examples(function.__doc__ or ""):
            exec(example.source, namespace)
    assert recorded, f"posenc_solutions/{qualified}: no example calls it; give its docstring one"
    return recorded[0]


INTEGER_ARGUMENTS = [pytest.param(qualified, parameter, id=f"{qualified}-{parameter}")
                     for qualified, function in sorted(FUNCTIONS.items()) for parameter in integer_parameters(function)]


def outcome(function, call, parameter, value):
    """What `function` does with `call`'s arguments and `parameter` set to `value`: the exception's class, or None."""
    arguments = inspect.BoundArguments(call.signature, dict(call.arguments, **{parameter: value}))
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            function(*arguments.args, **arguments.kwargs)
    except Exception as error:  # noqa: BLE001 - which one is what the test looks at
        return type(error)
    return None


@pytest.mark.parametrize("qualified, parameter", INTEGER_ARGUMENTS)
def test_an_integer_argument_that_is_no_size_is_refused_with_a_value_or_type_error(qualified, parameter):
    function = FUNCTIONS[qualified]
    call = example_call(qualified)
    checked = bool(names(" ".join(section(function, "Raises")), [parameter]))
    for value in NOT_SIZES:
        error = outcome(function, call, parameter, value)
        assert error in (None, ValueError, TypeError), (
            f"posenc_solutions/{qualified}({parameter}={value!r}) raises {error.__name__}: check `{parameter}` "
            "first and raise a ValueError naming it and what it may be")
        assert error is not None or not checked, (
            f"posenc_solutions/{qualified}({parameter}={value!r}) returns, though its Raises section says it "
            f"checks `{parameter}`: refuse {value!r} with a ValueError naming `{parameter}` and what it may be")


def test_the_checks_see_an_unlisted_raise_and_an_overflow():
    """The two tests can fail: a raise its docstring leaves out, and ``int(inf)``."""
    def unlisted(head_dim):
        """Parameters
        ----------
        head_dim : int

        Raises
        ------
        TypeError
            Never.
        """
        if int(head_dim) != head_dim:
            raise ValueError(f"head_dim must be an integer, got {head_dim!r}")

    assert raised(unlisted) == [("ValueError", "head_dim must be an integer, got {}")]
    assert {line.strip() for line in section(unlisted, "Raises") if line and not line[0].isspace()} == {"TypeError"}
    assert integer_parameters(unlisted) == ["head_dim"]
    call = inspect.signature(unlisted).bind(4)
    assert outcome(unlisted, call, "head_dim", math.inf) is OverflowError
