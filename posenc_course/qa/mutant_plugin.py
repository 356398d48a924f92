"""A pytest plugin that puts one mutant in place of its reference function: ``--mutant=FILE``.

``make mutants`` runs the contract tests with ``-p posenc_course.qa.mutant_plugin --mutant=FILE``, where
FILE is JSON: ``{"module": ..., "function": ..., "source": ...}``. The mutant is defined in its module
of ``posenc_solutions`` (so the module's other functions call it) and re-exported from the package,
before any test module imports it.

Only the tests that can reach the mutant are run: those whose code or id names the function, or a
function of the package that calls it.
"""

import importlib
import inspect
import json
import re


def pytest_addoption(parser):
    parser.addoption("--mutant", metavar="FILE", help="JSON of a mutant to put in place of its reference function")


def _reaching(name):
    """`name` and every function of ``posenc_solutions`` that calls it, directly or not."""
    import posenc_solutions

    sources = {other: inspect.getsource(getattr(posenc_solutions, other)) for other in posenc_solutions.__all__
               if inspect.isfunction(getattr(posenc_solutions, other))}  # not the tables of exercises
    found, grew = {name}, True
    while grew:
        callers = {other for other, source in sources.items()
                   if any(re.search(rf"\b{re.escape(f)}\(", source) for f in found)}
        grew = not callers <= found
        found |= callers
    return found


def pytest_configure(config):
    path = config.getoption("--mutant")
    if not path:
        return
    mutant = json.loads(open(path).read())
    config.mutant_reaches = _reaching(mutant["function"])  # before the mutant is in: the reference's calls
    module = importlib.import_module(mutant["module"])
    exec(compile(mutant["source"], f"<mutant of {mutant['function']}>", "exec"), module.__dict__)
    package = importlib.import_module("posenc_solutions")
    setattr(package, mutant["function"], module.__dict__[mutant["function"]])


def pytest_collection_modifyitems(config, items):
    names = getattr(config, "mutant_reaches", None)
    if not names:
        return
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b")

    def reaches(item):
        function = getattr(item, "function", None)
        try:
            source = inspect.getsource(function) if function else ""
        except (OSError, TypeError):
            source = ""
        return bool(pattern.search(item.nodeid) or pattern.search(source))

    kept = [item for item in items if reaches(item)]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
