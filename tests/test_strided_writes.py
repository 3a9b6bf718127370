"""Aten writes through an ``as_strided`` (``fuzzer.program.strided_writes``): refused of a
view, as functionalization refuses them in compile, and taken of a window or alias input
whose storage's other inputs the program never reads, a graph input of its own; the
generator draws such writes and never reads those inputs after; torch's ban met there
anyway is untested (STRIDED CHAIN LIMITS)."""

import dataclasses

import pytest
from helpers import prog

from fuzzer.judge import contract
from fuzzer.judge.observe import Failure, Run
from fuzzer.judge.trial import asks_of
from fuzzer.program import features, windows
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check
from fuzzer.program.strided_writes import LateStrided


def _box(pieces, order=(0, 1), base=("s0", "s1")):
    return {"base": list(base), "pieces": list(pieces), "order": list(order)}


def _lone(body, kinds=("drop_last",), aliases=()):
    """``x0`` of ``(s0, s1)`` with a window per kind along dim 0 (``x2``, ``x3``), and ``x1``."""
    inputs, wins = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}, []
    for kind in kinds:
        name = f"x{len(inputs)}"
        inputs[name] = windows.dims_of(("s0", "s1"), 0, kind)
        wins.append((name, "x0", 0, kind))
    p = prog(inputs, body)
    return dataclasses.replace(p, symbols=("s0", "s1"), sym_min={"s0": 2, "s1": 1},
                               mode=Mode(windows=tuple(wins), aliases=tuple(aliases)))


#: an as_strided of window ``x2`` (a box of its base's storage), written by aten
LONE_WRITE = [("as_strided_fn", ["x2"], "v0", _box(["head", "all"])), ("mul_", ["v0"], None, {"c": 0.5})]


def test_a_window_whose_storage_no_other_input_reads_is_written_by_aten_through_its_as_strided():
    """STRIDED CHAIN LIMITS' allowed side: a window is a graph input of its own where no
    other input of its storage is read (Dynamo lifts only what the program reads), so its
    as_strided is the first view of its chain and functionalization takes the write; the
    window itself, other inputs and views of the as_strided may be read and written."""
    written = _lone(LONE_WRITE + [("add", ["x2", "x2"], "v1", {}), ("narrow", ["v0"], "v2", {"dim": 1}),
                                  ("zero_", ["v2"], None, {}), ("clone", ["x1"], "v3", {})])
    t = check(written)
    assert set(t.late.lone) == {"v0", "v2"} and t.late.unreadable == {"x0"}
    assert asks_of(written).lone_strided and not asks_of(_lone(LONE_WRITE[:1])).lone_strided


@pytest.mark.parametrize("body, message", [
    ([("clone", ["x0"], "v9", {})] + LONE_WRITE, "whose storage's input x0 was read"),          # the base before
    (LONE_WRITE + [("clone", ["x0"], "v9", {})], "reads input x0"),                            # the base after
    ([("clone", ["x3"], "v9", {})] + LONE_WRITE, "whose storage's input x3 was read"),          # a sibling window
    ([("narrow", ["x2"], "v8", {"dim": 1}), ("as_strided_fn", ["v8"], "v0", _box(["head", "all"])),
      ("mul_", ["v0"], None, {"c": 0.5})], "as_strided of a view"),                             # a view's as_strided
    (LONE_WRITE[:1] + [("as_strided_fn", ["v0"], "v1", _box(["head", "all"])),
                        ("mul_", ["v1"], None, {"c": 0.5})], "as_strided of a view"),              # its as_strided's
    (LONE_WRITE[:1] + [("transpose", ["v0"], "v1", {}), ("as_strided_fn", ["v1"], "v2", _box(["head", "all"])),
                        ("mul_", ["v2"], None, {"c": 0.5})], "as_strided of a view"),              # or its view's
])
def test_forbidden_an_aten_write_through_a_windows_as_strided_beside_a_read_of_its_storages_other_inputs(body,
                                                                                                         message):
    """With the base or another window read, the window is a view of a synthetic base in
    the graph, and functionalization refuses the write ("as_strided() is
    non-compositional"); an as_strided of a view of the window is refused as before."""
    with pytest.raises(InvalidProgram, match=message):
        check(_lone(body, kinds=("drop_last", "drop_first")))


def test_a_custom_ops_write_through_the_as_strided_is_taken_whatever_is_read():
    """``auto_functionalized`` writes through the base, never through the chain."""
    body = [("clone", ["x0"], "v9", {}), ("as_strided_fn", ["x2"], "v0", _box(["head", "all"])),
            ("m_scale", ["v0"], None, {"site": 0}), ("clone", ["x0"], "v8", {})]
    assert not check(_lone(body)).late.unreadable


def test_an_alias_input_is_written_through_its_as_strided_while_its_base_is_unread():
    p = dataclasses.replace(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, LONE_WRITE[:1] + LONE_WRITE[1:]),
                            mode=Mode(aliases=(("x1", "x0"),)))
    p = dataclasses.replace(p, body=tuple(dataclasses.replace(s, args=tuple("x1" if a == "x2" else a for a in s.args))
                                          for s in p.body))
    assert check(p).late.unreadable == {"x0"}


def test_the_generator_writes_windows_through_their_as_strided_and_never_reads_their_storage_after():
    table = features.parse("all,overlapping-inputs=1.0,base-offsets=1.0")
    found = 0
    for seed in range(300):
        program = generate(seed, features=table).program
        late = check(program).late  # the IR's rule holds for every drawn program
        found += bool(late.unreadable)
    assert found >= 5  # 9 when written


def test_the_strided_chain_ban_is_untested_in_a_program_that_asks_for_it_and_a_finding_elsewhere():
    failure = Failure("BackendCompilerFailed", "backend='inductor' raised:\nRuntimeError: During torch.compile, "
                      "encountered a mutation on a view chain of length 2, where view 1 was an as_strided() call. "
                      "as_strided() is non-compositional", contract.COMPILE)
    run = Run(outputs=[], failure=failure)
    assert contract.refusal(run, contract.Asks(lone_strided=True)) is not None
    assert contract.refusal(run, contract.Asks()) is None


def test_a_copy_is_a_state_of_its_own():
    """The generator's tracker starts from the IR's state of a prefix (``features.tracker``):
    what it adds is not the prefix's."""
    late = check(_lone(LONE_WRITE)).late
    copy = late.copy()
    copy.unreadable.add("x1")
    copy.lone["v9"] = "x2"
    assert late.unreadable == {"x0"} and "v9" not in late.lone and isinstance(copy, LateStrided)
