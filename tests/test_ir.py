"""The IR's legality rules and the liveness behind missed-dce."""

import pytest
from helpers import case, prog

from fuzzer.program import codegen
from fuzzer.program.ir import InvalidProgram, check
from fuzzer.program.liveness import dead_pure_sites, live_statements


def test_views_share_storage_and_fresh_results_do_not():
    p = prog({"x0": ("s0", "s1")}, [
        ("head", ["x0"], "v0", {"dim": 0}),
        ("p_sin", ["v0"], "v1", {"site": 0}),
    ], outputs=["v1"])
    t = check(p)
    assert t.root["v0"] == "x0"
    assert t.root["v1"] == "v1"
    assert t.dims["v0"] == ("s0 // 2", "s1")


@pytest.mark.parametrize("body, message", [
    ([("p_sin", ["nope"], "v0", {"site": 0})], "not defined"),
    ([("p_mix", ["x0", "x1"], "v0", {"site": 0})], "shapes differ"),
    ([("m_addto", ["x0", "x0"], None, {"site": 0})], "shares storage"),
    ([("head", ["x0"], "v0", {"dim": 0}), ("m_addto", ["x0", "v0"], None, {"site": 0})], "shares storage"),
    ([("p_sin", ["x0"], "v0", {"site": 0}), ("p_rowsum", ["x0"], "v1", {"site": 0})], "not as an identical call"),
    ([("p_sin", ["x0"], "v0", {"site": "a"})], "int site"),
    ([("p_sin", ["x0"], None, {"site": 0})], "mismatch"),
    ([("sum", ["x0"], "v0", {"dim": 5})], "out of range"),
    ([("scale", ["x0"], "v0", {"c": 7.0})], "constant"),
    ([("frobnicate", ["x0"], "v0", {})], "unknown statement form"),
])
def test_illegal_programs_are_rejected(body, message):
    p = prog({"x0": ("s0", "s1"), "x1": ("s1",)}, body)
    with pytest.raises(InvalidProgram, match=message):
        check(p)


def test_written_operand_may_not_alias_a_view_of_itself():
    p = prog({"x0": ("s0",)}, [
        ("clone", ["x0"], "v0", {}),
        ("transpose", ["x0"], "v1", {}),
    ])
    with pytest.raises(InvalidProgram):
        check(p)  # transpose needs rank 2
    p = prog({"x0": ("s0", "s0")}, [
        ("transpose", ["x0"], "v0", {}),
        ("m_addto", ["x0", "v0"], None, {"site": 0}),
    ])
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(p)


def test_narrow_requires_a_row_for_every_binding():
    body = [("narrow", ["x0"], "v0", {"dim": 0})]
    check(prog({"x0": ("s0",)}, body, sym_min={"s0": 1}))
    with pytest.raises(InvalidProgram, match="narrow"):
        check(prog({"x0": ("s0",)}, body, sym_min={"s0": 0}))


def test_symbols_must_be_readable_from_an_input():
    p = prog({"x0": ("s0",)}, [])
    bad = type(p)(symbols=("s0", "s1"), sym_min={"s0": 1, "s1": 1}, inputs=p.inputs)
    with pytest.raises(InvalidProgram, match="s1"):
        check(bad)


def test_case_validation_checks_bindings():
    p = prog({"x0": ("s0",)}, [], sym_min={"s0": 2})
    with pytest.raises(InvalidProgram, match="below its minimum"):
        case(p, [{"s0": 1}]).validate()
    with pytest.raises(InvalidProgram, match="exactly"):
        case(p, [{"s0": 3, "s9": 1}]).validate()


def test_liveness_dead_pure_calls():
    p = prog({"x0": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 0}),          # dead: never read
        ("p_sin", ["x0"], "v1", {"site": 1}),          # feeds a dead chain only
        ("p_mix", ["v1", "x0"], "v2", {"site": 2}),    # dead
        ("p_sin", ["x0"], "v3", {"site": 3}),          # read by an effect: live
        ("e_log", ["v3"], None, {"site": 4}),
        ("p_sin", ["x0"], "v4", {"site": 5}),          # written into the input: live
        ("m_addto", ["x0", "v4"], None, {"site": 6}),
        ("p_sin", ["x0"], "v5", {"site": 7}),          # returned: live
        ("clone", ["x0"], "v6", {}),
        ("p_sin", ["x0"], "v7", {"site": 8}),          # only written into a dead clone: dead
        ("m_addto", ["v6", "v7"], None, {"site": 9}),
    ], outputs=["v5"])
    assert dead_pure_sites(p) == {0, 1, 2, 8}
    assert 9 not in {p.body[i].site for i in live_statements(p)}


def test_write_to_a_returned_view_keeps_its_source_live():
    p = prog({"x0": ("s0",)}, [
        ("clone", ["x0"], "v0", {}),
        ("head", ["v0"], "v1", {"dim": 0}),
        ("p_sin", ["x0"], "v2", {"site": 0}),
        ("head", ["v2"], "v3", {"dim": 0}),
        ("m_addto", ["v1", "v3"], None, {"site": 1}),
    ], outputs=["v1"])
    assert dead_pure_sites(p) == set()


def test_codegen_reads_symbols_from_shapes_and_returns_a_tuple():
    p = prog({"x0": ("s0", "s1"), "x1": ("s1",)}, [
        ("head", ["x0"], "v0", {"dim": 1}),
        ("e_log", ["v0"], None, {"site": 0}),
    ], outputs=["v0"])
    text = codegen.source(p)
    assert "s0 = x0.shape[0]" in text and "s1 = x0.shape[1]" in text
    assert "v0 = x0[:, : s1 // 2]" in text
    assert "torch.ops.dcefuzz.e_log(v0, 0)" in text
    assert text.rstrip().endswith("return (v0,)")


def test_json_round_trip():
    p = prog({"x0": ("s0", "s1")}, [("sum", ["x0"], "v0", {"dim": 1})], outputs=["v0"])
    c = case(p)
    from fuzzer.program.ir import Case
    assert Case.from_json(c.to_json()) == c
    assert Case.from_json(c.to_json()).program.digest() == p.digest()


def test_no_view_is_made_under_no_grad_of_a_value_that_requires_grad():
    """Eager gives such a view requires_grad=True and no grad_fn, where torch.no_grad's
    documentation says its results do not require grad: what a loss over it means is
    not defined (docs/bugs.md), so programs never hold one."""
    import dataclasses

    from fuzzer.program.ir import Mode

    def graded(body):
        return dataclasses.replace(prog({"x0": ("s0",)}, body, outputs=[body[-1][2]]), mode=Mode(grad=True))
    with pytest.raises(InvalidProgram, match="no_grad"):
        check(graded([("narrow", ["x0"], "v0", {"dim": 0, "no_grad": True})]))
    # a fresh result under no_grad, and a view of it, are clear: nothing requires grad
    check(graded([("clone", ["x0"], "v0", {"no_grad": True}), ("narrow", ["v0"], "v1", {"dim": 0, "no_grad": True})]))
    # and a view outside no_grad is a differentiable view
    check(graded([("narrow", ["x0"], "v0", {"dim": 0})]))


def test_a_plain_program_calls_its_ops_without_sites_unless_that_would_merge_two_calls():
    """A brief that needs no call trace writes the ops without their site argument,
    and the program's calls with them (a cond's two branches, a region's body too);
    where two calls differ only by their site, leaving it out would make them one
    call to a compiler, so the program keeps its sites."""
    p = prog({"x0": ("s0", "s1")}, [
        ("p_affine", ["x0"], "v0", {"a": 0.5, "k": 3, "flag": True, "site": 0}),
        ("cond_sin", ["v0"], "v1", {"site": 1, "site2": 2}),
        ("in_region_m_scale", ["v1"], None, {"site": 3}),
        ("p_head", ["v1"], "v2", {"site": 4}),
    ], outputs=("v2",))
    text = codegen.source(p, plain=True)
    assert "torch.ops.dcefuzz.p_affine(x0, 0.5, 3, True)" in text
    assert "lambda t: torch.ops.dcefuzz.p_sin(t), lambda t: torch.ops.dcefuzz.p_sin(t * 0.5)" in text
    assert "torch.ops.dcefuzz.m_scale(t)\n" in text and "in_region_m_scale_3(v1)" in text
    assert "torch.ops.dcefuzz.p_head(v1, (s0 // 2))" in text
    assert not codegen.sites_matter(p)
    assert codegen.source(p) != text and "p_affine(x0, 0.5, 3, True, 0)" in codegen.source(p)
    twice = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 1})],
                 outputs=("v0", "v1"))
    assert codegen.sites_matter(twice)
    same = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 0})],
                outputs=("v0", "v1"))
    assert not codegen.sites_matter(same)  # an identical call is one call already
