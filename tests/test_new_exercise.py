"""An instructor adds an exercise the way authoring/README.md says, and nothing else needs editing.

In a clean copy of the repository: a reference function goes into ``posenc_solutions`` (a module of
its own, exported, listed in ``EXERCISES``) and an authoring block into ``authoring/exercises.md``.
Then the copy's own commands rebuild the notebook and the release, and ``posenc-check`` (nbgrader's
real autograde) grades the reference answers, the blank release and a wrong answer. No count, total
or maximum is typed anywhere, so none needs changing.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from .test_pythons import clean_copy

FUNCTION = '''"""Exercise 11: sliding-window attention."""

import numpy as np


def sliding_window_mask(query_positions, key_positions, window):
    """Which keys each query sees with a sliding window of `window` tokens (Mistral's local attention).

    Parameters
    ----------
    query_positions : array_like of int, shape (Lq,)
    key_positions : array_like of int, shape (Lk,)
    window : int
        How many of the latest positions, the query's own included, a query sees.

    Returns
    -------
    ndarray of bool, shape (Lq, Lk)
        True where ``0 <= q_i - k_j < window``.

    Examples
    --------
    >>> print(sliding_window_mask([3], [0, 1, 2, 3, 4], 2))
    [[False False  True  True False]]
    """
    offsets = np.subtract.outer(np.asarray(query_positions), np.asarray(key_positions))
    return (offsets >= 0) & (offsets < window)
'''

EXPORT = '''
from .window import sliding_window_mask  # noqa: E402

EXERCISES["ex11"] = ("sliding_window_mask",)
__all__ += ["sliding_window_mask"]
'''

BLOCK = '''
## Exercise 11 ★ Sliding-window attention (1 + 2 = 3 points)

Mistral's layers see only the latest $W$ positions: key $k_j$ is visible to query $q_i$ when
$0 \\le q_i - k_j < W$.

**Worked example.** $W = 2$, a query at position 3, keys $0, \\dots, 4$: it sees keys 2 and 3.

**Common mistake.** $q_i - k_j \\le W$, which lets in one key too many.

+++

**(a)** With $W = 4$, how many keys does a query at position 10 see, among keys $0, \\dots, 20$?
Set `ex11_keys_seen`.

```python solution ex11_keys_seen_answer
### BEGIN SOLUTION
ex11_keys_seen = 4
### END SOLUTION
```

```python tests ex11_keys_seen_test points=1
check_number(ex11_keys_seen, "int", "ex11_keys_seen")
### BEGIN HIDDEN TESTS
check_true(ex11_keys_seen == 4, "ex11_keys_seen: keys 7, 8, 9 and 10")
### END HIDDEN TESTS
```

+++

**(b)** Write `sliding_window_mask(query_positions, key_positions, window)`.

```python solution ex11_sliding_window_mask from=sliding_window_mask
```

```python tests ex11_sliding_window_mask_test points=2
check_equal(sliding_window_mask(np.array([3]), np.arange(5), 2), [[False, False, True, True, False]],
            "sliding_window_mask([3], keys 0..4, window=2)")
### BEGIN HIDDEN TESTS
got = check_inputs_unchanged(sliding_window_mask, np.array([10, 2]), np.arange(12), 4, what="sliding_window_mask")
check_equal(got, [[False] * 7 + [True] * 4 + [False], [True] * 3 + [False] * 9],
            "sliding_window_mask(queries [10, 2], keys 0..11, window=4)")
### END HIDDEN TESTS
```

+++

'''

WRONG = '''
def sliding_window_mask(query_positions, key_positions, window):
    offsets = np.subtract.outer(np.asarray(query_positions), np.asarray(key_positions))
    return (offsets >= 0) & (offsets <= window)
'''


def run(copy, *args, timeout=600):
    # The copy's packages come first on sys.path, ahead of the editable install of this repository.
    env = {**os.environ, "PYTHONPATH": str(copy), "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the repository with exercise 11 added, rebuilt and released by its own commands."""
    copy = clean_copy(tmp_path_factory.mktemp("new-exercise") / "posenc")
    (copy / "posenc_solutions" / "window.py").write_text(FUNCTION)
    with open(copy / "posenc_solutions" / "__init__.py", "a") as init:
        init.write(EXPORT)
    spec = copy / "authoring" / "exercises.md"
    text = spec.read_text()
    assert text.count("**You are done.**") == 1
    spec.write_text(text.replace("**You are done.**", BLOCK.lstrip("\n") + "**You are done.**"))
    for step in (["-m", "posenc_course.authoring.notebook"], ["-m", "nbgrader", "generate_assignment", "posenc", "--force"]):
        done = run(copy, *step)
        assert done.returncode == 0, f"{step}: {done.stdout}\n{done.stderr}"
    return copy


def grade(course, name, functions=None, answers=True):
    notebook = course / f"{name}.ipynb"
    made = run(course, "-c", textwrap.dedent(f"""
        import sys, nbformat
        from posenc_course.submissions import make_submission, reference_answers
        answers = reference_answers() if {answers!r} else None
        nbformat.write(make_submission(answers, {functions!r}), sys.argv[1])
    """), str(notebook))
    assert made.returncode == 0, made.stderr
    checked = run(course, "-m", "posenc_course.student.check", str(notebook), "--json")
    assert checked.stdout.strip(), checked.stderr
    return checked.returncode, json.loads(checked.stdout)


def test_the_new_exercise_is_in_the_release_with_its_points(course):
    import nbformat

    release = nbformat.read(course / "release" / "posenc" / "exercises.ipynb", as_version=4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in release.cells]
    assert "ex11_sliding_window_mask" in ids and "ex11_sliding_window_mask_test" in ids
    stub = next(c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex11_sliding_window_mask")
    assert 'raise NotImplementedError("not answered yet' in stub.source and "offsets <" not in stub.source


def test_the_reference_gets_full_marks_the_new_exercise_included(course):
    code, scores = grade(course, "reference")
    assert code == 0 and scores["score"] == scores["max_score"]
    assert (scores["exercises"]["ex11"]["score"], scores["exercises"]["ex11"]["max_score"]) == (3, 3)


def test_the_blank_release_gets_0(course):
    code, scores = grade(course, "blank", answers=False)
    assert code == 1 and scores["score"] == 0 and scores["exercises"]["ex11"]["max_score"] == 3


def test_a_wrong_answer_is_docked_in_the_new_exercise_only(course):
    code, scores = grade(course, "wrong", {"sliding_window_mask": WRONG})
    assert code == 1
    # the concept point, and a share of the function's cell for the checks the wrong mask still passes
    assert 1 <= scores["exercises"]["ex11"]["score"] < 3 and scores["exercises"]["ex11"]["max_score"] == 3
    assert all(s["score"] == s["max_score"] for ex, s in scores["exercises"].items() if ex != "ex11")
