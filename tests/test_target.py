"""What every target is (``fuzzer.judge.targets.target``): the interface each registered
target and piece fills, the default, and the debugging backends in the compiler's order;
nothing compiled."""

from fuzzer.judge import targets
from fuzzer.judge.targets.target import DEBUG_BACKENDS, DEFAULT, Target

#: the fields another stage reads off a target instead of naming it
FIELDS = ("name", "api", "help", "unsupported", "required", "declines", "judges_dce", "mode", "lowering",
          "under_compiled_autograd", "walk", "pipeline", "blame", "area", "through")


def test_every_target_and_piece_fills_the_interface():
    for target in (*targets.TARGETS.values(), *targets.PIECES.values()):
        for field in FIELDS:
            assert hasattr(target, field), (target.name, field)
        for method in ("build", "run", "unavailable"):
            assert callable(getattr(target, method)), (target.name, method)
        assert isinstance(target.walk, tuple) and isinstance(target.unsupported, tuple)


def test_the_default_is_a_registered_target_and_the_backends_go_from_least_to_all_of_the_compiler():
    assert DEFAULT in targets.TARGETS and targets.get(None) is targets.TARGETS[DEFAULT]
    assert DEBUG_BACKENDS == ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


def test_the_interface_is_a_protocol_no_target_inherits():
    assert getattr(Target, "_is_protocol", False)
