"""Hints: what a shrink of a finding tries first, from the held keys that say what their
1-minimal programs do (``fuzzer.campaign.hints``); stand-in oracles, no compile."""

import dataclasses

from helpers import case, finding_of, key, klass, prog, stays_while

from fuzzer.campaign.hints import hints_for, toward
from fuzzer.corpus.bugs import DOES_OPEN, BugKey, Does, does
from fuzzer.judge import contract
from fuzzer.judge.contract import Divergence
from fuzzer.judge.trial import Finding
from fuzzer.reduce.shrinker import shrink

MISSING = [Divergence(contract.EFFECT_LOG, 0, "sequence", "missing e_log@0 (..)", ("missing",))]


def _key(program, family="effect-log|missing", stage="aot_eager") -> BugKey:
    return BugKey(klass(family), f"{stage}{DOES_OPEN}{does(program)}}}")


def _finding() -> Finding:
    """``v0 = x0[:s0//2]; v1 = p_sin(x0); e_log(v0)`` in bfloat16, the log lost."""
    p = prog({"x0": ("s0",)}, [("head", ["x0"], "v0", {"dim": 0}), ("p_sin", ["x0"], "v1", {"site": 0}),
                               ("e_log", ["v0"], None, {"site": 1})], outputs=["v1"])
    p = dataclasses.replace(p, mode=dataclasses.replace(p.mode, dtype="bfloat16"))
    return Finding(contract.EFFECT_LOG, case(p), MISSING, "cpu", "aot_eager")


def test_a_keys_does_reads_back_what_key_of_wrote():
    p = _finding().case.program
    grad = dataclasses.replace(p, mode=dataclasses.replace(p.mode, grad=True))
    assert Does.of_key(_key(p)) == Does(("e_log", "head", "p_sin"), ("dtype=bfloat16",))
    assert Does.of_key(_key(grad)) == Does(("e_log", "head", "p_sin"), ("grad", "dtype=bfloat16"))
    assert Does.of_key(key("compile-error|x @ inductor")) is None


def test_the_boldest_hint_is_the_keys_forms_alone_on_the_operands_in_the_keys_mode():
    finding = _finding()
    minimal = prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 1})])
    bold, kept = toward(finding.case, Does.of_key(_key(minimal)))
    assert [(s.form, s.args) for s in bold.program.body] == [("e_log", ("x0",))]
    assert bold.program.mode.dtype == "float32" and bold.program.outputs == ()
    assert [s.form for s in kept.program.body] == ["head", "e_log"]
    # a key whose program needs bfloat16 keeps it
    needs = dataclasses.replace(minimal, mode=dataclasses.replace(minimal.mode, dtype="bfloat16"))
    assert toward(finding.case, Does.of_key(_key(needs)))[0].program.mode.dtype == "bfloat16"


def test_hints_come_only_from_held_keys_of_the_findings_family_whose_forms_it_has():
    finding = _finding()
    minimal = prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 1})])
    other_forms = prog({"x0": ("s0",)}, [("e_tap", ["x0"], "v0", {"site": 1})])
    held = {_key(minimal, family="effect-log|reordered"): 1, _key(other_forms): 1,
            key("effect-log|missing @ inductor:reorder_for_peak_memory"): 1}
    assert hints_for(finding, held) == ()
    hints = hints_for(finding, {**held, _key(minimal): 1})
    assert [[s.form for s in h.program.body] for h in hints] == [["e_log"], ["head", "e_log"]]


def test_a_hinted_shrink_ends_where_the_plain_one_does_in_fewer_candidates():
    """A stand-in bug that needs only an ``e_log`` call: shrunk from the finding with the
    hint of the held bug's key, the result is the plain shrink's, in fewer candidates;
    and a finding whose bug needs more than the key's forms is not made that bug."""
    finding = _finding()
    held = {_key(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 1})])): 1}
    needs_log = stays_while(lambda c: any(s.form == "e_log" for s in c.program.body))
    counted = {"plain": 0, "hinted": 0}

    def counting(name, judge):
        def inner(c):
            counted[name] += 1
            return judge(c)
        return inner
    divs = needs_log(finding.case).divergences
    plain = shrink(finding_of(finding.case, contract.EFFECT_LOG, divs), judge=counting("plain", needs_log))
    hinted = shrink(finding_of(finding.case, contract.EFFECT_LOG, divs), judge=counting("hinted", needs_log),
                    hints=hints_for(finding, held))
    assert hinted.signature == plain.signature and counted["hinted"] < counted["plain"]
    needs_sin = stays_while(lambda c: {"e_log", "p_sin"} <= {s.form for s in c.program.body})
    other = shrink(finding_of(finding.case, contract.EFFECT_LOG, divs), judge=needs_sin, hints=hints_for(finding, held))
    assert {s.form for s in other.case.program.body} == {"e_log", "p_sin"}
