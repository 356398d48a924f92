"""make mutants' sample (posenc_course.qa.mutants.sample): every exercise in it, the rest shared as the mutants are."""

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from posenc_course.qa.mutants import _shares, sample


@dataclass(frozen=True)
class Mutant:
    exercise: str
    number: int


@given(st.lists(st.integers(1, 60), min_size=1, max_size=12), st.data())
def test_the_shares_add_up_give_one_each_and_never_more_than_there_are(counts, data):
    counts = {f"ex{i:02d}": count for i, count in enumerate(counts, 1)}
    size = data.draw(st.integers(len(counts), sum(counts.values())))
    shares = _shares(size, counts)
    assert sum(shares.values()) == size
    assert all(1 <= shares[name] <= count for name, count in counts.items()), (shares, counts)


def test_an_exercise_with_few_mutants_is_in_the_sample_beside_one_with_many():
    """Spread evenly over the whole list (every 25.5th), the 2 mutants of ex02 between 40 of ex01 and 60 of ex03
    were skipped."""
    mutants = ([Mutant("ex01", n) for n in range(40)] + [Mutant("ex02", n) for n in range(2)]
               + [Mutant("ex03", n) for n in range(60)])
    chosen = sample(mutants, 4)
    assert {m.exercise for m in chosen} == {"ex01", "ex02", "ex03"}, chosen
    assert chosen == sample(mutants, 4) and chosen == sorted(chosen, key=mutants.index), "the same, in order"
    assert [(m.exercise, m.number) for m in chosen] == [("ex01", 0), ("ex02", 0), ("ex03", 0), ("ex03", 30)], \
        "one each, the spare one to the exercise with most, spread over its list"
