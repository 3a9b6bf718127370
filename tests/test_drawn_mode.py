"""The mode a program is drawn with (``fuzzer.program.drawn_mode``): from a stream of
its own, each part only with its feature on; hand-built inputs."""

from fuzzer.program import drawn_mode
from fuzzer.program import features as feats
from fuzzer.program.ir import DTYPES, MARKS, Input, Mode

INPUTS = [Input("x0", ("s0", "s1")), Input("x1", ("s1",)), Input("x2", ("s0",), "int8")]


def test_no_feature_draws_the_default_mode():
    assert drawn_mode.draw(3, frozenset(), INPUTS) == Mode()


def test_the_same_seed_draws_the_same_mode_and_seeds_differ():
    on = frozenset({feats.DYNAMIC_MODE, feats.STRIDED, feats.DTYPES})
    drawn = [drawn_mode.draw(seed, on, INPUTS) for seed in range(30)]
    assert drawn == [drawn_mode.draw(seed, on, INPUTS) for seed in range(30)]
    assert len(set(drawn)) > 5


def test_dynamic_true_is_always_marked_somewhere_and_marks_name_real_dims():
    for seed in range(40):
        mode = drawn_mode.draw(seed, frozenset({feats.DYNAMIC_MODE}), INPUTS)
        assert mode.dynamic in ("true", "auto")
        if mode.dynamic == "true":
            assert mode.marks, seed
        for name, dim, how in mode.marks:
            assert dim < len(next(i for i in INPUTS if i.name == name).dims) and how in MARKS


def test_a_mark_eager_cannot_run_is_drawn_as_its_substitute():
    swaps = {"unbacked": "dynamic", "maybe": "dynamic"}
    for seed in range(40):
        mode = drawn_mode.draw(seed, frozenset({feats.DYNAMIC_MODE}), INPUTS, refused=drawn_mode.Refused(marks=swaps))
        assert {how for _, _, how in mode.marks} <= {"dynamic"}


def test_strided_inputs_are_of_the_programs_dtype_not_aliased_and_not_held():
    for seed in range(40):
        mode = drawn_mode.draw(seed, frozenset({feats.STRIDED}), INPUTS, aliases=(("x1", "x0"),),
                               dense=frozenset())
        assert mode.strided == ("x0",), seed  # x1 is an alias, x2 an int8 input
        assert mode.aliases == (("x1", "x0"),)
    assert drawn_mode.draw(0, frozenset({feats.STRIDED}), INPUTS[:2], dense=frozenset({"x0"})).strided == ("x1",)


def test_the_dtype_feature_draws_a_low_precision_dtype_and_autograd_takes_gradients():
    dtypes = {drawn_mode.draw(seed, frozenset({feats.DTYPES}), INPUTS).dtype for seed in range(30)}
    assert dtypes == set(DTYPES[1:])
    assert drawn_mode.draw(0, frozenset({feats.AUTOGRAD}), INPUTS).grad
    assert not drawn_mode.draw(0, frozenset({feats.DTYPES}), INPUTS).grad
