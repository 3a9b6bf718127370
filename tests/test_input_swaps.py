"""An input swapped onto new storage by ``set_`` (feature ``input-swaps``,
``fuzzer.program.input_swaps``; its rule in ``storage.Swaps``).

What the IR allows of a swapped input, both sides of each rule; the generator reading the
views of the storage an input left; the contract judging values, not storages
(stand-ins, as in ``test_contract``); shrinking; one real compile, which the three
memory-write features share (index writes, dtype reads, an input's swap).
"""

import dataclasses
import random

import pytest
import torch
from helpers import case, prog
from test_contract import verdict

from fuzzer.judge import contract
from fuzzer.judge.observe import Failure
from fuzzer.program import codegen, features, forms, input_swaps
from fuzzer.program.generate import draft_at, generate
from fuzzer.program.ir import InvalidProgram, Mode, check
from fuzzer.reduce.passes.rewrite import statement_edits

X = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}
SCALED = ("set_scaled", ["x0"], None, {"c": 2.0})


def _program(body, outputs=(), **mode):
    p = prog(X, body, outputs=outputs)
    return dataclasses.replace(p, mode=Mode(**mode)) if mode else p


# ------------------------------------------------------------- the IR's rule

def test_an_input_of_a_storage_of_its_own_is_swapped_and_nothing_else():
    check(_program([("clone", ["x1"], "v0", {}), ("set_input", ["x0", "v0"], None, {})]))
    check(_program([("set_input", ["x0", "x1"], None, {})]))  # onto another input's storage (the Note's case 2)
    with pytest.raises(InvalidProgram, match="only an input of a storage of its own"):
        check(_program([("clone", ["x1"], "v0", {}), ("set_input", ["v0", "x1"], None, {})]))
    aliased = prog({**X, "x2": ("s0", "s1")}, [("set_scaled", ["x0"], None, {"c": 2.0})])
    with pytest.raises(InvalidProgram, match="only an input of a storage of its own"):
        check(dataclasses.replace(aliased, mode=Mode(aliases=(("x2", "x0"),))))


def test_an_input_written_before_is_never_swapped():
    """AOTAutograd's Note [set_() Input Mutations]: a write before the set_ is not handled."""
    check(_program([("m_scale", ["x1"], None, {"site": 0}), SCALED]))
    with pytest.raises(InvalidProgram, match="written before"):
        check(_program([("m_scale", ["x0"], None, {"site": 0}), SCALED]))


def test_the_storage_an_input_was_set_onto_is_read_after_but_never_written():
    """AOTAutograd keeps a write to an input that saw a set_ only under no_grad."""
    swapped = [("clone", ["x1"], "v0", {}), ("set_input", ["x0", "v0"], None, {})]
    check(_program(swapped + [("p_sin", ["v0"], "v1", {"site": 0})], ["v1"]))
    with pytest.raises(InvalidProgram, match="an input was set_ onto"):
        check(_program(swapped + [("mul_", ["v0"], None, {"c": 2.0})]))


def test_a_swapped_input_is_not_read_again_and_its_old_storage_is_read_not_written():
    old = [("head", ["x0"], "v0", {"dim": 0}), SCALED]
    check(_program(old + [("clone", ["v0"], "v1", {})], ["v1", "v0"]))
    with pytest.raises(InvalidProgram, match="swapped onto another storage"):
        check(_program(old + [("clone", ["x0"], "v1", {})]))
    with pytest.raises(InvalidProgram, match="frozen"):
        check(_program(old + [("mul_", ["v0"], None, {"c": 2.0})]))


# ------------------------------------------------------------- the generator

def test_the_generator_reads_the_views_of_the_storage_an_input_left():
    """With the feature, a view made before the swap stays readable; the input does not."""
    program = _program([("head", ["x0"], "v0", {"dim": 0}), SCALED])
    assert draft_at(program, 2, random.Random(0)).order == ["x1", "v0"]


def test_generated_programs_with_the_feature_are_legal_and_read_old_views_after_a_swap():
    table = features.parse("input-swaps=1.0")
    used, read_after = set(), 0
    for seed in range(80):
        program = generate(seed, features=table).program
        check(program)
        used |= {s.form for s in program.body}
        for n, stmt in enumerate(program.body):
            if stmt.form in ("set_input", "set_scaled"):
                old = {s.out for s in program.body[:n] if s.out and s.args and s.args[0] == stmt.args[0]}
                read_after += any(set(s.args) & old for s in program.body[n + 1:])
    assert {"set_input", "set_scaled"} <= used and read_after >= 5


@pytest.mark.parametrize("form,plain", [("set_input", "copy_"), ("set_scaled", "mul_")])
def test_a_swap_shrinks_toward_a_write_of_its_values(form, plain):
    body = [SCALED] if form == "set_scaled" else [("clone", ["x1"], "v0", {}), ("set_input", ["x0", "v0"], None, {})]
    c = case(_program(body))
    assert plain in {s.form for e in statement_edits(c) for s in e.program.body}


# ------------------------------------------------------------- the contract

#: x0's head read, x0 swapped onto 2 * x0; the head returned (it still reads the old storage)
OLD_VIEW = case(_program([("head", ["x0"], "v0", {"dim": 0}), SCALED], ["v0"]))


def _set(x, z):
    with torch.no_grad():
        torch.ops.aten.set_.source_Tensor(x, z)


def _faithful(x0, x1):
    v0 = x0[:x0.size(0) // 2]
    _set(x0, x0 * 2.0)
    return (v0,)


def _in_place(x0, x1):
    v0 = x0[:x0.size(0) // 2].clone()
    x0.mul_(2.0)  # the input written in place, its storage kept: the same values
    return (v0,)


def _regenerated(x0, x1):
    _set(x0, x0 * 2.0)
    return (x0[:x0.size(0) // 2],)  # the view made again of the input as it now is


def test_a_swap_is_judged_by_the_values_the_input_and_its_old_views_hold():
    assert verdict(_faithful, OLD_VIEW).kinds() == []
    assert verdict(_in_place, OLD_VIEW).kinds() == []  # values, not storages
    assert verdict(_regenerated, OLD_VIEW).kinds() == [contract.WRONG_OUTPUT]


def _module(program, swap):
    """A 'compiled' module: the program's own, run eagerly, its helper ``swap``."""
    module, step = codegen.build_with_step(program)
    module.forward.__func__.__globals__["set_input"] = swap
    return codegen.driven(step, module)


def test_a_module_s_buffer_is_swapped_through_the_helper_and_judged_after_the_call():
    program = _program([SCALED, ("p_sin", ["x1"], "v0", {"site": 0})], ["v0"], module=("x0",))
    text = codegen.source(program)
    assert f"def {input_swaps.HELPER}(x, z):" in text and "set_input(x0, x0 * 2.0)" in text and "x0 = self.x0" in text
    assert verdict(_module(program, _set), case(program)).kinds() == []
    assert verdict(_module(program, lambda x, z: None), case(program)).kinds() == [contract.WRONG_MUTATION]


# ------------------------------------------------------------- a real compile

@pytest.mark.compile
def test_the_memory_write_forms_compile_whole_and_as_eager_runs_them():
    """An index write read rolled, a self-reading write, a dtype read before a slice
    write, a buffer swapped and its old view read: one graph, no finding (aten's set_ on
    an input is traced, Tensor.set_ would break the graph)."""
    from fuzzer.judge.execute import execute
    from fuzzer.judge.trial import judge_case
    body = [("clone", ["x1"], "v0", {}), ("put_perm", ["v0", "x1"], None, {"dim": 1}),
            ("roll", ["v0"], "v1", {"dim": 0}), ("flip_copy_", ["v0"], None, {"dim": 0}),
            ("sign_clear", ["v0"], "v2", {}), ("slice_fill", ["v0"], None, {"dim": 1, "c": 0.5}),
            ("head", ["x0"], "v3", {"dim": 1}), ("set_input", ["x0", "v1"], None, {}), ("clone", ["v3"], "v4", {})]
    program = _program(body, ["v0", "v2", "v4"], module=("x0",))
    assert {forms.form(s.form).feature for s in program.body} >= {
        features.INDEX_WRITES, features.DTYPE_READS, features.INPUT_SWAPS}
    c = case(program, [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 2}])
    found = judge_case(c, execute(c, "cpu"), "cpu")
    assert found.status == contract.OK and found.divergences == [] and found.untested == [], found


# ---------------------------------------------------------------- INPUT SWAP LIMITS

#: AOTAutograd's word on a set_ of a graph input whose mutations it cannot keep in the
#: graph, as a compiled run under a backend records it (a campaign of 2026-12-06)
DECLINED = Failure("BackendCompilerFailed", "backend='aot_eager_decomp_partition' raised:\nAssertionError: "
                   "Encountered a set_ on a graph input, but the input has other mutations that we cannot\nkeep in "
                   "the graph. This is not supported today. Current state:\n  keep_input_mutations=False", "compile")


def test_what_torch_says_it_does_not_support_for_a_swapped_input_is_refused_only_where_one_is():
    from fuzzer.judge.observe import Run
    from fuzzer.judge.trial import asks_of

    asks = asks_of(prog({"x0": ("s0",)}, [SCALED], []))
    assert asks.swaps
    gap = contract.refusal(Run(failure=DECLINED), asks)
    assert gap is not None and gap.reason == contract.REFUSED
    assert contract.refusal(Run(failure=DECLINED), dataclasses.replace(asks, swaps=False)) is None
    other = dataclasses.replace(DECLINED, message="backend='inductor' raised:\nAssertionError: something else")
    assert contract.refusal(Run(failure=other), asks) is None
    assert not asks_of(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], ["v0"])).swaps


def test_a_swap_of_a_value_made_before_a_graph_break_swaps_a_graph_input():
    """``y.new_empty(0).resize_(...)`` breaks the graph: the graph that resumes takes the
    grown buffer as an input, so ``v0.set_(x0)`` is a ``set_`` of a graph input to
    AOTAutograd (its "not supported today" is refused); a value made after the break,
    or a swap with no break before it, is not one."""
    from fuzzer.judge.trial import asks_of

    grown = ("resize_copy", ["x0"], "v0", {})
    swap = ("swap", ["x0", "v0"], "v1", {})
    assert asks_of(prog({"x0": ("s0",)}, [grown, swap, ("mul_", ["x0"], None, {"c": 0.5})], [])).swaps
    made = ("clone", ["x0"], "v0", {})
    assert asks_of(prog({"x0": ("s0",)}, [made, ("graph_break", [], None, {}), swap], [])).swaps
    assert not asks_of(prog({"x0": ("s0",)}, [made, swap], [])).swaps
    assert not asks_of(prog({"x0": ("s0",)}, [("graph_break", [], None, {}), made, swap], [])).swaps


#: AOTAutograd's word on mutated graph inputs that share storage without being views of
#: one another, as a campaign of 2026-12-06 recorded it (``set_alias`` before a
#: ``resize_`` form's graph break, then a custom op writing the view)
MERGE_DECLINED = Failure("BackendCompilerFailed", "backend='inductor' raised:\nAssertionError: aot_autograd() does not "
                         "yet handle non-differentiable view input mutations. Aliased inputs share storage but have "
                         "mixed autograd ._base states: ['input 2 (v0)'] have ._base set, while ['input 1 (v1)'] have "
                         "._base=None (and are not the synthetic base).", "compile")


def test_what_torch_says_it_does_not_handle_for_an_alias_that_is_no_view_is_refused_only_where_one_is():
    """ALIAS MERGE LIMITS: refused in a program that sets a tensor onto another's storage
    (``set_alias``, ``swap``, an input swap), a finding in one that does not."""
    from fuzzer.judge.observe import Run
    from fuzzer.judge.trial import asks_of

    program = prog({"x0": ("s0",)}, [("head", ["x0"], "v0", {"dim": 0}), ("set_alias", ["v0"], "v1", {}),
                                     ("resize_copy", ["v1"], "v2", {}), ("m_swap", ["v2", "v0"], None, {"site": 0})],
                   [])
    asks = asks_of(program)
    assert asks.set_aliases and not asks.swaps
    gap = contract.refusal(Run(failure=MERGE_DECLINED), asks)
    assert gap is not None and gap.reason == contract.REFUSED
    assert asks_of(prog({"x0": ("s0",)}, [SCALED], [])).set_aliases  # an input swap
    plain = asks_of(prog({"x0": ("s0",)}, [("head", ["x0"], "v0", {"dim": 0}),
                                           ("m_swap", ["x0", "v0"], None, {"site": 0})], []))
    assert not plain.set_aliases and contract.refusal(Run(failure=MERGE_DECLINED), plain) is None
    # SWAP_DECLINES' own message is not refused by an alias alone
    assert contract.refusal(Run(failure=DECLINED), dataclasses.replace(asks, swaps=False)) is None
