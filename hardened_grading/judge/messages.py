"""The trusted judge: test cells run in the grader's process, not in the student's kernel.

Student code and the checks used to share one kernel, so an answer could rebind ``check_close``,
patch ``np.allclose`` or ``np.sin``, or install an IPython hook that swallows errors or rewrites
the next cell. While grading, :class:`hardened_grading.preprocessors.execute.ResilientExecute` therefore runs each
test cell here instead, in a fresh namespace made of the released notebook's own setup cells
(``numpy``, ``math`` and the ``check_*`` helpers, all the grader's own objects). Every name the
test uses that it does not define is looked up in the kernel: a student's function becomes a
:class:`KernelFunction`, whose calls are carried out in the kernel by :mod:`hardened_grading.judge.agent`;
any other variable (a multiple-choice answer) is copied over as a value. Expected values and
comparisons never leave this process, so the only way to pass a test is to return right answers.

A round trip to the kernel costs about a millisecond, and a notebook's tests make some 170 calls.
So the calls a test cell makes when the answers are right (:func:`predicted_calls`) are asked of
the kernel in one batch first, and each real call takes its reply from the batch only when it is
exactly the predicted call; after the first call that differs, every call is asked on its own.
"""



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



def _one_line(error):
    ename = getattr(error, "student_type", type(error).__name__)
    if isinstance(error, AssertionError):
        return elide(error, 400) or "the check failed"
    return elide(f"{ename}: {error}", 400)
