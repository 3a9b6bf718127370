"""Properties of the IR's rules (``fuzzer.program.ir.check``).

- every program the generator makes passes ``check``, with any set of features;
- every program ``check`` accepts renders and runs eagerly on cpu.

The last is the claim that makes ``check`` worth having: its candidates are programs
``check`` may well reject (a statement dropped or moved without repair), so a rule
missing from ``check`` shows as a
program it accepts that eager torch refuses.  Examples are derandomized and few, so a
run is the same everywhere and cheap; no Inductor compile (the fast tier).
"""

import dataclasses

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fuzzer.judge.execute import run_eager
from fuzzer.program import codegen
from fuzzer.program import features as feats
from fuzzer.program.generate import generate
from fuzzer.program.ir import Case, InvalidProgram, check

#: derandomized: the same examples on every run, so CI reads the same each time
PROPERTY = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
#: eager runs cost a fraction of a second each: fewer of them
RUNS = settings(PROPERTY, max_examples=40)

seeds = st.integers(min_value=0, max_value=2**62)
#: no features, all of them at their weights, or a set of them switched on for certain
features = st.one_of(st.just(feats.NONE), st.just(feats.ALL),
                     st.sets(st.sampled_from([f.name for f in feats.FEATURES]), min_size=1)
                     .map(lambda names: {name: 1.0 for name in names}))


@PROPERTY
@given(seeds, features)
def test_every_generated_program_passes_check(seed, table):
    case = generate(seed, features=table)
    check(case.program)
    case.validate()


def _drop(case: Case, k: int) -> Case:
    """Statement ``k`` from the end gone and nothing repaired: what read it, a statement
    or the outputs, may read nothing now (a late statement's value is more often read
    by the outputs alone)."""
    body = list(case.program.body)
    del body[len(body) - 1 - k % len(body)]
    return dataclasses.replace(case, program=dataclasses.replace(case.program, body=tuple(body)))


def _move(case: Case, k: int, j: int) -> Case:
    """Statement ``k`` moved to position ``j``: it may now read a value before it is defined,
    or write one another statement reads."""
    body = list(case.program.body)
    stmt = body.pop(k % len(body))
    body.insert(j % (len(body) + 1), stmt)
    return dataclasses.replace(case, program=dataclasses.replace(case.program, body=tuple(body)))


@st.composite
def candidates(draw) -> Case | None:
    """A generated case, or one edited without regard to the IR's rules."""
    table = draw(features)
    case = generate(draw(seeds), features=table)
    edit = draw(st.sampled_from(["none", "drop", "move"]))
    if edit != "none" and case.program.body:
        if edit == "drop":
            case = _drop(case, draw(st.integers(0, 3)))
        else:
            case = _move(case, draw(st.integers(0, 99)), draw(st.integers(0, 99)))
    # one binding is enough to show a program eager torch refuses, and keeps it cheap
    return None if case is None else dataclasses.replace(case, bindings=case.bindings[:1])


@RUNS
@given(candidates())
def test_every_program_check_accepts_renders_and_runs_eagerly(case):
    if case is None:
        return
    try:
        case.validate()
    except InvalidProgram:
        event("check refused it")
        return  # the claim is about the programs it accepts
    event("check accepted it")
    assert codegen.source(case.program)
    for br in run_eager(case, "cpu"):
        assert br.eager.failure is None, (br.binding, br.eager.failure.traceback)
