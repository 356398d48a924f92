"""Messages shortened for a person: on one line, cut between words, a check's "expected" and "got" parts kept.

:func:`elide` is the one way the engine, and a course that uses it, shortens what a person reads (a check's
message, an error, a reason). Its functions use nothing but Python itself, so that a notebook's own cell may carry
their source (:data:`SOURCE`).
"""

import ast
import inspect
import itertools
import re


def elide(text, limit):
    """`text` on one line, at most `limit` characters, cut between words.

    A check's message ``what: expected X got Y`` keeps its labels "expected" and "got": each of what it tried,
    X and Y is cut on its own as needed, the shorter ones whole (:func:`_shares`). Any other long text keeps its
    start and its end around " ... ".

    Parameters
    ----------
    text : object
        The message; its ``str``, its runs of blank space (new lines too) made one space.
    limit : int
        The most characters shown.

    Returns
    -------
    str
        The message, whole when it fits. A word is cut only when a single word is longer than the room left for it.
    """
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    pieces = _labelled_pieces(text)
    room = limit - sum(len(label) for label, _ in pieces)
    if len(pieces) == 1 or room < 12 * len(pieces):
        return _cut(text, limit)
    lengths = [len(piece) for _, piece in pieces]
    shares = _shares(lengths, room, _first_word_length(pieces[0][1]) + 4)
    shown = [label + (_start(piece, share) if index == 0 and not label else _cut(piece, share))
             for index, ((label, piece), share) in enumerate(zip(pieces, shares))]
    return "".join(shown)


def _labelled_pieces(text):
    """``[(label, piece), ...]`` of a one-line `text`: ``what: expected X got Y`` gives ``[("", "what:"),
    (" expected ", "X"), (" got ", "Y")]`` (the last "got", and the last "expected" before it); a text with
    neither is one piece."""
    head, got_label, got = text.rpartition(" got ")
    if not (got_label and head):
        return [("", text)]
    expected = None
    for expected in re.finditer(r"(?:^|\s)expected\s", head):
        pass
    if expected is None:
        return [("", head), (got_label, got)]
    what, value = head[:expected.start()], head[expected.end():]
    first = [("", what), (" expected ", value)] if what else [("expected ", value)]
    return first + [(got_label, got)]


def _shares(lengths, room, first=0):
    """The characters each of pieces of `lengths` may keep, `room` in all: each piece shorter than an equal share
    whole, the rest shared equally among the longer ones; the first piece at least `first` (what a check tried:
    its first word and " ..."), taken from the largest shares."""
    shares, left = [0] * len(lengths), room
    order = sorted(range(len(lengths)), key=lambda index: lengths[index])
    for done, index in enumerate(order):
        shares[index] = min(lengths[index], left // (len(lengths) - done))
        left -= shares[index]
    while shares[0] < min(first, lengths[0]) and max(shares[1:], default=0) > 0:
        largest = max(range(1, len(shares)), key=lambda index: shares[index])
        shares[largest] -= 1
        shares[0] += 1
    return shares


def _first_word_length(text):
    """The length of the first word of `text`: what a check tried keeps at least that."""
    return len(text.split(" ", 1)[0])


def _cut(text, limit):
    """`text` in at most `limit` characters: its start and its end (a third) around " ... ", each cut between
    words, so that no word or number of an array is cut in two; its start alone, with " ...", when the room for
    either is smaller than a word; a word longer than `limit` is cut anyway."""
    if len(text) <= limit:
        return text
    head = _words_from_start(text, limit - limit // 3 - 5)
    end = _words_from_end(text, limit - len(head) - 5) if head else ""
    return f"{head} ... {end}" if end else _start(text, limit)


def _start(text, limit):
    """`text`, or its start and " ..." in at most `limit` characters, cut between words (a first word longer than
    the room is cut)."""
    if len(text) <= limit:
        return text
    return (_words_from_start(text, limit - 4) or text[:max(limit - 4, 0)]) + " ..."


def _words_from_start(text, size):
    """The whole words that start `text` in at most `size` characters ("" when its first word is longer)."""
    if size <= 0:
        return ""
    if len(text) <= size or text[size] == " ":
        return text[:size].rstrip()
    return text[:size].rpartition(" ")[0].rstrip()


def _words_from_end(text, size):
    """The whole words that end `text` in at most `size` characters ("" when its last word is longer)."""
    if size <= 0:
        return ""
    if len(text) <= size or text[-size - 1] == " ":
        return text[-size:].lstrip()
    return text[-size:].partition(" ")[2].lstrip()


def repeated_together(failed, alike=None):
    """The failed checks `failed`, in order, in groups: consecutive checks of one test cell, both hidden or both
    visible, with the same message, are one group (a stub's "not run, because an earlier step failed", an endless
    loop's "not run: ..." of each check after it), said once with how many checks it stands for.

    Parameters
    ----------
    failed : list
        Failed checks: dicts with ``test`` (its test cell's grade id), ``hidden`` and ``message`` (as it is shown:
        a group is of messages a person would read as the same line).
    alike : callable or None
        ``alike(check)``: what checks of one group share; None: ``test``, ``hidden`` and ``message`` of a dict.

    Returns
    -------
    list of list
        The groups, in order; one check alone is a group of one.
    """
    alike = alike or (lambda check: (check.get("test"), check.get("hidden"), check.get("message")))
    return [list(group) for _, group in itertools.groupby(failed, key=alike)]


def counted(count, noun):
    """`count` and `noun`, plural only when `count` is not 1: ``1 check``, ``2 checks``, ``0 checks``.

    Parameters
    ----------
    count : int
        How many.
    noun : str
        The noun in the singular; its plural adds an "s".

    Returns
    -------
    str
    """
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _one_line(error):
    ename = getattr(error, "student_type", type(error).__name__)
    if isinstance(error, AssertionError):
        return elide(error, 400) or "the check failed"
    return elide(f"{ename}: {error}", 400)


def _code_of(function):
    """The source of `function` without its docstring: what a notebook's cell carries of it."""
    lines = inspect.getsource(function).splitlines()
    body = ast.parse("\n".join(lines)).body[0].body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        del lines[body[0].lineno - 1:body[0].end_lineno]
    return "\n".join(lines) + "\n"


#: The code of :func:`elide` and the functions it uses (``import re`` first, no docstrings), for a notebook cell
#: that cannot import the engine (a course's progress cell): run, it defines ``elide``.
SOURCE = "import re\n\n\n" + "\n\n".join(_code_of(function) for function in (
    elide, _labelled_pieces, _shares, _first_word_length, _cut, _start, _words_from_start, _words_from_end))
