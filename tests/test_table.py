"""The bugs as a markdown table (``fuzzer.render.table``): where triage put each, what is
public, one column per release; hand-built entries and records."""

import dataclasses

from helpers import case, divergence_on, prog

from fuzzer.corpus import bugs, upstream
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.render import table
from fuzzer.triage.culprit import Culprit


def _bug(culprit, versions=None):
    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    e = Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)], Origin(seed=1, device="cpu", backend="inductor"))
    e.culprit, e.versions = culprit, versions or {}
    (bug,) = bugs.group([e])
    return bug


def test_the_culprit_is_said_in_short_phrases():
    blamed = _bug(Culprit("inductor", kind=contract.EFFECT_LOG, subsystem="post_grad_passes", pass_name="p",
                          switches={"remove_noop_ops": "gone", "remove_noop_ops[aten.clone]": "gone",
                                    "fusion": "stays"}, dynamic_only=True,
                          named_by=("node",)))
    assert table.culprit_words(blamed) == ["stage inductor", "blame remove_noop_ops[aten.clone]",
                                           "bisector post_grad_passes/p",
                                           "gone with remove_noop_ops, remove_noop_ops's aten.clone rule off",
                                           "missing key held by node", "dynamic shapes only"]
    assert table.culprit_words(_bug(None)) == ["not triaged"]


def test_what_is_public_is_known_new_or_never_looked_up():
    same = upstream.Link("pytorch/pytorch#1", "issue", "open")
    near = upstream.Link("pytorch/pytorch#2", "issue", "closed", relation="related")
    assert table._public(()) == "not looked up"
    assert table._public((upstream.Record(("e",), (same, near), note="n"),)) == \
        "known: pytorch/pytorch#1 (issue, open); n; related: pytorch/pytorch#2 (issue, closed)"
    assert table._public((upstream.Record(("e",), (), searched="2026-01-01"),)) == "**new**"


def test_one_row_per_bug_one_column_per_release_and_cells_escaped():
    bug = _bug(Culprit("inductor", kind=contract.EFFECT_LOG), {"2.13.0+cpu": "reproduces", "2.12.1": "fixed"})
    bug = dataclasses.replace(bug, title="a | b")
    text = table.markdown([bug], upstream.Upstream())
    head, rule, row = text.splitlines()
    assert head == "| bug | what | culprit | entries | 2.12.1 | 2.13.0 | history | public |"
    assert rule == "|" + " --- |" * 8
    assert "a \\| b" in row and "| fixed | reproduces |" in row and row.endswith("| not looked up |")
