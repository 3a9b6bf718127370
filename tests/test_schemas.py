"""The families of hand-written schemas and calls between ops
(``fuzzer.program.families.schemas`` and ``calls``): each form declares to the IR
exactly what its op does, the ops are ones torch's functionalization takes, their
snippets run standalone (with the ops they call), a call site that is keyword-only
leaves a brief as a positional one does, and the shrinker takes them to the plain
forms.  opcheck on every op is ``test_custom_ops``'s."""

import re
import subprocess
import sys

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.program import codegen, custom_ops, features, forms, liveness, sources
from fuzzer.program.families import calls, schemas
from fuzzer.program.form_record import Form
from fuzzer.program.ir import InvalidProgram, check
from fuzzer.reduce.order import complexity
from fuzzer.reduce.passes.rewrite import statement_edits

custom_ops.install()

FAMILY_OPS = {op.name for op in schemas.OPS + calls.OPS}
FAMILY_FORMS = [f for f in forms.FORMS.values() if f.custom in FAMILY_OPS]
ATTRS = {"s_scale": {"c": 2.0}, "s_pair": {"take": 1}, "c_sinmix": {"alpha": 2.0}, "c_two": {"beta": -1.0, "take": 0}}


def _single(form: Form):
    """A program of one call of ``form`` on inputs x0.. of one shape, its result returned."""
    inputs = {f"x{k}": ("s0", "s1") for k in range(form.arity)}
    out = "v0" if form.returns else None
    return prog(inputs, [(form.name, list(inputs), out, {**ATTRS.get(form.custom, {}), "site": 0})],
                outputs=[out] if out else [], sym_min={"s0": 1, "s1": 1})


@pytest.mark.parametrize("form", FAMILY_FORMS, ids=lambda f: f.name)
def test_each_form_writes_exactly_the_operands_it_declares(form):
    """What ``Form.mutates`` says is what the kernel writes, no more; a result that
    ``Form.result_aliases`` says is operand 0's storage is, and every other is fresh."""
    program = _single(form)
    check(program)
    inputs = [torch.randn(3, 4) for _ in range(form.arity)]
    before = [t.clone() for t in inputs]
    outs = codegen.build(program)(*inputs)
    written = {k for k, (a, b) in enumerate(zip(inputs, before)) if not torch.equal(a, b)}
    assert written == set(form.mutates), form.name
    for out in outs:
        shared = [k for k, t in enumerate(inputs) if out.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()]
        assert shared == ([0] if form.result_aliases else []), form.name


def test_every_mutating_schema_is_one_functionalization_takes():
    """``auto_functionalize.can_auto_functionalize``: the ops' written arguments (a
    tensor, a list, an optional one) and their results (fresh, or the first written
    argument of an op tagged inplace) are all of the kinds it takes."""
    from torch._higher_order_ops.auto_functionalize import can_auto_functionalize
    for name in FAMILY_OPS:
        overload = getattr(torch.ops.dcefuzz, name).default
        assert can_auto_functionalize(overload) == overload._schema.is_mutable, name


def test_an_untagged_aliased_result_is_refused_so_no_form_calls_one():
    """The rule behind the inplace tag of ``s_inplace``: torch refuses an op whose
    result aliases an argument unless it is tagged inplace or out."""
    from torch._higher_order_ops.auto_functionalize import can_auto_functionalize
    lib = torch.library.Library("dcefuzz_refused", "FRAGMENT")
    lib.define("alias_back(Tensor(a!) a, Tensor b) -> Tensor(a!)")
    assert not can_auto_functionalize(torch.ops.dcefuzz_refused.alias_back.default)
    tagged = torch.ops.dcefuzz.s_inplace.default
    assert torch.Tag.inplace in tagged.tags and can_auto_functionalize(tagged)


def test_the_families_forms_are_under_their_features():
    assert {f.feature for f in FAMILY_FORMS} == {features.SCHEMAS, features.SCHEMA_ALIAS, features.OP_CALLS}
    assert {f.name for f in FAMILY_FORMS if f.feature == features.SCHEMA_ALIAS} == {"s_inplace", "s_silu_out"}


@pytest.mark.parametrize("tag", ["inplace", "out"])
def test_the_alias_feature_needs_the_inplace_and_out_tags(monkeypatch, tag):
    """``s_inplace`` returns its argument (tagged inplace), ``s_silu_out`` its buffer
    (tagged out): without the tag torch refuses the alias."""
    assert features.unavailable(features.SCHEMA_ALIAS) is None
    monkeypatch.delattr(torch.Tag, tag)
    assert f"torch.Tag.{tag}" in features.unavailable(features.SCHEMA_ALIAS)


def test_results_are_read_off_a_hand_written_schema():
    by_name = custom_ops.BY_NAME
    assert [by_name[n].returns for n in ("s_addto", "s_scale", "s_list", "s_pair", "s_opt", "s_inplace", "s_optlist",
                                         "s_silu")] == [False, False, False, True, True, True, True, True]
    with pytest.raises(ValueError, match="no signature"):
        custom_ops.CustomOp("nameless", "pure", "x = 1\n", "").returns


# ------------------------------------------------------------- an aliased result

ALIASED = prog({"x0": ("s0",), "x1": ("s0",)},
               [("clone", ["x0"], "v0", {}), ("s_inplace", ["v0", "x1"], "v1", {"site": 0}),
                ("mul_", ["v1"], None, {"c": 2.0}), ("p_sin", ["x1"], "v2", {"site": 1})],
               outputs=["v0"])


def test_an_aliased_result_is_its_operands_storage():
    typing = check(ALIASED)
    assert typing.root["v1"] == typing.root["v0"] == "v0"
    # a write through the result is a write to the returned value: live
    assert 2 in liveness.live_statements(ALIASED)
    assert liveness.dead_pure_sites(ALIASED) == {1}


def test_an_aliased_result_may_not_be_written_with_its_operand():
    program = prog({"x0": ("s0",)}, [("clone", ["x0"], "v0", {}), ("s_inplace", ["v0", "x0"], "v1", {"site": 0}),
                                     ("s_addto", ["v1", "v0"], None, {"site": 1})])
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(program)


# ------------------------------------------------------------- scripts and briefs

CALLS = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1"), "x2": ("s0", "s1")},
             [("clone", ["x0"], "v0", {}), ("clone", ["x1"], "v1", {}),
              ("c_two", ["v0", "v1", "x2"], "v2", {"beta": 2.0, "take": 0, "site": 0}),
              ("c_sinmix", ["v2", "x2"], "v3", {"alpha": None, "site": 1}),
              ("c_scaleadd", ["v1", "v3"], None, {"site": 2}),
              ("s_opt", ["v3", "v0"], "v4", {"site": 3}), ("s_list", ["v0", "v1", "x0"], None, {"site": 4})],
             outputs=["v0", "v1", "v4"])


def test_a_keyword_only_site_is_written_last_and_left_out_without_sites():
    text, plain = codegen.source(CALLS), codegen.source(CALLS, plain=True)
    assert "c_two(v0, v1, x2, beta=2.0, site=0)[0]" in text and "c_sinmix(v2, x2, site=1)" in text
    assert "c_two(v0, v1, x2, beta=2.0)[0]" in plain and "c_sinmix(v2, x2)" in plain
    assert "site" not in plain and "__no_site__" not in plain


def test_a_script_registers_the_ops_a_kernel_calls():
    text = custom_ops.source_for(["c_two"])
    assert text.index("dcefuzz::s_addto") < text.index("dcefuzz::c_two")
    assert "dcefuzz::p_sin" not in text
    assert custom_ops.with_callees(["c_scaleadd", "c_two"]) == {"c_scaleadd", "c_two", "p_sin", "m_scale", "s_addto"}


def _run_standalone(ops_text: str, program_text: str) -> str:
    script = (f"{ops_text}\n\n{program_text}\n\n"
              "torch.manual_seed(0)\n"
              "xs = [torch.randn(3, 4) for _ in range(3)]\n"
              "print([round(float(t.sum()), 4) for t in program(*xs)])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_program_of_the_families_runs_standalone_traced_and_plain():
    """The repro's text (header, snippets, callees) and a brief's plain text (no site,
    no ``_hit``, in a process of their own) compute the same values."""
    traced = _run_standalone(sources.script(CALLS), codegen.source(CALLS))
    plain_ops = sources.script(CALLS, brief=True, traced=False)
    assert not re.search(r"\bsite\b", plain_ops) and "_hit" not in plain_ops
    assert _run_standalone(custom_ops.HEADER + "\n" + plain_ops, codegen.source(CALLS, plain=True)) == traced


# ------------------------------------------------------------------- shrinking

def test_the_shrinker_takes_each_family_form_to_a_plain_one():
    """Under an oracle that only asks for the statements to stay, every hand-schema
    and calling form is rewritten to a form of the first library."""
    program = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1"), "x2": ("s0", "s1")},
                   [("s_addto", ["x0", "x1"], None, {"site": 0}),
                    ("s_pair", ["x1", "x2", "x0"], "v0", {"take": 1, "site": 1}),
                    ("c_sinmix", ["v0", "x0"], "v1", {"alpha": 2.0, "site": 2}),
                    ("s_list", ["x0", "x1", "x2"], None, {"site": 3}),
                    ("c_scaleadd", ["x2", "v1"], None, {"site": 4})],
                   outputs=["v1"])
    c = case(program)
    for edit in statement_edits(c):
        assert complexity(edit) < complexity(c) or edit == c
    run = run_pass("rewrite", c, stays_while(lambda cc: len(cc.program.body) == 5))
    shrunk = [s.form for s in run.best.program.body]
    assert not {forms.form(f).custom for f in shrunk} & FAMILY_OPS, shrunk
    assert all(set(s.attrs) <= {"site", "take"} for s in run.best.program.body)


# ------------------------------------------------------------------ a user's ops

HAND_SCHEMAS = '''
import torch

lib = torch.library.Library("handschema", "DEF")
lib.define("addto(Tensor(a!) a, Tensor b) -> ()")
lib.define("pair(Tensor(a!) a, Tensor(b!) b, Tensor c) -> (Tensor, Tensor)")
lib.define("optw(Tensor x, Tensor(a!)? acc) -> Tensor")
lib.define("listw(Tensor(a!)[] xs) -> ()")
lib.define("back(Tensor(a!) a, Tensor b) -> Tensor(a!)")


def _addto(a, b):
    a.add_(b)


def _pair(a, b, c):
    old = a.clone()
    a.add_(c)
    b.mul_(0.5).add_(old)
    return old * 2, b + c


def _optw(x, acc):
    if acc is not None:
        acc.add_(x)
    return torch.cos(x)


def _listw(xs):
    xs[1].add_(xs[0])
    xs[0].mul_(2.0)


def _back(a, b):
    return a.add_(b)


for name, kernel in [("addto", _addto), ("pair", _pair), ("optw", _optw), ("listw", _listw), ("back", _back)]:
    lib.impl(name, kernel, "CompositeExplicitAutograd")
torch.library.register_fake("handschema::addto", lambda a, b: None, lib=lib)
torch.library.register_fake("handschema::pair", lambda a, b, c: (torch.empty_like(a), torch.empty_like(a)), lib=lib)
torch.library.register_fake("handschema::optw", lambda x, acc: torch.empty_like(x), lib=lib)
torch.library.register_fake("handschema::listw", lambda xs: None, lib=lib)
torch.library.register_fake("handschema::back", lambda a, b: a, lib=lib)
'''


def test_a_users_hand_written_schemas_are_read_by_their_alias_annotations(tmp_path):
    """``--ops`` reads a ``Library.define`` op by its schema: each ``Tensor(a!)`` (two of
    them, or an optional one, which programs always give) is a written operand, and a
    program's call writes exactly those, and a written ``Tensor(a!)[]`` is two written
    operands; a result that aliases an argument untagged is skipped, saying why
    (docs/user-ops.md)."""
    from fuzzer.user import library
    (tmp_path / "hand_schemas.py").write_text(HAND_SCHEMAS)
    loaded = library.load(str(tmp_path / "hand_schemas.py"))
    ops = {op.qualname: op for op in loaded.ops}
    assert {q: (op.mutates, op.results) for q, op in ops.items()} == {
        "handschema::addto": ((0,), 0), "handschema::pair": ((0, 1), 2), "handschema::optw": ((1,), 1),
        "handschema::listw": ((0, 1), 0)}
    skipped = dict(loaded.skipped)
    assert set(skipped) == {"handschema::back"} and "alias" in skipped["handschema::back"]
    for qualname, op in ops.items():
        form = forms.form(qualname)
        assert form.mutates == op.mutates
        inputs = {f"x{k}": ("s0", "s1") for k in range(form.arity)}
        out = "v0" if form.returns else None
        attrs = {"site": 0, **({"take": 1} if qualname.endswith("pair") else {})}
        program = prog(inputs, [(qualname, list(inputs), out, attrs)], outputs=[out] if out else [])
        tensors = [torch.randn(3, 4) for _ in inputs]
        before = [t.clone() for t in tensors]
        codegen.build(program)(*tensors)
        assert {k for k, (a, b) in enumerate(zip(tensors, before)) if not torch.equal(a, b)} == set(op.mutates)
