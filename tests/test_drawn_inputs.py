"""The inputs a program is drawn with (``fuzzer.program.drawn_inputs``): every symbol the
bare dim of some input, a user's op's inputs after the drawn ones, an input that aliases
the first, a carried state's input and symbol; and a program that takes gradients has
none of a fixed dtype, none aliased, no window and no state.  Drawn from fixed streams,
no body."""

import random

from fuzzer.limits import GenLimits
from fuzzer.program import drawn_inputs
from fuzzer.program import features as feats

SYMBOLS = ("s0", "s1", "s2")
INT8 = (["s0"], "int8")


def _draw(seed, on=frozenset(), extra=(), grad=False, symbols=SYMBOLS):
    sym_min = {s: 1 for s in symbols}
    drawn = drawn_inputs.draw(seed, random.Random(seed), symbols, sym_min, frozenset(on), list(extra), GenLimits(),
                              grad)
    return drawn, sym_min


def test_every_symbol_is_the_bare_dim_of_an_input_and_the_draw_is_the_seeds():
    for seed in range(30):
        drawn, _ = _draw(seed)
        assert {s for dims in drawn.shapes for s in dims} == set(SYMBOLS), seed
        assert drawn.symbols == SYMBOLS and drawn.aliases == [] and drawn.state is None
        assert drawn.dtypes == [None] * len(drawn.shapes) and drawn == _draw(seed)[0]


def test_a_user_ops_inputs_come_after_the_drawn_ones_with_their_dtypes():
    drawn, _ = _draw(3, extra=[INT8, (["s1", "s1"], None)])
    assert drawn.shapes[-2:] == [["s0"], ["s1", "s1"]] and drawn.dtypes[-2:] == ["int8", None]


def test_an_aliased_input_has_the_first_inputs_dims_and_a_state_its_own_symbol():
    drawn, sym_min = _draw(4, on={feats.ALIASED, feats.MODULE_CARRY})
    state = drawn.state
    assert state is not None and drawn.symbols == SYMBOLS + (state.symbol,)
    assert sym_min[state.symbol] == state.length and drawn.shapes[-1] == list(state.dims)
    aliased = drawn.shapes[-2]
    assert drawn.aliases == [(f"x{len(drawn.shapes) - 2}", "x0")] and aliased == drawn.shapes[0]


def test_a_program_that_takes_gradients_has_only_float_inputs_of_its_own():
    on = {feats.ALIASED, feats.MODULE_CARRY, feats.OVERLAPPING}
    for seed in range(20):
        drawn, sym_min = _draw(seed, on=on, extra=[INT8], grad=True)
        assert drawn.aliases == [] and drawn.state is None and not drawn.windows, seed
        assert all(d is None for d in drawn.dtypes) and set(sym_min) == set(SYMBOLS)
    # without gradients the same features do draw windows: the test above is not empty
    assert any(_draw(seed, on=on, extra=[INT8])[0].windows for seed in range(20))
