"""The program's opaque objects (``fuzzer.program.objects``): which objects a body
holds and what seeds them, what a mode's objects may be, which object a statement may
name, and the step's text that makes them and returns their states.  What the objects
do in eager torch and compiled: ``tests/test_opaque.py``."""

import pytest

from fuzzer.program import objects
from fuzzer.program.form_record import Illegal
from fuzzer.program.ir import Input, Mode, Stmt

INPUTS = (Input("x0", ("s0",)), Input("x1", ("s0",)), Input("i0", ("s0",), dtype="int64"))
DIMS = {inp.name: inp.dims for inp in INPUTS}
GIVEN = {inp.name: inp.dtype for inp in INPUTS}
BODY = [Stmt("o_scale", ("x0",), "v0", {"site": 0, "obj": "q0"}), Stmt("p_sin", ("v0",), "v1", {"site": 1}),
        Stmt("o_put", ("x1",), None, {"site": 2, "obj": "c1"}), Stmt("o_read", ("x0",), "v2", {"site": 3, "obj": "c1"})]


def test_a_body_holds_each_object_it_names_once_in_order_seeded_by_an_input_of_the_programs_dtype():
    held = objects.hold(Mode(), BODY, INPUTS, seed=5)
    assert [(n, c) for n, c, _ in held.objects] == [("q0", "Scale"), ("c1", "Cache")]
    assert {s for _, _, s in held.objects} <= {"x0", "x1"}  # never the int64 input
    assert objects.hold(Mode(), BODY, INPUTS, seed=5) == held  # replayable from the seed
    assert objects.hold(Mode(), BODY[1:2], INPUTS, seed=5) == Mode()  # names none: the mode as it was


@pytest.mark.parametrize("entries, wrong", [
    ((("q0", "Scale", "x0"), ("c0", "Cache", "x1")), None),
    ((("q0", "Tensor", "x0"),), "no class"),
    ((("c0", "Scale", "x0"),), "not a name of Scale's"),
    ((("q2", "Scale", "x0"),), "not a name of Scale's"),  # only PER_CLASS of a class
    ((("q0", "Scale", "x0"), ("q0", "Scale", "x1")), "named twice"),
    ((("q0", "Scale", "i0"),), "no input of the program's dtype"),
    ((("q0", "Scale", "v9"),), "no input of the program's dtype"),
])
def test_a_modes_objects_are_known_names_of_known_classes_each_once_seeded_by_an_input(entries, wrong):
    found = objects.problem(entries, DIMS, GIVEN)
    assert found is None if wrong is None else wrong in found


def test_a_statement_names_an_object_of_its_forms_class_and_one_whose_form_takes_none_names_none():
    held = (("q0", "Scale", "x0"), ("c0", "Cache", "x1"))
    objects.check_named("Scale", "q0", held)
    objects.check_named(None, None, held)
    for wanted, named in (("Scale", "c0"), ("Cache", "c1"), ("Scale", None), (None, "q0")):
        with pytest.raises(Illegal):
            objects.check_named(wanted, named, held)


def test_the_step_makes_every_object_and_returns_the_reference_objects_states_only():
    held = (("q0", "Scale", "x0"), ("c0", "Cache", "x1"), ("c1", "Cache", "x0"))
    assert objects.step_lines(held) == ["    q0 = Scale.of(x0)", "    c0 = Cache.of(x1)", "    c1 = Cache.of(x0)"]
    assert objects.states(held) == ("c0", "c1")
    assert objects.state_text(held) == "(c0.data, c1.data,)"
    assert objects.state_text(held[:1]) == "" and objects.states(held[:1]) == ()
    assert objects.declared(held) == {"q0": "Scale", "c0": "Cache", "c1": "Cache"}


def test_the_classes_are_registrable_on_this_torch_and_their_text_registers_both_kinds():
    assert objects.unavailable() is None
    assert "class Scale" in objects.SOURCE and "class Cache(OpaqueBase)" in objects.SOURCE
    assert "_REGISTER(Scale, typ=_VALUE" in objects.SOURCE and "typ=_REFERENCE" in objects.SOURCE
