"""Signatures (``fuzzer.reduce.signature``): a program's normal form renumbers names,
sites and symbols in order of appearance, so two findings of one bug read alike;
hand-written programs."""

import dataclasses

from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.program.ir import Mode
from fuzzer.reduce import signature

A = prog({"x3": ("s5", "s2")}, [("p_sin", ["x3"], "v9", {"site": 7}), ("e_log", ["v9"], None, {"site": 4})],
         outputs=["v9"], sym_min={"s5": 1, "s2": 2})
B = prog({"x0": ("s0", "s1")}, [("p_sin", ["x0"], "v0", {"site": 0}), ("e_log", ["v0"], None, {"site": 1})],
         outputs=["v0"], sym_min={"s0": 1, "s1": 2})


def test_names_sites_and_symbols_are_renumbered_in_order_of_appearance():
    assert signature.symbol_renaming(A) == {"s5": "s0", "s2": "s1"}
    renamed = signature.renaming(A)
    assert renamed.names == {"x3": "x0", "v9": "v0"} and renamed.sites == {7: 0, 4: 1}
    assert signature.canonical(A) == B


def test_an_identical_call_keeps_sharing_its_site_and_sizes_from_data_are_renumbered():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 5}), ("p_sin", ["x0"], "v1", {"site": 5}),
                               ("p_pos", ["x0"], "v2", {"site": 9, "size": "u4"})])
    body = signature.canonical(p).body
    assert [s.attrs["site"] for s in body] == [0, 0, 1] and body[2].attrs["size"] == "u0"


def test_the_normal_form_reads_the_same_for_renamed_programs_and_writes_the_mode():
    assert signature.normal_form(A) == signature.normal_form(B) == \
        "x0[s0,s1]; v0 = p_sin(x0); e_log(v0); return (v0)"
    marked = dataclasses.replace(A, mode=Mode(dynamic="auto", marks=(("x3", 1, "dynamic"),)))
    assert signature.normal_form(marked).startswith("[dynamic=auto mark x0:1:dynamic dtype=float32] x0[s0,s1];")


def test_a_signature_is_the_bug_class_and_the_normal_form_and_parses_back():
    divs = [contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "missing", ("missing",))]
    made = signature.of(contract.EFFECT_LOG, case(A), divs)
    assert made.bug_class == contract.bug_class(contract.EFFECT_LOG, divs)
    assert made.normal_form == signature.normal_form(A)
    assert made.text == f"{made.bug_class.text}{signature.SEPARATOR}{made.normal_form}" == str(made)
    assert signature.Signature.parse(made.text) == made
