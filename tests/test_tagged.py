"""Tagged in-place and out= ops (feature ``tagged-ops``): what the IR knows of their
results, and the contract's clauses on them, each on its forbidden and its allowed
side.

An in-place op tagged ``torch.Tag.inplace`` returns its argument, an out= op tagged
``torch.Tag.out`` the buffers it wrote: a write through the result is a write to the
argument, which the program's final inputs (clause ``wrong-mutation``) and returned
values (``wrong-output``) show.  The stand-ins play the compiled function, as in
``test_contract``; the allowed side is also compiled for real with Dynamo's graph
run as it is (no AOTAutograd), which keeps the alias.
"""

import dataclasses

import pytest
import torch
from backends import FAITHFUL
from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage
from fuzzer.judge.trial import judge_case, judge_fresh
from fuzzer.program import codegen, custom_ops, features, forms
from fuzzer.program.ir import InvalidProgram, check

custom_ops.install()
ops = torch.ops.dcefuzz
WHOLLY = Coverage(frames=1, graphs=1)

# x0 is written by the in-place op, then again through its result; x1 is an out=
# buffer, written with sin(v2) and returned through the result
WRITE_THROUGH = case(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [
    ("t_scale", ["x0"], "v0", {"site": 0}),
    ("mul_", ["v0"], None, {"c": -1.0}),
    ("p_sin", ["v0"], "v1", {"site": 1}),
    ("clone", ["v1"], "v2", {}),
    ("t_sin_out", ["x1", "v2"], "v3", {"site": 2}),
], outputs=["v1", "v3"]))


def verdict(stand_in, c=WRITE_THROUGH):
    runs = execute(c, "cpu", compiled=stand_in)
    for br in runs:
        if br.compiled is not None:
            br.compiled.coverage = WHOLLY
    return judge_case(c, runs, "cpu")


def kinds(stand_in, c=WRITE_THROUGH):
    v = verdict(stand_in, c)
    assert v.status == contract.OK, v.reason
    return v.kinds()


# ------------------------------------------------------------------ the IR

def test_the_result_of_a_tagged_op_has_its_operands_storage():
    typing = check(WRITE_THROUGH.program)
    assert typing.root["v0"] == "x0" and typing.root["v3"] == "x1"
    assert typing.root["v1"] == "v1"


def test_a_write_through_the_result_never_meets_the_argument_in_one_call():
    """The shared-storage rule holds through the alias: the result and its argument
    are one storage, so one call may not write one and read the other."""
    bad = prog({"x0": ("s0",)}, [("t_scale", ["x0"], "v0", {"site": 0}),
                                 ("m_addto", ["v0", "x0"], None, {"site": 1})])
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(bad)
    out_bad = prog({"x0": ("s0",), "x1": ("s0",)}, [("t_sin_out", ["x1", "x0"], "v0", {"site": 0}),
                                                    ("t_sin_out", ["v0", "x1"], "v1", {"site": 1})])
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(out_bad)


def test_programs_with_the_feature_call_tagged_ops_and_stay_legal():
    from fuzzer.program.generate import generate
    tagged = [s for seed in range(60) for s in generate(seed, features={features.TAGGED_OPS: 1.0}).program.body
              if forms.form(s.form).result_aliases]
    assert {s.form for s in tagged} >= {"t_scale", "t_addto", "t_sin_out"}


def test_the_feature_is_there_where_custom_op_takes_the_tags():
    assert features.unavailable(features.TAGGED_OPS) is None
    assert ops.t_scale.default._schema.returns[0].alias_info.is_write


def test_a_torch_whose_custom_op_takes_no_tags_has_no_feature_and_no_tagged_ops(monkeypatch):
    """Older torch: ``infer_schema`` (which ``custom_op`` calls) has no ``tags``; the
    feature is unavailable, never drawn, and the library leaves its ops unregistered."""
    def old_infer_schema(fn, *, mutates_args, op_name=None):
        return "(Tensor a) -> Tensor"
    monkeypatch.setattr(torch.library, "infer_schema", old_infer_schema)
    assert "cannot declare a tagged op" in features.unavailable(features.TAGGED_OPS)
    assert features.TAGGED_OPS not in features.draw(3, {features.TAGGED_OPS: 1.0})
    names = custom_ops.registrable()
    assert "m_scale" in names and not any(n.startswith("t_") for n in names)


# ------------------------------------------------------------------ forbidden

def _right(x0, x1):
    v0 = ops.t_scale(x0, 0)
    v0.mul_(-1.0)
    v1 = ops.p_sin(v0, 1)
    v3 = ops.t_sin_out(v1.clone(), 2, out=x1)
    return (v1, v3)


def test_a_write_through_the_result_lost_to_the_argument_is_flagged():
    def stand_in(x0, x1):
        v0 = ops.t_scale(x0, 0).clone()   # the result no longer is x0
        v0.mul_(-1.0)
        v1 = ops.p_sin(v0, 1)
        v3 = ops.t_sin_out(v1.clone(), 2, out=x1)
        return (v1, v3)
    v = verdict(stand_in)
    assert v.kinds() == [contract.WRONG_MUTATION]
    assert {d.where for d in v.divergences} == {"input x0"}


def test_a_write_to_an_out_buffer_lost_is_flagged():
    def stand_in(x0, x1):
        v0 = ops.t_scale(x0, 0)
        v0.mul_(-1.0)
        v1 = ops.p_sin(v0, 1)
        v3 = ops.t_sin_out(v1.clone(), 2, out=x1.clone())   # another buffer written
        return (v1, v3)
    v = verdict(stand_in)
    assert v.kinds() == [contract.WRONG_MUTATION]
    assert {d.where for d in v.divergences} == {"input x1"}


# ------------------------------------------------------------------ allowed

def test_the_faithful_program_is_clean():
    assert kinds(_right) == []


def test_a_returned_result_that_is_a_copy_of_the_argument_is_allowed():
    """Only what a run shows is judged: a returned result equal to its argument but
    not its storage (the alias is not held to, docs/contract.md)."""
    def stand_in(x0, x1):
        v1, v3 = _right(x0, x1)
        return (v1, v3.clone())
    assert kinds(stand_in) == []


def test_what_an_out_buffer_held_before_the_call_is_not_judged():
    """An out= buffer is write-only (``torch._library.utils.is_out``): the compiled op
    may be handed a fresh buffer whatever the old one held, its result copied back."""
    def stand_in(x0, x1):
        v0 = ops.t_scale(x0, 0)
        v0.mul_(-1.0)
        v1 = ops.p_sin(v0, 1)
        fresh = torch.full_like(x1, float("nan"))
        x1.copy_(ops.t_sin_out(v1.clone(), 2, out=fresh))
        return (v1, x1)
    assert kinds(stand_in) == []


@pytest.mark.compile
def test_dynamos_graph_run_as_it_is_keeps_the_alias_and_is_clean():
    v = judge_fresh(WRITE_THROUGH, "cpu", backend=FAITHFUL)
    assert v.status == contract.OK and v.kinds() == [], v.reason


# ------------------------------------------------------------------ a user's tagged ops (--ops)

USER_OPS = '''
import torch


@torch.library.custom_op("tagusr::axpy_", mutates_args=("x",), tags=torch.Tag.inplace)
def axpy_(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.mul_(2.0).add_(y)


@torch.library.custom_op("tagusr::sincos_out", mutates_args=("s", "c"), tags=torch.Tag.out)
def sincos_out(x: torch.Tensor, *, s: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    torch.sin(x, out=s)
    torch.cos(x, out=c)
    return s, c
'''


@pytest.fixture(scope="module")
def user_ops(tmp_path_factory):
    from fuzzer.user import selection
    folder = tmp_path_factory.mktemp("tagusr")
    (folder / "tagusr_ops.py").write_text(USER_OPS)
    return selection.select([str(folder / "tagusr_ops.py")], only=True)


def test_a_users_tagged_ops_are_read_by_their_alias_annotations(user_ops):
    from fuzzer.user import library
    axpy, sincos = library.op("tagusr::axpy_"), library.op("tagusr::sincos_out")
    assert axpy.aliases == (0,) and axpy.mutates == (0,)
    assert sincos.aliases == (1, 2) and sincos.mutates == (1, 2) and sincos.taken == (0, 1)
    assert not user_ops.findings and set(user_ops.ops.user) == {"tagusr::axpy_", "tagusr::sincos_out"}


def test_a_users_out_op_lists_its_returned_buffer_first_and_is_called_by_keyword(user_ops):
    form = forms.form("tagusr::sincos_out")
    assert form.result_aliases and form.mutates == (0, 2)
    text = form.render(["v0", "x1", "v2"], {"take": 0}, [("s0",)] * 3)
    assert text == "torch.ops.tagusr.sincos_out(x1, s=v0, c=v2)[0]"
    assert check(prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)},
                      [("tagusr::sincos_out", ["x0", "x1", "x2"], "v0", {"site": 0, "take": 0})])).root["v0"] == "x0"


def test_a_program_writing_through_a_users_tagged_result_is_clean_where_the_alias_is_kept(user_ops):
    p = prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)}, [
        ("tagusr::axpy_", ["x0", "x1"], "v0", {"site": 0}),
        ("mul_", ["v0"], None, {"c": -1.0}),
        ("tagusr::sincos_out", ["x1", "x0", "x2"], "v1", {"site": 1, "take": 0}),
        ("add_", ["v1"] + ["x0"], None, {}),
    ], outputs=["v0"])
    p = dataclasses.replace(p, imports=user_ops.ops.imports)
    c = case(p)
    assert kinds(lambda *a: codegen.build(p)(*a), c) == []

    def lost(x0, x1, x2):
        v0 = torch.ops.tagusr.axpy_(x0, x1).clone()     # the result is no longer x0
        v0.mul_(-1.0)
        v1 = torch.ops.tagusr.sincos_out(x0, s=x1, c=x2)[0]
        v1.add_(x0)
        return (v0,)
    assert verdict(lost, c).kinds() == [contract.WRONG_MUTATION]


def test_programs_calling_a_users_tagged_ops_are_legal(user_ops):
    from fuzzer.program.generate import generate
    called = set()
    for seed in range(40):
        program = generate(seed, ops=user_ops.ops).program
        typing = check(program)
        for s in program.body:
            if s.form.startswith("tagusr::") and s.out is not None:
                called.add(s.form)
                assert typing.root[s.out] == typing.root[s.args[0]]
    assert called == {"tagusr::axpy_", "tagusr::sincos_out", "tagusr::sincos_out[1]"}  # either buffer taken


# ------------------------------------------------------ the family module itself
def test_the_tagged_family_holds_its_word_and_this_torch_runs_it():
    from helpers import family_holds_its_word

    from fuzzer.program.families import tagged

    assert tagged.unavailable() is None
    family_holds_its_word(tagged)
