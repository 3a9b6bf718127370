"""A target's own finding localised within its pipeline (``fuzzer.triage.within``): the
pieces of export's pipeline each run a program as the contract judges it, the walk
blames the first that shows the bug (over export's pieces and compiled autograd's), and
a target's own bugs group by that blame.

Real ``torch.export.export`` (no Inductor) on the hand-written programs of
``test_targets``: a fraction of a second each; the one test of compiled autograd's
pieces on a real compile is marked ``compile``.
"""

import dataclasses

import pytest
from test_targets import EFFECTS, HALF, WRITES

from fuzzer import faults
from fuzzer.campaign import entries
from fuzzer.campaign.config import Config
from fuzzer.corpus import bugs
from fuzzer.judge import compiled_autograd, contract, exporting, targets
from fuzzer.judge.trial import CLEAN, FINDING, run_trial
from fuzzer.limits import TRIAGE
from fuzzer.triage import within
from fuzzer.triage.probe import Outcome


def _entry(finding):
    return entries.found_entry(finding, 0, Config(seed=0, device="cpu", corpus_dir="unused"))


def test_the_exported_graph_run_without_module_is_judged_clean_and_writes_its_inputs_back():
    """Every piece runs honest programs clean.  The decomposed program is functional:
    its graph, called with a token for each effect, returns what it writes, and
    ``GraphRun`` copies each back as ``.module()`` would; without the copies back a
    written input is a finding."""
    for piece in [name for name, it in targets.PIECES.items() if isinstance(it, targets.ExportPiece)]:
        for c in (WRITES, EFFECTS, HALF):
            result = run_trial(c, "cpu", target=piece)
            assert result.status == CLEAN, (piece, [d.line() for d in result.verdict.divergences])
    outputs = exporting.GraphRun.__init__

    def forgets_writes(self, program):
        outputs(self, program)
        self.outputs = [None if isinstance(where, int) else where for where in self.outputs]
    exporting.GraphRun.__init__ = forgets_writes
    try:
        result = run_trial(WRITES, "cpu", target="export-decomposed-graph")
    finally:
        exporting.GraphRun.__init__ = outputs
    assert result.status == FINDING and [f.kind for f in result.findings] == [contract.WRONG_MUTATION]


def test_a_bug_only_module_shows_is_blamed_on_its_unlifting():
    """The planted fault drops a write in ``.module()`` alone: the exported graph is
    right, so the walk blames the module, with one probe (the finding's own target is
    judged already)."""
    with faults.planted("mutation-lost-export"):
        [finding] = run_trial(WRITES, "cpu", target=targets.EXPORT).findings
        culprit = within.localise(_entry(finding), "cpu")
    assert culprit.stage == culprit.blame == "export-unlift" and culprit.oracle_calls == 1


class _Pieces:
    """A probe that answers per piece of the pipeline, recording what it was asked."""

    shows: set = set()
    asked: list = []

    def __init__(self, case, kind, bug_class, device, budget, spots=None):
        pass

    calls, seconds, exhausted = 0, 0.0, False

    def outcome(self, backend, config=None, dynamic=True, within=None, target=targets.DEFAULT):
        _Pieces.asked.append(target)
        return Outcome.STAYS if target in _Pieces.shows else Outcome.GONE


def test_the_walk_blames_the_first_piece_that_shows_the_bug_and_never_reruns_the_targets_own(monkeypatch):
    monkeypatch.setattr(within, "Probe", _Pieces)
    with faults.planted("mutation-lost-export"):
        [finding] = run_trial(WRITES, "cpu", target=targets.EXPORT).findings
    export = _entry(finding)
    aoti = dataclasses.replace(export, target=targets.AOTI)
    walked = ["export-graph", "export", "export-decomposed-graph", "export-decomposed"]
    cases = [(export, {"export-graph"}, "export-trace", walked[:1]),
             (export, set(), "export-unlift", walked[:1]),
             (aoti, {"export", "export-decomposed"}, "export-unlift", walked[:2]),
             (aoti, {"export-decomposed-graph"}, "export-decompositions", walked[:3]),
             (aoti, {"export-decomposed"}, "export-decomposed-unlift", walked),
             (aoti, set(), "aoti", walked)]
    for entry, shows, blame, asked in cases:
        _Pieces.shows, _Pieces.asked = shows, []
        assert (within.localise(entry, "cpu").blame, _Pieces.asked) == (blame, asked)


def test_compiled_autograds_walk_compiles_the_backward_by_each_backend_up_to_the_findings(monkeypatch):
    """Its pieces compile the forward with the finding's backend and the backward graph
    with their own; the walk goes up to the finding's backend (that piece is the target
    itself, never run again) and blames the first piece that shows the bug."""
    monkeypatch.setattr(within, "Probe", _Pieces)
    with faults.planted("mutation-lost-export"):
        [finding] = run_trial(WRITES, "cpu", target=targets.EXPORT).findings
    inductor = dataclasses.replace(_entry(finding), target=targets.COMPILED_AUTOGRAD)
    aot_eager = dataclasses.replace(inductor, backend="aot_eager")
    walked = ["compiled-autograd-eager", "compiled-autograd-aot_eager", "compiled-autograd-aot_eager_decomp_partition"]
    cases = [(inductor, {"compiled-autograd-eager"}, "compiled-autograd-capture", walked[:1]),
             (inductor, {"compiled-autograd-aot_eager"}, "compiled-autograd-aot", walked[:2]),
             (inductor, set(), "compiled-autograd-inductor", walked),
             (aot_eager, set(), "compiled-autograd-aot", walked[:1])]
    for entry, shows, blame, asked in cases:
        _Pieces.shows, _Pieces.asked = shows, []
        assert (within.localise(entry, "cpu").blame, _Pieces.asked) == (blame, asked)
    compiled_by = []
    monkeypatch.setattr(compiled_autograd, "under_compiled_autograd",
                        lambda fn, backend: compiled_by.append(backend))
    for piece in walked:
        targets.get(piece).build(EFFECTS, "eager")
    assert compiled_by == ["eager", "aot_eager", "aot_eager_decomp_partition"]


def test_a_targets_own_wrong_values_group_by_piece_and_by_what_the_program_does(monkeypatch):
    """Not each entry a bug of its own: two findings of one program and piece are one
    bug, another piece is another, and a program doing otherwise is another."""
    monkeypatch.setattr(within, "Probe", _Pieces)
    monkeypatch.setattr(entries, "shows_through_compile", lambda entry, budget, device=None: False)
    with faults.planted("mutation-lost-export"):
        [finding] = run_trial(WRITES, "cpu", target=targets.EXPORT).findings
    first, again = _entry(finding), dataclasses.replace(_entry(finding), id="again")
    _Pieces.shows = set()
    for e in (first, again):
        e.culprit = entries.culprit_of(e, "cpu", TRIAGE.budget)
    assert bugs.key_of(first) == bugs.key_of(again) and "@ export-unlift {does " in bugs.key_of(first).text
    assert bugs.separates(first)
    _Pieces.shows = {"export-graph"}
    graph = dataclasses.replace(_entry(finding), id="graph")
    graph.culprit = entries.culprit_of(graph, "cpu", TRIAGE.budget)
    assert bugs.key_of(graph) != bugs.key_of(first)
    other = dataclasses.replace(first, id="other", case=EFFECTS)
    assert bugs.key_of(other) != bugs.key_of(first)


@pytest.mark.compile
def test_compiled_autograds_cond_bug_is_placed_in_its_capture():
    """``bug-1fbce7ea9b``'s entry (``bug-a2077b8bd3`` before it was placed):
    ``torch.cond``'s backward under compiled autograd cannot be captured, so the first
    piece (the backward compiled by ``eager``) shows it: one probe, blamed on the capture."""
    from pathlib import Path

    from fuzzer.corpus.store import load

    entry = load(Path(__file__).parent.parent / "corpus" / "compile-error-8670a9d59c2b.json")
    culprit = within.localise(entry, "cpu")
    assert culprit.blame == "compiled-autograd-capture" and culprit.oracle_calls == 1


def test_the_graphs_own_input_check_keeps_a_bug_of_modules_guard_function_off_the_trace():
    """``bug-8b4ca801d7``: ``.module()``'s guard function misses a dim export fixed to
    one size, so a smaller input runs the graph.  The graph piece checks inputs against
    the program's own placeholders and ranges, refuses that binding (exported anew on
    it, clean), and the walk blames the unlifting, not the trace."""
    from pathlib import Path

    from fuzzer.corpus.store import load

    entry = load(Path(__file__).parent.parent / "corpus" / "runtime-error-a812959dad2a.json")
    assert run_trial(entry.case, "cpu", target="export-graph").status == CLEAN
    assert within.localise(entry, "cpu").blame == "export-unlift"


def test_a_functional_program_never_runs_inputs_that_alias_otherwise_than_its_example():
    """``run_decompositions()`` and AOTInductor make writes outputs copied back, sound
    only for inputs aliased as the example was (export guards no aliasing): a call whose
    inputs share storage otherwise is exported anew, or refused, never run wrong;
    ``.module()`` of the training IR writes in place and runs any aliasing as eager."""
    import torch

    def fn(x, y):
        x.mul_(2)
        return y + 1

    assert exporting.sharing((torch.ones(2), torch.ones(2))) == (0, 1)
    t = torch.ones(4)
    assert exporting.sharing((t, t[1:], torch.ones(0), torch.ones(0))) == (0, 0, 2, 3)
    plain = exporting.Exported(fn, (None, None), targets.get(targets.EXPORT).lowering)
    plain(torch.ones(3), torch.ones(3))
    same = torch.ones(3)
    assert plain(same, same).tolist() == [3.0] * 3 and len(plain.made) == 1
    for piece in ("export-decomposed", "export-decomposed-graph"):
        decomposed = exporting.Exported(fn, (None, None), targets.get(piece).lowering)
        decomposed(torch.ones(3), torch.ones(3))
        same = torch.ones(3)
        try:
            got = decomposed(same, same).tolist()
        except exporting.ExportFailed:  # exporting the aliased example itself may fail
            got = None
        assert got in (None, [3.0] * 3) and len(decomposed.made) + (decomposed.error is not None) == 2
    package = exporting.Exported(fn, (None, None), targets.get(targets.AOTI).lowering)
    package.made = [exporting.Made(None, lambda *a: "the package", (0, 1), ((), ()))]
    lowered, rejected = package._accepting((same, same))
    assert lowered is None and isinstance(rejected, exporting.AliasedOtherwise)
    lowered, rejected = package._accepting((torch.ones(3), same))
    assert lowered() == "the package" and rejected is None
