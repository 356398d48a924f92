"""The rubric of the automatic points: what a mistake that an exercise names must cost.

Each exercise of an authoring file may end its reading with a list of the mistakes it warns about::

    **Common mistakes.**

    - The sign: $k_j - q_i$ flips everything.
    - `<` instead of `<=`: a token must see itself.

Each item is a *named mistake*. A student who makes one after being warned by name has missed one of the few
lessons of the exercise, so it costs at least :func:`least_share` of the points of the function it is made in
(its test cell's points), in its own exercise only: a quarter, or an equal part where the function names more
than four. The test cells reach that with ``# weight N`` beside the checks that catch it (authoring/README.md:
*Weighing the checks*). ``tests/`` holds each named mistake as a wrong answer and measures what it costs
(tests/helpers/named_mistakes.py); the table of the docs (``make mistakes-table``) is that measure.
"""

import itertools
import re

#: The share of its function's points that a named mistake costs at least: a quarter (:func:`least_share`). A
#: function's test cell usually names two to four mistakes; at a quarter each, every one of them is felt (a student
#: who makes one sees a quarter of the function gone, not 3% of it), and two named mistakes together still leave the
#: credit of what was right.
NAMED_MISTAKE_SHARE = 0.25


def least_share(named):
    """The share of its function's points that each of a function's `named` mistakes costs at least: a quarter,
    or an equal part, ``1 / named``, for a function that names more than four (nine mistakes caught by checks
    apart cannot each cost a quarter of one function).

    Examples
    --------
    >>> least_share(2), least_share(4), least_share(8)
    (0.25, 0.25, 0.125)
    """
    return min(NAMED_MISTAKE_SHARE, 1 / named)


#: The heading of an exercise in an authoring file: ``## Exercise 3 ★ Title (1 + 2 = 3 points)``.
EXERCISE_HEADING = re.compile(r"^## Exercise (\d+)\b", re.M)
#: The line that opens a list of named mistakes.
MISTAKES_HEADING = re.compile(r"^\*\*Common mistakes?\.\*\*", re.M)


def named_mistakes(spec_text):
    """``{exercise: [named mistake, ...]}`` of an authoring file: each item of each exercise's *Common mistakes*
    list, as one line of text, in order: the list right after the paragraph that the heading opens. An exercise
    whose paragraph has no list has an empty one; an exercise without the paragraph is left out.

    Examples
    --------
    >>> spec = '''## Exercise 3 ★ Masks
    ... **Common mistakes.** Two, in one exercise.
    ...
    ... - The sign: $k_j - q_i$
    ...   flips everything.
    ... - `<` instead of `<=`.
    ...
    ... **(a)** The question.
    ... '''
    >>> named_mistakes(spec)
    {'ex03': ['The sign: $k_j - q_i$ flips everything.', '`<` instead of `<=`.']}
    """
    found = {}
    headings = list(EXERCISE_HEADING.finditer(spec_text))
    for heading, following in zip(headings, headings[1:] + [None]):
        section = spec_text[heading.end():following.start() if following else len(spec_text)]
        exercise = f"ex{int(heading.group(1)):02d}"
        for opening in MISTAKES_HEADING.finditer(section):
            found.setdefault(exercise, []).extend(_items(section[opening.end():]))
    return found


def _items(text):
    """The items of the markdown list that follows the rest of the heading's paragraph in `text`, each on one line
    (none if a blank line and the list do not follow it)."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if not line.strip()), len(lines))  # the paragraph's end
    start = next((n for n in range(start, len(lines)) if lines[n].strip()), len(lines))  # past the blank lines
    items = []
    for line in lines[start:]:
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
        else:
            break
    return items


def costs_table(rows):
    """The docs' tables of named mistakes (markdown), one per assignment, from measured `rows`: ``(assignment,
    exercise, function, named mistake, wrong answer's label, points lost in the exercise, the function's points,
    the least share)``, in order. A mistake is shown by its first sentence.

    Examples
    --------
    >>> print(costs_table([("posenc", "ex03", "causal_mask", "`<` instead of `<=`. A token sees itself.",
    ...                     "strict_causal", 0.67, 2.0, 0.25)]))
    ## posenc
    <BLANKLINE>
    | Exercise | Named mistake | Function (its points) | Costs | At least | Wrong answer in `tests/` |
    |---|---|---|---|---|---|
    | ex03 | `<` instead of `<=`. | `causal_mask` (2) | 0.67 (34%) | 25% | `strict_causal` |
    <BLANKLINE>
    """
    lines = []
    for assignment, group in itertools.groupby(rows, key=lambda row: row[0]):
        lines += [f"## {assignment}", "",
                  "| Exercise | Named mistake | Function (its points) | Costs | At least | Wrong answer in `tests/` |",
                  "|---|---|---|---|---|---|"]
        for _, exercise, function, mistake, label, lost, points, share in group:
            mistake = first_sentence(mistake).replace("|", "\\|")
            lines.append(f"| {exercise} | {mistake} | `{function}` ({points:g}) | {lost:.2f} ({lost / points:.0%}) | "
                         f"{share:.0%} | `{label}` |")
        lines.append("")
    return "\n".join(lines)


def first_sentence(text):
    """`text` up to the end of its first sentence (a full stop before a capital letter).

    Examples
    --------
    >>> first_sentence("The sign: $k_j - q_i$ flips everything. Only symmetric examples hide it.")
    'The sign: $k_j - q_i$ flips everything.'
    """
    return re.split(r"(?<=\.)\s+(?=[A-Z])", text, maxsplit=1)[0]
