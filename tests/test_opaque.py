"""The opaque-objects family (``fuzzer.program.families.opaque``, ``fuzzer.program.objects``):
custom ops handed a value-type object (a ``Scale``) and a reference-type one (a
``Cache`` whose state ORDERED ops write and read in place), and the objects' members
read in the program.  The contract's OPAQUE OBJECTS clauses, each on the forbidden and
the allowed side with stand-ins for the compiled function; the step, the generator and
the shrinker; and one real compile, in which torch recompiles for an unequal object."""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage
from fuzzer.judge.spots import STATE, Spot, spots_of
from fuzzer.judge.trial import asks_of, judge_case, judge_fresh
from fuzzer.program import codegen, custom_ops, forms, generate, sources
from fuzzer.program.families import opaque
from fuzzer.program.ir import InvalidProgram, Mode, Program, check
from fuzzer.reduce.order import simpler_forms
from fuzzer.reduce.signature import normal_form

#: c0 (a Cache seeded by x0) written, then read; q0 (a Scale seeded by x1) applied; the
#: members read in the program's text; the guarded member read by a pure op
BODY = [("o_put", ["x0"], None, {"site": 0, "obj": "c0"}),
        ("o_read", ["x1"], "v0", {"site": 1, "obj": "c0"}),
        ("o_scale", ["v0"], "v1", {"site": 2, "obj": "q0"}),
        ("c_member", ["v1"], "v2", {"obj": "c0"}),
        ("q_member", ["v2"], "v3", {"obj": "q0"}),
        ("c_method", ["v3"], "v4", {"obj": "c0"}),
        ("o_decayed", ["v4"], "v5", {"site": 3, "obj": "c0"})]
OBJECTS = (("c0", "Cache", "x0"), ("q0", "Scale", "x1"))
PROGRAM = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",)}, BODY, outputs=["v5"]), mode=Mode(objects=OBJECTS))
#: sizes 4 and 7 pick equal objects (the second of each class's choices), 2 another
BINDINGS = [{"s0": 4}, {"s0": 7}, {"s0": 2}]
#: the two first bindings alone: every call hands over equal objects
EQUAL = BINDINGS[:2]


def _lib():
    return custom_ops.install()


def _stand_in(program, change=lambda call, x0, x1, c0, q0: (c0, q0)):
    """A 'compiled' program: its own function run eagerly through its step, each call
    handed the objects ``change(call number, ...)`` gives for the call's own."""
    fn, step = codegen.build_with_step(program)
    calls = []

    def compiled(x0, x1, c0, q0):
        calls.append(1)
        return fn(x0, x1, *change(len(calls), x0, x1, c0, q0))
    return codegen.driven(step, compiled)


def _first(keep):
    """A ``change`` that keeps what ``keep(object)`` takes of the first call's objects:
    compiled code specialised once and never guarded."""
    first = {}

    def change(call, x0, x1, c0, q0):
        first.setdefault("q0", q0)
        first.setdefault("decay", c0.decay)
        return keep(first, c0, q0)
    return change


def _verdict(compiled, c):
    runs = execute(c, "cpu", compiled=compiled)
    for br in runs:
        br.compiled.coverage = Coverage(frames=1, graphs=1)
    return judge_case(c, runs, "cpu")


def _where(verdict):
    return [(d.kind, d.binding, d.where) for d in verdict.divergences]


# ------------------------------------------------------------------ the IR and the step

def test_the_mode_round_trips_and_each_object_is_held_as_its_forms_name_it():
    assert Program.from_json(PROGRAM.to_json()) == PROGRAM
    check(PROGRAM)
    for objects_ in [(("c0", "Scale", "x0"), ("q0", "Scale", "x1")),     # c0 named by Cache forms
                     (("q0", "Scale", "x1"),),                             # c0 not held
                     (("c0", "Cache", "v0"), ("q0", "Scale", "x1")),       # a seed that is no input
                     (("c0", "Cache", "x0"), ("q0", "Scale", "x1"), ("c0", "Cache", "x1"))]:
        with pytest.raises(InvalidProgram):
            check(dataclasses.replace(PROGRAM, mode=Mode(objects=objects_)))
    with pytest.raises(InvalidProgram):  # a form that takes no object names none
        check(dataclasses.replace(PROGRAM, body=PROGRAM.body + (dataclasses.replace(
            PROGRAM.body[0], form="e_log", attrs={"site": 9, "obj": "c0"}),)))


def test_the_step_makes_each_calls_objects_from_its_seeds_and_returns_the_states_last():
    fn, step = codegen.build_with_step(PROGRAM)
    x0, x1 = torch.randn(4), torch.randn(4)
    outs = step(fn, x0.clone(), x1.clone())
    lib = _lib()
    c0, q0 = lib.Cache.of(x0), lib.Scale.of(x1)
    direct = fn(x0.clone(), x1.clone(), c0, q0)
    assert len(outs) == 2 and torch.equal(outs[0], direct[0]) and torch.equal(outs[1], c0.data)
    assert not torch.equal(c0.data, x0)       # the state was written, not the seed
    assert q0 == lib.Scale.of(torch.randn(7)) and q0 != lib.Scale.of(torch.randn(2))
    assert "c0 = Cache.of(x0)" in codegen.source(PROGRAM) and "return outs + states" in codegen.source(PROGRAM)
    assert asks_of(PROGRAM).states == ("c0",)


#: PROGRAM as a module (x2 its buffer, scaled by q0's member) that holds its objects as
#: attributes, set by the step before every call (``Mode.object_attrs``)
HELD = dataclasses.replace(
    prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)}, BODY + [("q_member", ["x2"], "v6", {"obj": "q0"})],
         outputs=["v5", "v6"]),
    mode=Mode(objects=OBJECTS, module=("x2",), object_attrs=True))


class _Stale:
    """A 'compiled' module that keeps the first object set as each attribute of ``names``:
    compiled code that read the object through the module once and never guarded it."""

    def __init__(self, module, names):
        object.__setattr__(self, "module", module)
        object.__setattr__(self, "first", {n: None for n in names})

    def __getattr__(self, name):
        return getattr(self.module, name)

    def __setattr__(self, name, value):
        if name in self.first:
            value = self.first[name] = self.first[name] or value
        setattr(self.module, name, value)

    def __call__(self, *args):
        return self.module(*args)


def test_a_module_holds_its_objects_as_attributes_the_step_sets_before_each_call():
    assert Program.from_json(HELD.to_json()) == HELD
    check(HELD)
    text = codegen.source(HELD)
    assert "def forward(self, x0, x1):" in text and "    q0 = self.q0\n" in text and "    fn.c0 = c0\n" in text
    assert "outs = fn(x0, x1)" in text and "q0 = Scale.of(x1) at each call, set as the module's attribute" in \
        codegen.header(HELD)
    for mode in (Mode(objects=OBJECTS, object_attrs=True), dataclasses.replace(HELD.mode, objects=())):
        with pytest.raises(InvalidProgram):  # no module to hold them, or nothing to hold
            check(dataclasses.replace(HELD, mode=mode))
    handed = dataclasses.replace(HELD, mode=dataclasses.replace(HELD.mode, object_attrs=False))
    xs = [torch.randn(2) for _ in range(3)]
    for fn_step in (codegen.build_with_step(HELD), codegen.build_with_step(handed)):
        fn, step = fn_step
        outs = [step(fn, *(x.clone() for x in xs)) for _ in range(2)]
        assert torch.equal(outs[0][1], xs[2] * _lib().Scale.of(xs[1]).k)
    assert "objects on module" in normal_form(HELD) and "objects on module" not in normal_form(handed)


def test_an_honest_module_is_clean_and_a_stale_attribute_is_a_wrong_output_where_the_objects_differ():
    """Allowed: compiled code that reads each call's objects through the module.  Forbidden:
    one that keeps the first call's (equal objects at the first two bindings, another at
    the third)."""
    fn, step = codegen.build_with_step(HELD)
    assert _verdict(codegen.driven(step, fn), case(HELD, BINDINGS)).kinds() == []
    fn, step = codegen.build_with_step(HELD)
    stale = _verdict(codegen.driven(step, _Stale(fn, ("q0",))), case(HELD, BINDINGS))
    assert "wrong-output" in stale.kinds() and {b for _, b, _ in _where(stale)} == {2}, _where(stale)
    fn, step = codegen.build_with_step(HELD)
    assert _verdict(codegen.driven(step, _Stale(fn, ("q0",))), case(HELD, EQUAL)).kinds() == []


# ------------------------------------------------------------------ OBJECT STATE

def test_an_honest_compile_is_clean():
    verdict = _verdict(_stand_in(PROGRAM), case(PROGRAM, BINDINGS))
    assert verdict.status == contract.OK and verdict.kinds() == [], verdict.reason


def test_a_state_the_calls_never_reach_is_a_wrong_output_named_as_the_objects_state():
    """Forbidden: compiled code that writes another object than the one handed over
    (one baked in, a copy) leaves the caller's state unwritten."""
    lib = _lib()
    lost = _stand_in(PROGRAM, lambda call, x0, x1, c0, q0: (lib.Cache(c0.data.clone(), c0.decay), q0))
    c = case(PROGRAM, BINDINGS)
    verdict = _verdict(lost, c)
    assert _where(verdict) == [(contract.WRONG_OUTPUT, b, "state of c0") for b in range(3)]
    assert spots_of(c, verdict.divergences) == {Spot(STATE, "c0")}


def test_a_states_place_is_named_only_among_the_last_values():
    """The last ``len(states)`` values are states; a value before them keeps its name."""
    at = [contract.Divergence(contract.WRONG_OUTPUT, 0, f"output {k}", "x", ("values",),
                              (contract.Place(contract.OUTPUT, k),)) for k in range(3)]
    named = contract.object_states(at, 3, ("c0", "c1"))
    assert [d.where for d in named] == ["output 0", "state of c0", "state of c1"]
    assert contract.object_states(at, 3, ()) == at


# ------------------------------------------------------------------ VALUE GUARD

def test_a_value_object_of_an_earlier_call_is_a_wrong_output_where_the_objects_differ():
    """Forbidden: the specialisation of call 1 kept for call 3, whose Scale is unequal
    (a guard on __eq__ missing); allowed: the same for call 2, whose Scale is equal."""
    stale = _stand_in(PROGRAM, _first(lambda first, c0, q0: (c0, first["q0"])))
    verdict = _verdict(stale, case(PROGRAM, BINDINGS))
    assert _where(verdict) == [(contract.WRONG_OUTPUT, 2, "output 0")]
    assert _verdict(_stand_in(PROGRAM, _first(lambda first, c0, q0: (c0, first["q0"]))),
                    case(PROGRAM, EQUAL)).kinds() == []


def test_a_guarded_member_read_at_an_earlier_call_is_a_wrong_output_where_it_changed():
    """Forbidden: ``Cache.decay`` (USE_REAL, covered by the class's guard_fn) baked at call
    1 and kept for call 3, whose decay is another; the state written with it is wrong
    too, and so is what ``o_read``'s event saw of it."""
    def keep(first, c0, q0):
        c0.decay = first["decay"]
        return c0, q0
    verdict = _verdict(_stand_in(PROGRAM, _first(keep)), case(PROGRAM, BINDINGS))
    assert _where(verdict) == [(contract.WRONG_OUTPUT, 2, "output 0"), (contract.WRONG_OUTPUT, 2, "state of c0"),
                               (contract.EFFECT_LOG, 2, "event 1 (o_read@1) input 1")]
    assert _verdict(_stand_in(PROGRAM, _first(keep)), case(PROGRAM, EQUAL)).kinds() == []


@pytest.mark.compile
def test_torch_recompiles_for_an_unequal_object_and_keeps_every_clause():
    """The allowed side, compiled: Dynamo's graph (aot_eager) recompiles at the call whose
    Scale and decay are new (its guards), and the program is clean."""
    verdict = judge_fresh(case(PROGRAM, BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict
    assert verdict.recompiled == (2,)


@pytest.mark.compile
def test_torch_guards_the_objects_a_module_holds_and_keeps_every_clause():
    """The same through the module's attributes (aot_eager): Dynamo reaches the objects
    through ``self``, and its guards there recompile at the call whose objects are new
    (call 2; call 1 recompiles for the buffer's size, which a module's buffer specialises)."""
    verdict = judge_fresh(case(HELD, BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict
    assert verdict.recompiled == (1, 2)


#: x0 scaled by a Scale's op and by a Cache's member through its op, under backward()
TRAINED = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",)}, [
    ("o_scale", ["x0"], "v0", {"site": 0, "obj": "q0"}),
    ("o_decayed", ["v0"], "v1", {"site": 1, "obj": "c0"}),
], outputs=["v1"]), mode=Mode(objects=OBJECTS, grad=True))


def test_the_pure_object_ops_have_a_backward_that_reads_only_what_setup_context_kept():
    fn, step = codegen.build_with_step(TRAINED)
    x0, x1 = torch.randn(4), torch.randn(4)
    out, g0, g1, state = step(fn, x0, x1)
    lib = _lib()
    q0, c0 = lib.Scale.of(x1), lib.Cache.of(x0)
    assert torch.allclose(g0, torch.full((4,), q0.k * c0.decay)) and torch.equal(g1, torch.zeros(4))
    assert "return grad * ctx.k, None\n" in custom_ops.plain_snippet(custom_ops.with_backward(opaque.OP["o_scale"]))


@pytest.mark.compile
def test_an_honest_compile_of_the_object_ops_backward_is_clean():
    """The allowed side, compiled (aot_eager, dynamic): the backward of ops taking a value
    object and a reference object's member, the objects another at the third call."""
    verdict = judge_fresh(case(TRAINED, BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict


#: Scales made in the program's text, as a library's forward writes its kernel's
#: configuration: of constants (Scale(2.0, 1.0)), then of a size of the operand
MADE = prog({"x0": ("s0", "s1")}, [("o_scale_new", ["x0"], "v0", {"site": 0, "pick": 1}),
                                   ("o_scale_sized", ["v0"], "v1", {"site": 1, "dim": 1})], outputs=["v1"])
MADE_BINDINGS = [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 2}, {"s0": 2, "s1": 6}]


def test_a_value_object_made_in_the_text_names_no_object_and_its_class_is_bound():
    assert "Scale(2.0, 1.0)" in codegen.source(MADE) and "Scale(v0.shape[1], 0.0)" in codegen.source(MADE)
    assert not MADE.mode.objects and set(sources.names(MADE)) == {"Scale"}
    fn, step = codegen.build_with_step(MADE)
    x0 = torch.randn(3, 4)
    v1, = fn(x0)
    assert step is None and torch.allclose(v1, ((x0 * 2.0 + 1.0) * 4 + 0.0))
    with pytest.raises(InvalidProgram, match="pick"):
        check(prog({"x0": ("s0",)}, [("o_scale_new", ["x0"], "v0", {"site": 0, "pick": 7})], outputs=["v0"]))
    # toward an object of constants, then the plain call
    assert simpler_forms("o_scale_sized") == ("o_scale_new", "p_sin") and simpler_forms("o_scale_new") == ("p_sin",)


@pytest.mark.compile
def test_an_honest_compile_of_value_objects_made_in_the_text_is_clean():
    """The allowed side, compiled (aot_eager): Dynamo builds a Scale of constants in the
    graph, dynamic shapes; and one of a size where that size is static (automatic
    dynamic's first compile, one binding)."""
    made = dataclasses.replace(MADE, body=MADE.body[:1], outputs=("v0",))
    verdict = judge_fresh(case(made, MADE_BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict
    sized = dataclasses.replace(MADE, mode=Mode(dynamic="auto"))
    verdict = judge_fresh(case(sized, MADE_BINDINGS[:1]), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict


#: a Scale's op inside higher-order ops: each torch.cond branch (the object closed over),
#: a nested_compile_region applied twice (the object an argument); and its member read
#: in such a region
IN_HOPS = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",)}, [
    ("o_scale_cond", ["x0"], "v0", {"site": 0, "site2": 1, "obj": "q0"}),
    ("o_scale_layer", ["v0"], "v1", {"site": 2, "obj": "q0"}),
    ("q_member_layer", ["v1"], "v2", {"obj": "q0"}),
    ("q_member_layer", ["v2"], "v3", {"obj": "q0"}),
], outputs=["v3"]), mode=Mode(objects=(("q0", "Scale", "x1"),)))


def test_an_objects_call_in_a_cond_or_a_repeated_layer_is_written_as_a_library_writes_it():
    text = codegen.source(IN_HOPS)
    assert ("torch.cond(x0.sum() > 0, lambda t: torch.ops.dcefuzz.o_scale(t, q0, 0), "
            "lambda t: torch.ops.dcefuzz.o_scale(t * 0.5, q0, 1), (x0,))") in text
    assert "v1 = o_scale_layer2(o_scale_layer2(v0, q0), q0)" in text
    assert "@torch.compiler.nested_compile_region\ndef o_scale_layer2(t, q):\n    return torch.ops.dcefuzz.o_scale(t, q, 2)" in text
    # one layer for every read of the member: the same function, reused
    assert text.count("def q_member_layer(t, q):") == 1 and "v3 = q_member_layer(q_member_layer(v2, q0), q0)" in text
    fn, step = codegen.build_with_step(IN_HOPS)
    x0, x1 = torch.randn(4), torch.randn(4)
    q = _lib().Scale.of(x1)
    v3, = step(fn, x0, x1)
    v0 = torch.where(x0.sum() > 0, x0 * q.k + q.b, x0 * 0.5 * q.k + q.b)
    assert torch.allclose(v3, ((v0 * q.k + q.b) * q.k + q.b) * q.k ** 4)
    # toward the call beside its object, and the member read in the program's text
    assert [simpler_forms(s.form) for s in IN_HOPS.body] == [("o_scale",), ("o_scale",), ("q_member",), ("q_member",)]


@pytest.mark.compile
def test_an_honest_compile_of_an_objects_call_in_a_cond_or_a_layer_is_clean():
    """The allowed side, compiled (aot_eager, dynamic): the object closed over by each
    branch, and handed to a region applied twice, another Scale at the third call."""
    calls = dataclasses.replace(IN_HOPS, body=IN_HOPS.body[:2], outputs=("v1",))
    verdict = judge_fresh(case(calls, BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict


#: a Cache written and read in repeated layers, the object an argument of each region
CACHE_LAYERS = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",)}, [
    ("o_put_layer", ["x0"], "v0", {"site": 0, "obj": "c0"}),
    ("o_read_layer", ["v0"], "v1", {"site": 1, "obj": "c0"}),
], outputs=["v1"]), mode=Mode(objects=(("c0", "Cache", "x1"),)))


def test_a_caches_write_and_read_in_a_repeated_layer_are_written_as_a_serving_model_writes_them():
    text = codegen.source(CACHE_LAYERS)
    assert ("@torch.compiler.nested_compile_region\ndef o_put_layer0(t, q):\n"
            "    torch.ops.dcefuzz.o_put(q, t, 0)\n    return t + 1\n") in text
    assert ("@torch.compiler.nested_compile_region\ndef o_read_layer1(t, q):\n"
            "    return torch.ops.dcefuzz.o_read(q, t, 1)\n") in text
    assert "v0 = o_put_layer0(o_put_layer0(x0, c0), c0)" in text
    fn, step = codegen.build_with_step(CACHE_LAYERS)
    x0, x1 = torch.randn(4), torch.randn(4)
    c = _lib().Cache.of(x1)
    data = c.data
    for t in (x0, x0 + 1):  # each layer writes the state from what it is handed
        data = data * c.decay + t.sum()
    v0 = x0 + 2
    read = v0 * 0.5 + data.sum()
    v1, state = step(fn, x0, x1)
    assert torch.allclose(v1, read * 0.5 + data.sum()) and torch.allclose(state, data)
    # toward the op beside its object; the write's layer only where nothing reads its result
    assert [simpler_forms(s.form) for s in CACHE_LAYERS.body] == [("o_put",), ("o_read",)]


def test_a_layer_that_writes_its_cache_once_is_an_effect_log_and_a_wrong_state():
    """Forbidden: the region's second application reusing the first's effect (its write
    run once): one event lost, and the state written once."""
    program = dataclasses.replace(CACHE_LAYERS, body=CACHE_LAYERS.body[:1], outputs=("v0",))
    honest = _verdict(_stand_in_cache(program), case(program, BINDINGS))
    assert honest.status == contract.OK and honest.kinds() == [], honest.reason
    verdict = _verdict(_stand_in_cache(program, writes=1), case(program, BINDINGS))
    assert {k for k, _, _ in _where(verdict)} == {contract.EFFECT_LOG, contract.WRONG_OUTPUT}
    assert ("state of c0" in {w for _, _, w in _where(verdict)})


@pytest.mark.compile
def test_an_honest_compile_of_a_caches_layers_is_clean():
    """The allowed side, compiled (aot_eager, dynamic): the write's and the read's
    regions each applied twice, their four events in eager's order, the state judged,
    another Cache at the third call.  (Inductor fails to lower an ORDERED op on a
    reference object inside a region: a finding, not the allowed side.)"""
    verdict = judge_fresh(case(CACHE_LAYERS, BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict


def _stand_in_cache(program, writes=2):
    """A 'compiled' cache-layer program: its own text run eagerly, its layer
    ``o_put_layer0`` writing the cache at most ``writes`` times a call (later
    applications hand on ``t + 1`` without the write)."""
    fn, step = codegen.build_with_step(program)
    layer = fn.__globals__["o_put_layer0"]

    def compiled(x0, x1, c0):
        runs = []

        def counted(t, q):
            runs.append(1)
            return layer(t, q) if len(runs) <= writes else t + 1
        fn.__globals__["o_put_layer0"] = counted
        try:
            return fn(x0, x1, c0)
        finally:
            fn.__globals__["o_put_layer0"] = layer
    return codegen.driven(step, compiled)


#: objects that are graph inputs closed over by a map's body: a Cache's guarded member
#: read by a pure op, and a hoisted Scale's op
MAPPED = dataclasses.replace(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("o_decayed_map", ["x0"], "v0", {"site": 0, "obj": "c0"}),
    ("o_hscale_map", ["v0"], "v1", {"site": 1, "obj": "h0"}),
], outputs=["v1"]), mode=Mode(objects=(("c0", "Cache", "x1"), ("h0", "HScale", "x1"))))
MAPPED_BINDINGS = [{"s0": 3, "s1": 4}, {"s0": 2, "s1": 5}, {"s0": 4, "s1": 2}]


def test_an_objects_call_on_a_maps_rows_closes_over_the_object_and_shrinks_to_the_call():
    text = codegen.source(MAPPED)
    assert "v0 = torch._higher_order_ops.map(lambda t: torch.ops.dcefuzz.o_decayed(t, c0, 0), x0)" in text
    assert "v1 = torch._higher_order_ops.map(lambda t: torch.ops.dcefuzz.o_hscale(t, h0, 1), v0)" in text
    fn, step = codegen.build_with_step(MAPPED)
    x0, x1 = torch.randn(3, 4), torch.randn(3, 4)
    lib = _lib()
    c, h = lib.Cache.of(x1), lib.HScale.of(x1)
    v1, _ = step(fn, x0, x1)
    assert torch.allclose(v1, (x0 * c.decay) * h.k + h.b)
    assert [simpler_forms(s.form) for s in MAPPED.body] == [("o_decayed",), ("o_hscale",)]
    # a map runs over dim 0, which must hold a row at every binding
    with pytest.raises(InvalidProgram):
        check(dataclasses.replace(MAPPED, sym_min={"s0": 0}))
    # and has no autograd, as map documents: it never reads a value that requires grad
    with pytest.raises(InvalidProgram, match="has no backward"):
        check(dataclasses.replace(MAPPED, mode=dataclasses.replace(MAPPED.mode, grad=True)))


@pytest.mark.compile
def test_an_honest_compile_of_objects_closed_over_by_a_map_is_clean():
    """The allowed side, compiled (aot_eager, dynamic): the objects operands of the map,
    other objects at later calls.  (Inductor's lowering of a map to a while_loop refuses
    an object among its operands: a finding, not the allowed side.)"""
    verdict = judge_fresh(case(MAPPED, MAPPED_BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict


#: a hoisted Scale (``HScale``, registered hoist=True): beside its op, and in a layer
HOISTED = dataclasses.replace(prog({"x0": ("s0",), "x1": ("s0",)}, [
    ("o_hscale", ["x0"], "v0", {"site": 0, "obj": "h0"}),
    ("o_hscale_layer", ["v0"], "v1", {"site": 1, "obj": "h0"}),
], outputs=["v1"]), mode=Mode(objects=(("h0", "HScale", "x1"),)))


def test_a_hoisted_scale_is_registered_to_be_lifted_and_called_as_a_scale_is():
    from torch._library.opaque_object import should_hoist

    lib = _lib()
    assert should_hoist(lib.HScale) and not should_hoist(lib.Scale)
    assert lib.HScale(2.0, 1.0) == lib.HScale(2.0, 1.0) and lib.HScale(2.0, 1.0) != lib.Scale(2.0, 1.0)
    fn, step = codegen.build_with_step(HOISTED)
    x0, x1 = torch.randn(4), torch.randn(4)
    h = lib.HScale.of(x1)
    v1, = step(fn, x0, x1)
    assert torch.allclose(v1, ((x0 * h.k + h.b) * h.k + h.b) * h.k + h.b)
    assert [simpler_forms(s.form) for s in HOISTED.body] == [("p_sin",), ("o_hscale",)]
    # no hoisted object in a cond: eager torch.cond refuses it, so no form draws one
    assert "o_hscale_cond" not in forms.FORMS


@pytest.mark.compile
def test_an_honest_compile_of_a_hoisted_scale_is_clean():
    """The allowed side, compiled (aot_eager, dynamic): the hoisted object a graph input,
    another at the third call."""
    verdict = judge_fresh(case(HOISTED, BINDINGS), "cpu", "aot_eager")
    assert verdict.status == contract.OK and verdict.kinds() == [] and not verdict.untested, verdict


# ------------------------------------------------------------------ generation and shrinking

def test_the_feature_draws_objects_named_by_its_forms_and_seeded_by_inputs():
    drawn = [generate.generate(seed, features={opaque.FEATURE: 1.0}) for seed in range(40)]
    held = 0
    for c in drawn:
        c.validate()
        mode = c.program.mode
        named = {s.attrs["obj"] for s in c.program.body if "obj" in s.attrs}
        assert named == {name for name, _, _ in mode.objects}
        held += bool(mode.objects)
        if mode.objects:
            assert opaque.FEATURE in c.program.features()
    assert held >= 25
    assert generate.generate(7, features={opaque.FEATURE: 1.0}) == drawn[7]
    assert not any(generate.generate(seed).program.mode.objects for seed in range(40))


def test_the_shrinker_turns_each_object_call_into_the_plain_call_then_drops_the_objects():
    """Toward the plain forms: ``o_put`` toward ``e_log``, ``o_read`` toward ``e_tap``, the
    pure calls toward ``p_sin``, a member read toward a multiplication by a constant;
    an object no statement names any more goes with the mode pass."""
    c = case(PROGRAM, BINDINGS)
    assert [simpler_forms(s.form) for s in PROGRAM.body] == [("e_log",), ("e_tap",), ("p_sin",), ("scale",),
                                                             ("scale",), ("c_member", "scale"), ("p_sin",)]
    rewritten = run_pass("rewrite", c, stays_while(lambda c: True)).best
    assert not any(forms.form(s.form).object_class or "obj" in s.attrs for s in rewritten.program.body)
    assert run_pass("mode", rewritten, stays_while(lambda c: True)).best.program.mode == Mode()
    kept = run_pass("rewrite", c, stays_while(lambda c: any(s.form == "o_put" for s in c.program.body))).best
    assert kept.program.body[0].form == "o_put" and "obj" in kept.program.body[0].attrs
    assert "c0=Cache(x0)" in normal_form(PROGRAM)


def test_a_program_holding_objects_no_op_takes_still_defines_their_classes():
    """A shrink may leave objects that no op of the program takes (until the mode pass
    drops them): a script and a brief still define the classes its step makes them of."""
    held = dataclasses.replace(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]),
                               mode=Mode(objects=(("c0", "Cache", "x0"),)))
    check(held)
    for text in (sources.script(held), sources.script(held, brief=True)):
        assert "class Cache(OpaqueBase):" in text and "_REGISTER(Cache" in text
    assert "class Cache" not in sources.script(dataclasses.replace(held, mode=Mode()))


def test_each_class_is_of_the_opaque_base_with_the_members_programs_read_declared():
    """What the oldest supported release asks of an opaque type (torch 2.11 refuses a class
    outside the base at registration, and a value type's attribute read in compiled code
    that no member declares is a hard error in Dynamo): both classes, as the fuzzer
    registered them, are of the base the installed torch registers with, and every
    attribute a program reads is declared."""
    from torch._library import opaque_object

    scope = vars(custom_ops.install())
    for name, members in (("Scale", {"k", "b"}), ("Cache", {"decay", "scaled"})):
        cls = scope[name]
        assert issubclass(cls, scope["OpaqueBase"]), name
        assert all(opaque_object.get_member_type(cls, m) is not None for m in members), name
