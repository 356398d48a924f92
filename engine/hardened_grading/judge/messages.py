"""Messages shortened for a person: elided in the middle, cut at a word, one line."""


def elide(text, limit):
    """`text` on one line, at most `limit` characters. A check's message "... expected X got Y" keeps
    both parts, each cut in its middle as needed; any other long text keeps its start and its end."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    head, sep, got = text.rpartition(" got ")
    if not (sep and head) or limit < 40:
        return _cut(text, limit)
    room = limit - len(sep)
    for_head = max(min(len(head), room // 2), room - len(got))
    return _cut(head, for_head) + sep + _cut(got, room - for_head)


def _cut(text, limit):
    """`text` in at most `limit` characters: its start and its end around " ... ", each cut at a space, so
    that no number of an array is cut in two (a word longer than a third of `limit` is cut anyway)."""
    if len(text) <= limit:
        return text
    tail = limit // 3
    head, end = text[:limit - tail - 5], text[-tail:]
    if not text[len(head)].isspace() and " " in head[len(head) // 2:]:
        head = head[:head.rindex(" ")]
    if not text[-tail - 1].isspace() and " " in end[:len(end) // 2]:
        end = end[end.index(" ") + 1:]
    return head.rstrip() + " ... " + end.lstrip()


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
