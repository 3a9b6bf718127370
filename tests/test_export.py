"""The ``export`` target and its pieces (``fuzzer.judge.targets.export``): what it never
draws, what it does not judge, the pieces triage walks and what each blames; nothing
exported."""

from fuzzer.judge import exporting, targets
from fuzzer.judge.targets import export
from fuzzer.program import features


def test_it_draws_nothing_export_traces_otherwise_and_judges_no_dead_calls():
    target = export.TARGET
    for feature in (features.GRAPH_BREAK, features.MODULE_STATE, features.AUTOGRAD, features.AUTOGRAD_FUNCTION):
        assert feature in target.unsupported
    assert not target.judges_dce and target.declines == exporting.EXPORT_DECLINES
    assert target.lowering is not None and target.lowering.name == "module"


def test_triage_walks_the_graph_then_the_module_and_every_piece_is_registered_and_blames_a_stage():
    target = export.TARGET
    assert target.walk == ("export-graph", export.NAME)
    for piece in export.PIECES:
        assert targets.get(piece.name) is piece and piece.blame and piece.walk == ()
        assert piece.name not in targets.TARGETS  # a piece is never a campaign's target
