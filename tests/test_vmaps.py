"""Custom ops with vmap rules under ``torch.func.vmap`` (``families.vmaps``, feature
``vmap-rules``): what the generator draws, the text, the typing, what eager computes
(each vmap as its loop over the batch), how they shrink, and (marked ``compile``) that
compiled code computes what eager computes under the same vmap."""

import dataclasses

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.faults import _patching
from fuzzer.judge import trial
from fuzzer.judge.execute import run_eager
from fuzzer.program import codegen, custom_ops, features, forms
from fuzzer.program.families import vmaps
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check
from fuzzer.reduce.passes.rewrite import statement_edits

VMAPS = ("vmap_sin", "vmap_mix", "vmap_mix_row", "vmap_rowsum", "vmap2_sin", "vmap_scale", "vmap_addto",
         "vmap_addto_row")
TWINS = {f.name for f in vmaps.FORMS} - set(VMAPS)
#: every dim at least 1: a loop over a batch of none is an empty stack
DIMS = {"x0": ("s0", "s1", "s2"), "x1": ("s0", "s1", "s2"), "x2": ("s1", "s2")}
LEAST = {"s0": 1, "s1": 1, "s2": 1}


def _one(form, args, attrs, out="v0"):
    returns = forms.form(form).returns
    body = [(form, args, out if returns else None, {"site": 0, **attrs})]
    outputs = [out] if returns else []
    return prog(DIMS, body, outputs=outputs, sym_min=LEAST)


def test_drawn_programs_are_legal_and_use_every_vmap_and_never_a_twin():
    table = features.parse("vmap-rules=1.0")
    drawn = set()
    for seed in range(150):
        program = generate(seed, features=table).program
        check(program)
        drawn |= {s.form for s in program.body}
    assert set(VMAPS) <= drawn and not drawn & TWINS


def test_without_the_feature_no_vmap_is_drawn():
    for seed in range(40):
        body = generate(seed, features=features.ALL | {vmaps.FEATURE: 0.0}).program.body
        assert not {s.form for s in body} & {f.name for f in vmaps.FORMS}


def test_the_text_vmaps_a_lambda_that_passes_the_site_and_a_plain_text_drops_it():
    program = prog(DIMS, [("vmap_mix_row", ["x1", "x2"], "v0", {"site": 0, "out": 2}),
                          ("vmap2_sin", ["x0"], "v1", {"site": 1, "dim": 2, "inner": 0}),
                          ("vmap_addto", ["x0", "x1"], None, {"site": 2, "dim": 1})], outputs=["v0", "v1"],
                   sym_min=LEAST)
    text = codegen.source(program)
    assert ("v0 = torch.func.vmap(lambda a, b: torch.ops.dcefuzz.v_mix(a, b, 0), in_dims=(0, None), "
            "out_dims=2)(x1, x2)") in text
    assert ("v1 = torch.func.vmap(torch.func.vmap(lambda t: torch.ops.dcefuzz.v_sin(t, 1), in_dims=0), "
            "in_dims=2)(x0)") in text
    assert "torch.func.vmap(lambda a, b: torch.ops.dcefuzz.v_addto(a, b, 2), in_dims=(1, 1), out_dims=None)" in text
    assert "torch.ops.dcefuzz.v_mix(a, b), in_dims=(0, None)" in codegen.source(program, plain=True)


@pytest.mark.parametrize("form,attrs,dims", [
    ("vmap_sin", {"dim": 2, "out": 0}, ("s2", "s0", "s1")),
    ("vmap_rowsum", {"dim": 1, "out": 1}, ("s0", "s1")),
    ("vmap_rowsum", {"dim": 2, "out": 0}, ("s2", "s0")),
    ("vmap2_sin", {"dim": 1, "inner": 1}, ("s1", "s2", "s0")),
])
def test_a_vmap_puts_its_batch_where_out_says_and_keeps_each_examples_dims(form, attrs, dims):
    assert check(_one(form, ["x0"], attrs)).dims["v0"] == dims


@pytest.mark.parametrize("form,args,attrs", [
    ("vmap_sin", ["x0"], {"dim": 3, "out": 0}),      # no dim 3
    ("vmap_sin", ["x0"], {"dim": 0, "out": 3}),
    ("vmap_rowsum", ["x0"], {"dim": 0, "out": 2}),   # the result has one dim fewer
    ("vmap_mix_row", ["x0", "x1"], {"out": 0}),      # x1 is no row of x0
    ("vmap_addto", ["x0", "x2"], {"dim": 0}),        # nor of its dims
])
def test_a_vmap_the_ir_cannot_type_is_illegal(form, args, attrs):
    with pytest.raises(InvalidProgram):
        check(_one(form, args, attrs))


def test_a_loop_over_a_batch_that_may_be_empty_is_illegal_as_a_stack_of_none_is():
    program = prog({"x0": ("s0", "s1")}, [("loop_sin", ["x0"], "v0", {"site": 0, "dim": 0, "out": 0})],
                   outputs=["v0"], sym_min={"s0": 0, "s1": 1})
    with pytest.raises(InvalidProgram, match="needs it >= 1"):
        check(program)
    assert check(_one("vmap_sin", ["x0"], {"dim": 0, "out": 0})).dims["v0"]  # a vmap over none is fine


def test_a_batched_write_into_an_unbatched_tensor_raises_in_eager_so_every_form_batches_what_it_writes():
    """torch.func's documented in-place limit, which ``v_addto``'s rule keeps as torch's
    own in-place ops do: eager raises, so a program with it would be invalid."""
    custom_ops.install()
    a, b = torch.zeros(3), torch.ones(4, 3)
    with pytest.raises(ValueError, match="unbatched a"):
        torch.func.vmap(lambda x, y: torch.ops.dcefuzz.v_addto(x, y, 0), in_dims=(None, 0), out_dims=None)(a, b)
    for name in ("vmap_scale", "vmap_addto", "vmap_addto_row"):
        form = forms.form(name)
        program = _one(name, ["x0", "x1"][:form.arity] if name != "vmap_addto_row" else ["x0", "x2"], {"dim": 1})
        assert "in_dims=(None" not in codegen.source(program) and form.mutates == (0,)


#: each vmap and the loop over its batch it shrinks to, on operands and attributes both take
LOOPS = [
    ("vmap_sin", "loop_sin", ["x0"], {"dim": 1, "out": 2}),
    ("vmap_mix", "loop_mix", ["x0", "x1"], {"dim": 2, "out": 0}),
    ("vmap_mix_row", "loop_mix_row", ["x1", "x2"], {"out": 1}),
    ("vmap_rowsum", "loop_rowsum", ["x0"], {"dim": 2, "out": 1}),
    ("vmap_scale", "loop_scale", ["x0"], {"dim": 1}),
    ("vmap_addto", "loop_addto", ["x0", "x1"], {"dim": 0}),
    ("vmap_addto_row", "loop_addto_row", ["x0", "x2"], {}),
]


@pytest.mark.parametrize("vmapped,loop,args,attrs", LOOPS)
def test_each_vmap_computes_in_eager_what_its_loop_over_the_batch_computes(vmapped, loop, args, attrs):
    """The rules are right (each example's call, computed for the whole batch at once),
    and the typing is: eager's results have the dims the IR gives them."""
    bindings = [{"s0": 3, "s1": 4, "s2": 2}, {"s0": 1, "s1": 2, "s2": 5}]
    batched, looped = (run_eager(case(_one(f, args, attrs), bindings), "cpu") for f in (vmapped, loop))
    dims = check(_one(vmapped, args, attrs)).dims
    for b, l, binding in zip(batched, looped, bindings):
        assert b.eager.failure is None and l.eager.failure is None, (b.eager.failure, l.eager.failure)
        for mine, theirs in zip(b.eager.outputs + b.eager.inputs_after, l.eager.outputs + l.eager.inputs_after):
            torch.testing.assert_close(mine, theirs, rtol=0, atol=0)
        for out in b.eager.outputs:
            assert tuple(out.shape) == tuple(binding[d] for d in dims["v0"])
        assert b.eager.calls == [(forms.form(vmapped).custom, 0)]  # one call, the whole batch


#: where each vmap ends once every rewrite is taken: the first library's op of its kind,
#: or a row form's loop (the bare op takes operands of one shape)
SIMPLEST = {"vmap_sin": "p_sin", "vmap_mix": "p_sin", "vmap_mix_row": "loop_mix_row", "vmap_rowsum": "p_sin",
            "vmap_scale": "m_scale", "vmap_addto": "m_scale", "vmap_addto_row": "loop_addto_row"}


@pytest.mark.parametrize("vmapped,loop,args,attrs", LOOPS)
def test_a_vmap_shrinks_to_its_loop_keeping_its_dims_then_to_the_bare_call(vmapped, loop, args, attrs):
    c = case(_one(vmapped, args, attrs), [{"s0": 3, "s1": 4, "s2": 2}])
    offered = [e.program.body[0] for e in statement_edits(c)]
    assert any(s.form == loop and {k: s.attrs.get(k) for k in attrs} == attrs for s in offered)
    run = run_pass("rewrite", c, stays_while(lambda cc: True))
    assert [s.form for s in run.best.program.body] == [SIMPLEST[vmapped]]


def test_two_levels_shrink_to_one_then_to_the_bare_call():
    c = case(_one("vmap2_sin", ["x0"], {"dim": 0, "inner": 0}), [{"s0": 3, "s1": 4, "s2": 2}])
    assert "vmap_sin" in {e.program.body[0].form for e in statement_edits(c)}
    assert [s.form for s in run_pass("rewrite", c, stays_while(lambda cc: True)).best.program.body] == ["p_sin"]


# ------------------------------------------------------- real compiles

#: every vmap, each reading what an earlier one wrote or made
EVERY = prog(DIMS, [
    ("vmap_scale", ["x0"], None, {"site": 0, "dim": 1}),
    ("vmap_addto_row", ["x0", "x2"], None, {"site": 1}),
    ("vmap_addto", ["x1", "x0"], None, {"site": 2, "dim": 2}),
    ("vmap_sin", ["x1"], "v0", {"site": 3, "dim": 2, "out": 0}),
    ("vmap_mix", ["x0", "x1"], "v1", {"site": 4, "dim": 1, "out": 1}),
    ("vmap_mix_row", ["v1", "x2"], "v2", {"site": 5, "out": 1}),
    ("vmap_rowsum", ["v2"], "v3", {"site": 6, "dim": 2, "out": 1}),
    ("vmap2_sin", ["v0"], "v4", {"site": 7, "dim": 1, "inner": 1}),
], outputs=["v3", "v4"], sym_min=LEAST)


@pytest.mark.compile
def test_every_vmap_compiles_to_what_eager_computes_under_the_same_vmap():
    result = trial.run_trial(case(EVERY, [{"s0": 3, "s1": 4, "s2": 5}, {"s0": 2, "s1": 6, "s2": 3}]), "cpu",
                             confirm=False)
    assert result.status == "clean", result.verdict


@pytest.mark.compile
def test_a_batch_dim_the_trace_misplaces_is_a_wrong_output(monkeypatch):
    """The forbidden side: a rule's ``out_dims`` ignored while the program is traced
    (``custom_function_call_vmap_helper`` wraps each result at batch dim 0, on fake
    tensors only) leaves compiled code computing another value than eager's vmap."""
    from torch._functorch import autograd_function
    from torch._subclasses.fake_tensor import is_fake

    original = autograd_function._add_batch_dim

    def misplaced(output, out_dim, level):
        return original(output, 0 if is_fake(output) else out_dim, level)

    monkeypatch.setattr(autograd_function, "_add_batch_dim", misplaced)
    program = _one("vmap_sin", ["x0"], {"dim": 1, "out": 0})
    restore = _patching.caches_off()  # as a planted fault's: nothing compiled so is cached
    try:
        result = trial.run_trial(case(program, [{"s0": 3, "s1": 4, "s2": 5}]), "cpu", confirm=False)
    finally:
        restore()
    assert {f.kind for f in result.findings} == {"wrong-output"}, result.verdict


def test_the_pure_ops_have_a_backward_that_runs_on_the_batch():
    """In a program that takes gradients a vmap of a pure op reads an input that requires
    grad, and backward() gives the formula's gradient: cos(x) for v_sin, 0.5 and
    1 - tanh(y)^2 for v_mix, ones for v_rowsum (each summed by the loss)."""
    program = dataclasses.replace(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
        ("vmap_sin", ["x0"], "v0", {"site": 0, "dim": 1, "out": 0}),
        ("vmap_mix", ["x0", "x1"], "v1", {"site": 1, "dim": 0, "out": 0}),
        ("vmap_rowsum", ["x1"], "v2", {"site": 2, "dim": 0, "out": 0}),
    ], outputs=["v0", "v1", "v2"]), mode=Mode(grad=True))
    fn, step = codegen.build_with_step(program)
    x0, x1 = torch.randn(3, 4), torch.randn(3, 4)
    *_, g0, g1 = step(fn, x0, x1)
    assert torch.allclose(g0, torch.cos(x0) + 0.5)
    assert torch.allclose(g1, 1 - torch.tanh(x1) ** 2 + 1)
