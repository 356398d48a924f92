"""Why a name a test needs is not defined: an answer cell that defines it does not compile.

A test cell that calls ``f`` when the student's answer cell ``def f(...): x = (`` has a syntax error fails with
``NameError: name 'f' is not defined``: true, but it sends the student to look for a cell they did not run or a
name they misspelt, when the cell above ran and failed. The judge reads the notebook's answer cells (nbgrader's
solution cells, :func:`hardened_grading.cells.is_answer_cell`: nothing of a course) and says which of them defines
the name and where its syntax error is (:func:`explain_name_error`).
"""

import re

from ..cells import grade_id, is_answer_cell

#: What a cell defines at its top level, read from its text (a cell that does not compile has no syntax tree):
#: ``def NAME(``, ``async def NAME(``, ``class NAME`` and ``NAME = ...`` (``NAME: type = ...``) at a line's start.
_DEFINED = re.compile(r"^(?:(?:async[ \t]+)?def[ \t]+(?P<function>[A-Za-z_]\w*)[ \t]*\("
                      r"|class[ \t]+(?P<class>[A-Za-z_]\w*)\b"
                      r"|(?P<value>[A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=))", re.M)

#: The attribute of a NameError already explained (the judge may see one error twice: in a check, then its cell).
EXPLAINED = "__hardened_grading_explained__"


def defined_names(source):
    """The names a cell's `source` defines at its top level, read from its text, in order.

    Parameters
    ----------
    source : str
        A code cell's source, which need not compile.

    Returns
    -------
    list of str
        ``def NAME(``, ``class NAME`` and ``NAME =`` at the start of a line.

    Examples
    --------
    >>> defined_names("import numpy as np\\nX = 3\\ndef f(a):\\n    y = (\\n")
    ['X', 'f']
    """
    return [next(name for name in match.groups() if name) for match in _DEFINED.finditer(source)]


def syntax_problem(source):
    """The syntax error of a cell's `source`, as IPython would compile it (magics allowed), or None.

    Parameters
    ----------
    source : str
        A code cell's source.

    Returns
    -------
    SyntaxError or None
        The error ``compile`` raises, its ``lineno`` the cell's line; None when the cell compiles.
    """
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        code = TransformerManager().transform_cell(source)
    except Exception:  # IPython missing, or a cell it cannot transform: compiled as plain Python
        code = source
    try:
        compile(code, "<cell>", "exec")
    except SyntaxError as error:
        return error
    except (ValueError, OverflowError):  # a null byte, a literal too large: not the student's syntax to fix here
        return None
    return None


def broken_answers(cells):
    """``{name: reason}``: the names the answer cells of `cells` define in a cell that does not compile.

    A later answer cell that defines a name and compiles takes it back (the name is then defined, or missing
    for another reason).

    Parameters
    ----------
    cells : list
        Notebook cells (nbformat), in order: those run before the test cell.

    Returns
    -------
    dict
        Each name's reason, as a student reads it after the NameError: which cell, its line and Python's
        message, and what to do.
    """
    found = {}
    for cell in cells:
        if not is_answer_cell(cell):
            continue
        names = defined_names(cell.source)
        problem = syntax_problem(cell.source) if names else None
        for name in names:
            if problem is None:
                found.pop(name, None)
            else:
                found[name] = _reason(cell, problem)
    return found


def syntax_error_words(problem):
    """How a student reads the SyntaxError `problem`: ``a syntax error (line 3: '(' was never closed)``, its line
    the cell's."""
    where = f"line {problem.lineno}: " if problem.lineno else ""
    return f"a syntax error ({where}{problem.msg})"


def _reason(cell, problem):
    """What a student reads of the answer `cell` whose syntax error is `problem`."""
    which = f"the answer cell {grade_id(cell)}" if grade_id(cell) else "the answer cell"
    return (f"{which}, which defines it, has {syntax_error_words(problem)}, so it never ran: fix that cell and run "
            "it again")


def explain_name_error(error, cells):
    """Add to the NameError `error` why its name is not defined, when an answer cell of `cells` that defines it
    does not compile (:func:`broken_answers`); any other error is left as it is.

    Parameters
    ----------
    error : BaseException
        What a test cell raised.
    cells : list
        The notebook's cells run before the test cell.

    Returns
    -------
    BaseException
        `error`, its message extended at most once.
    """
    name = getattr(error, "name", None)
    if not isinstance(error, NameError) or not name or getattr(error, EXPLAINED, False) \
            or len(error.args) != 1 or not cells:
        return error
    reason = broken_answers(cells).get(name)
    if reason:
        error.args = (f"{error.args[0]}: {reason}",)
        setattr(error, EXPLAINED, True)
    return error
