"""The ``compiled-autograd`` target and its pieces (``fuzzer.judge.targets.compiled_autograd``):
its programs take gradients, and triage walks the backward over each debugging backend."""

from fuzzer.judge import compiled_autograd, targets
from fuzzer.judge.targets import compiled_autograd as target_module
from fuzzer.judge.targets.target import DEBUG_BACKENDS
from fuzzer.program import features


def test_its_programs_take_gradients_and_dead_calls_are_not_judged():
    target = target_module.TARGET
    assert features.AUTOGRAD in target.required and not target.judges_dce
    assert target.under_compiled_autograd and target.declines == compiled_autograd.DECLINES


def test_the_walk_is_a_piece_for_each_backend_of_the_backward_in_the_compilers_order():
    pieces = target_module.PIECES
    assert tuple(p.backward for p in pieces) == DEBUG_BACKENDS
    assert target_module.TARGET.walk == tuple(p.name for p in pieces)
    assert len({p.blame for p in pieces}) == len(pieces)
    for piece in pieces:
        assert targets.get(piece.name) is piece and piece.under_compiled_autograd
