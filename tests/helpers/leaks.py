"""What a student may read, and the concept answers it must never hold: the concept questions of each graded
assignment, their answers read from the source notebook, the check that finds one in a text, and submissions
judged in this process with the feedback made of them. tests/grading/test_leaks.py proves the feedback leaks no
answer with these; tests/grading/test_feedback.py and tests/grading/test_check.py use them on real runs."""

import ast
import contextlib
import functools
import io
import json
import math
import re

import nbformat
import numpy as np

from hardened_grading.judge import agent
from hardened_grading.judge import checks as judge_checks
from hardened_grading.judge import judge
from hardened_grading.judge import setup as judge_setup
from hardened_grading.judge.link import record_verdict
from posenc_course.layout import grade_id, is_answer_cell, is_test_cell, release_notebook, source_notebook

from . import advanced_answers, current_answers, wrong_solutions

#: Each graded assignment's tables of wrong answers (tests/helpers/wrong_solutions.py and the packages of the later ones).
ANSWER_TABLES = {"posenc": wrong_solutions, "posenc-advanced": advanced_answers, "posenc-current": current_answers}

CONCEPT = re.compile(r"^(ex\d\d_\w+)_answer$")


# The concept questions and what a student may read --------------------------------------------------

@functools.lru_cache(maxsize=None)
def concept_answers(assignment):
    """``{name: reference value}`` of every concept question, from the source notebook's answer cells."""
    notebook = nbformat.read(source_notebook(assignment), as_version=4)
    setup = judge_setup.setup_namespace(notebook)
    answers = {}
    for cell in notebook.cells:
        match = CONCEPT.match(grade_id(cell) or "")
        if is_answer_cell(cell) and match:
            namespace = dict(setup)
            exec(judge_free(cell.source), namespace)
            answers[match.group(1)] = namespace[match.group(1)]
    return answers


def judge_free(source):
    """An answer cell's code without its solution markers."""
    return re.sub(r"^\s*### (BEGIN|END) SOLUTION\s*$", "", source, flags=re.M)


@functools.lru_cache(maxsize=None)
def choices_of(assignment):
    """``{name: [choices]}`` of the multiple-choice questions, read from their visible ``check_choice``."""
    found = {}
    for cell in nbformat.read(release_notebook(assignment), as_version=4).cells:
        if is_test_cell(cell) and "check_choice(" in cell.source:
            tree = ast.parse(cell.source)
            constants = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
                         if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check_choice":
                    name, choices = node.args[0].id, node.args[1]
                    found[name] = (constants[choices.id] if isinstance(choices, ast.Name)
                                   else ast.literal_eval(choices))
    return found


def spellings(value):
    """The ways a message could write `value`: ``2359296``, ``2,359,296``; ``6283``, ``6283.2``; ``[4, 3, 2, 0]``."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, (list, tuple)):
        items = [str(int(v)) for v in value]
        return {", ".join(items), " ".join(items), ",".join(items)}
    if float(value).is_integer():
        number = int(value)
        return {str(number), f"{number:,}", f"{number:_}".replace("_", " "), f"{number:.1f}"}
    found = {f"{value:.{digits}g}" for digits in range(3, 8)} | {f"{value:.{places}f}" for places in range(1, 5)}
    if abs(value) >= 100:
        found.add(str(round(value)))
    return {text for text in found if len(text.strip("0.-")) >= 2}


def leaks(message, name, value, choices, own):
    """The spellings of `value`, the answer of `name`, that `message` shows. A message of the question's own
    checks (`own`) must show none; any other message none that cannot be chance (three digits or more, a
    list, a choice's words)."""
    found = []
    for text in spellings(value):
        if isinstance(value, str):
            if text in message and not all(choice in message for choice in choices.get(name, [])):
                found.append(text)  # a message that lists all the choices singles none out
            continue
        distinctive = isinstance(value, (list, tuple)) or len(re.sub(r"\D", "", text)) >= 3
        if (own or distinctive) and re.search(rf"(?<![\w.]){re.escape(text)}(?![\w]|\.\d)", message):
            found.append(text)
    return found


def assert_no_answer_in(texts, assignment, context):
    """`texts`: ``[(test cell grade id, text a student reads)]``."""
    answers, choices = concept_answers(assignment), choices_of(assignment)
    shown = [(test, name, leaks(text, name, value, choices, test.startswith(name + "_")), text)
             for test, text in texts for name, value in answers.items()]
    shown = [(test, name, found, text[:200]) for test, name, found, text in shown if found]
    assert not shown, f"{context}: {len(shown)} answers shown, for example {shown[:3]}"



# Submissions, judged here -----------------------------------------------------------------------------

def wrong_concepts(assignment):
    """``{name: a wrong answer}``: the test tables' realistic ones, else one made from the reference."""
    tables = ANSWER_TABLES[assignment].WRONG_CONCEPTS
    wrong = {}
    for _, codes in tables.values():
        for code in codes.values():
            namespace = {"math": math, "np": np}
            exec(code, namespace)
            wrong.update({k: v for k, v in namespace.items() if CONCEPT.match(k + "_answer") and k not in wrong})
    choices = choices_of(assignment)
    for name, value in concept_answers(assignment).items():
        if name in wrong:
            continue
        if isinstance(value, str):
            wrong[name] = next(choice for choice in choices[name] if choice != value)
        elif isinstance(value, (list, tuple)):
            wrong[name] = list(reversed(value))
        else:
            wrong[name] = type(value)(value * 3 + 7)
    return wrong


def wrong_functions(assignment):
    """``{function: code}``: the first realistic mistake of each function in the test tables."""
    table = ANSWER_TABLES[assignment].WRONG
    functions = {}
    for _, codes in table.values():
        for name, code in codes.items():
            functions.setdefault(name, code)
    return functions


def kernel_namespace(assignment, kind):
    """The names a submission of `kind` ("blank", "wrong", "partly") defines, as its kernel would hold them."""
    source = nbformat.read(source_notebook(assignment), as_version=4)
    release = nbformat.read(release_notebook(assignment), as_version=4)
    namespace = dict(judge_setup.setup_namespace(source))

    def run(cells):
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in cells:
                exec(judge_free(cell.source), namespace)

    reference = [cell for cell in source.cells if is_answer_cell(cell)]
    stubs = [cell for cell in release.cells if is_answer_cell(cell)]
    concepts, wrong = sorted(concept_answers(assignment)), wrong_concepts(assignment)
    if kind == "blank":
        run(stubs)
    elif kind == "wrong":
        run(reference)
        for code in wrong_functions(assignment).values():
            run([nbformat.v4.new_code_cell(code)])
        namespace.update(wrong)
    else:  # the first half of the exercises done; of the concept questions, a third right, wrong, blank
        half = len(stubs) // 2
        run(reference[:half] + stubs[half:])
        for number, name in enumerate(concepts):
            namespace[name] = [namespace.get(name), wrong[name], ...][number % 3]
    return namespace


@functools.lru_cache(maxsize=None)
def judged(assignment, kind):
    """``[(test cell, its error output or None, its checks)]`` of a `kind` submission, judged here."""
    source = nbformat.read(source_notebook(assignment), as_version=4)
    setup, functions = judge_setup.setup_namespace(source), judge_setup.answer_functions(source)
    namespace = kernel_namespace(assignment, kind)
    results = []
    for cell in source.cells:
        if is_test_cell(cell):
            the_judge = judge.Judge(lambda request: json.loads(agent.answer_text(
                json.dumps(request), namespace, the_judge.answer_callback)))
            _, error = the_judge.run(cell.source, setup, judge_setup.cell_label(grade_id(cell)), functions)
            results.append((cell, error, [check.as_dict() for check in the_judge.checks]))
    return results



def graded_notebook(assignment, results):
    """The source notebook as autograde leaves it: each test cell with the outputs, checks and score
    that the grader gives it (:func:`hardened_grading.judge.link.record_verdict`)."""
    notebook = nbformat.read(source_notebook(assignment), as_version=4)
    by_id = {grade_id(cell): (error, checks) for cell, error, checks in results}
    for cell in notebook.cells:
        if is_test_cell(cell):
            error, checks = by_id[grade_id(cell)]
            cell.outputs = []
            record_verdict(cell, [judge_checks.Check(**check) for check in checks], "", error)
    return notebook


def feedback_texts(notebook, resources):
    """``[(test cell, text)]`` of what the feedback shows that a grader wrote: the summary, each test
    cell's note on its hidden tests, and each of its outputs."""
    texts = [("summary", re.sub(r"<[^>]+>", " ", resources["hardened_grading"]["summary_html"]))]
    for cell in notebook.cells:
        if is_test_cell(cell):
            texts += [(grade_id(cell), line) for line in cell.source.splitlines() if line.startswith("#")]
            for output in cell.get("outputs", []):
                parts = [output.get("text", ""), output.get("evalue", ""), *output.get("traceback", []),
                         output.get("data", {}).get("text/plain", "")]
                texts.append((grade_id(cell), " ".join(map(str, parts))))
    return [(test, re.sub(r"hidden tests: \d+ checks?, \d+ passed|\d+ of \d+ checks passed: [\d.]+ of [\d.]+ points"
                          r"|\(lines? \d+(?:, \d+)*\)|\(\d+ (?:hidden )?checks\)|^[\d.]+$", "", text))
            for test, text in texts]
