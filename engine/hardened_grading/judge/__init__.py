"""The trusted judge: test cells run in the grader's process, not in the student's kernel.

- :mod:`.setup`: the namespace a test cell runs in (the release's set-up cells), the student's functions as
  :class:`~.setup.KernelFunction`, and the calls a test will make (predicted, asked in one batch);
- :mod:`.checks`: partial credit, each check of a test cell routed and weighed;
- :mod:`.judge`: :class:`~.judge.Judge`, one test cell judged;
- :mod:`.messages`: messages shortened for a person;
- :mod:`.syntax`: why a name a test needs is not defined: an answer cell that defines it does not compile;
- :mod:`.agent`: the kernel's side, sent into the kernel as source;
- :mod:`.link`: the link between the two, one judged test cell and the requests it makes;
- :mod:`.magics`: IPython's syntax in the cells the judge runs.

Old names of ``hardened_grading.judge`` (a module until 2026-11) are still found here, with a warning
(:mod:`hardened_grading.moved`).
"""


def __getattr__(name):
    import importlib.util

    if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a module of this package, not yet imported:
        raise AttributeError(name)  # the import system imports it (``from hardened_grading.judge import agent``)
    from ..moved import old_attribute

    return old_attribute("judge", name)
