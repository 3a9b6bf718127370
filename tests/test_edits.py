"""The edits a shrink proposes (``fuzzer.reduce.edits``), by public behaviour: a removal
takes what reads it, only the forms a bug needs are kept, symbols merged or dropped with
their bindings, and a mode without an input or a dim; hand-written cases (a value's readers
reading its operand is ``fuzzer.program.rewire``'s, tests/test_rewire.py)."""

from helpers import case, prog

from fuzzer.program.ir import Mode
from fuzzer.reduce import edits

BODY = [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["v0"], "v1", {"site": 1}),
        ("e_log", ["x0"], None, {"site": 2})]
C = case(prog({"x0": ("s0", "s1")}, BODY, outputs=["v1"]))


def _forms(c):
    return [s.form for s in c.program.body]


def test_a_removed_statement_takes_what_reads_it_and_its_outputs():
    cut = edits.remove_statements(C, {0})
    assert _forms(cut) == ["e_log"] and cut.program.outputs == ()
    assert _forms(edits.remove_statements(C, {2})) == ["p_sin", "p_sin"]


def test_only_the_forms_a_bug_needs_are_kept_with_what_they_read():
    assert _forms(edits.keeping_forms(C, ["e_log"])) == ["e_log"]
    kept = edits.keeping_forms(C, ["p_sin"])
    assert _forms(kept) == ["p_sin", "p_sin"]


def test_symbols_merge_with_their_minimums_and_bindings_and_unused_ones_go():
    c = case(prog({"x0": ("s0", "s1")}, [], sym_min={"s0": 1, "s1": 3}), [{"s0": 2, "s1": 5}])
    merged = edits.merge_symbols(c, "s1", "s0")
    assert merged.program.inputs[0].dims == ("s0", "s0") and merged.program.sym_min == {"s0": 3}
    assert merged.bindings == ({"s0": 3},)     # raised to the merged minimum
    shrunk = edits.drop_unused_symbols(edits.with_program(c, inputs=(c.program.inputs[0].__class__("x0", ("s0",)),)))
    assert shrunk.program.symbols == ("s0",) and shrunk.bindings == ({"s0": 2},)


def test_a_mode_without_gradients_drops_no_grad_marks_and_one_without_an_input_its_parts():
    graded = edits.with_program(C, mode=Mode(grad=True), body=tuple(
        s.__class__(s.form, s.args, s.out, {**s.attrs, "no_grad": True}) for s in C.program.body))
    plain = edits.with_mode(graded, Mode())
    assert not any("no_grad" in s.attrs for s in plain.program.body)
    mode = Mode(marks=(("x0", 1, "dynamic"), ("x1", 0, "dynamic")), strided=("x0",), module=("x0",), carry=True,
                windows=(("x1", "x0", 0, "row"),), window_calls="later")
    gone = edits.without_input(mode, "x0")
    assert gone.marks == (("x1", 0, "dynamic"),) and gone.strided == () and gone.module == () and not gone.carry
    assert gone.windows == () and gone.window_calls == ""
    assert edits.without_dim(Mode(marks=(("x0", 1, "dynamic"), ("x0", 0, "maybe"))), "x0", 0).marks == (
        ("x0", 0, "dynamic"),)


def test_a_canonical_case_renumbers_its_bindings_with_its_symbols():
    c = case(prog({"x0": ("s3", "s1")}, []), [{"s3": 4, "s1": 2}])
    canon = edits.canonical_case(c)
    assert canon.program.inputs[0].dims == ("s0", "s1") and canon.bindings == ({"s0": 4, "s1": 2},)
