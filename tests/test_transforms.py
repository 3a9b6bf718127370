"""A user's op under the transforms its library registered rules for
(``fuzzer.user.transforms``): found by its dispatch keys, drawn under ``torch.func.vmap``
and in autocast regions, doing in eager what its typing says, and judged."""

import textwrap

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.trial import judge_case
from fuzzer.program import codegen, features, forms
from fuzzer.program.families import autocasts, vmaps
from fuzzer.program.generate import generate
from fuzzer.program.ir import check
from fuzzer.user import library, selection, transforms

RULES = textwrap.dedent('''
    """A library whose ops batch and cast by rules of their own."""
    import torch

    DCEFUZZ_SIGNATURES = {"rules::rowsum": "(n,k)->(n)"}


    @torch.library.custom_op("rules::scale", mutates_args=())
    def scale(x: torch.Tensor) -> torch.Tensor:
        return x * 3.0


    @scale.register_fake
    def _(x):
        return torch.empty_like(x)


    @scale.register_vmap
    def _(info, in_dims, x):
        return torch.ops.rules.scale(x), in_dims[0]


    torch.library.register_autocast("rules::scale", "cpu", torch.bfloat16)


    @torch.library.custom_op("rules::rowsum", mutates_args=())
    def rowsum(x: torch.Tensor) -> torch.Tensor:
        return x.sum(-1)


    @rowsum.register_fake
    def _(x):
        return x.new_empty(x.shape[:-1])


    @rowsum.register_vmap
    def _(info, in_dims, x):
        return torch.ops.rules.rowsum(x.movedim(in_dims[0], 0)), 0


    @torch.library.custom_op("rules::bump_", mutates_args=("x",))
    def bump_(x: torch.Tensor) -> None:
        x.add_(1.0)


    @bump_.register_fake
    def _(x):
        return None


    @bump_.register_vmap
    def _(info, in_dims, x):
        torch.ops.rules.bump_(x)
        return None, None


    @torch.library.custom_op("rules::plain", mutates_args=())
    def plain(x: torch.Tensor) -> torch.Tensor:
        return x + 1.0


    @plain.register_fake
    def _(x):
        return torch.empty_like(x)
''')


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    (folder / "rules_ops.py").write_text(RULES)
    path = str(folder / "rules_ops.py")
    return library.load(path), selection.select([path], only=True, check=False)


def test_the_rules_a_library_registered_are_found_and_give_their_forms(rules):
    lib, _ = rules
    ops = {op.qualname: op for op in lib.ops}
    assert (ops["rules::scale"].vmap_rule, ops["rules::scale"].autocast_rule) == (True, True)
    assert (ops["rules::rowsum"].vmap_rule, ops["rules::rowsum"].autocast_rule) == (True, False)
    assert (ops["rules::plain"].vmap_rule, ops["rules::plain"].autocast_rule) == (False, False)
    names = {f.name for op in lib.ops for f in transforms.forms_of(op)}
    assert names == {"rules::scale@vmap", "rules::scale@autocast", "rules::rowsum@vmap", "rules::bump_@vmap"}
    for name in names:
        form = forms.form(name)  # registered with the module
        assert form.feature in (vmaps.FEATURE, autocasts.FEATURE) and form.site_traced is False
    assert forms.form("rules::bump_@vmap").mutates == (0,) and not forms.form("rules::bump_@vmap").returns


def test_a_vmapped_op_computes_each_example_where_its_typing_puts_the_batch(rules):
    x = torch.randn(4, 3, 5)
    p = prog({"x0": ("s0", "s1", "s2")}, [("rules::rowsum@vmap", ["x0"], "v0", {"site": 0, "dim": 1, "out": 1})],
             ["v0"])
    assert check(p).dims["v0"] == ("s0", "s1")  # each example (s0, s2) summed to (s0,), the batch at 1
    (v0,) = codegen.build(p)(x)
    assert torch.allclose(v0, torch.stack([x[:, i].sum(-1) for i in range(3)], 1))
    written = prog({"x0": ("s0", "s1")}, [("rules::bump_@vmap", ["x0"], None, {"site": 0, "dim": 1, "out": 0})], [])
    y = torch.zeros(2, 3)
    codegen.build(written)(y)
    assert torch.equal(y, torch.ones(2, 3))  # every example written in place


def test_an_op_in_a_region_computes_in_its_rules_dtype_and_comes_back_in_its_operands(rules):
    x = torch.randn(4, 3)
    p = prog({"x0": ("s0", "s1")}, [("rules::scale@autocast", ["x0"], "v0", {"site": 0, "region": "float16"})],
             ["v0"])
    assert check(p).dims["v0"] == ("s0", "s1")
    (v0,) = codegen.build(p)(x)
    assert v0.dtype == torch.float32 and torch.equal(v0, (x.bfloat16() * 3.0).float())


def test_with_the_features_on_the_user_ops_are_drawn_under_their_transforms(rules):
    _, chosen = rules
    table = features.parse("vmap-rules=1.0,autocast-rules=1.0")
    drawn = set()
    for seed in range(60):
        program = generate(seed, features=table, ops=chosen.ops).program
        check(program)
        drawn |= {s.form for s in program.body if "@" in s.form}
    assert {"rules::scale@vmap", "rules::scale@autocast", "rules::rowsum@vmap", "rules::bump_@vmap"} <= drawn


@pytest.mark.compile
def test_a_faithful_compile_of_the_transforms_is_clean(rules):
    p = prog({"x0": ("s0", "s1")}, [("rules::scale@vmap", ["x0"], "v0", {"site": 0, "dim": 0, "out": 1}),
                                     ("rules::scale@autocast", ["x0"], "v1", {"site": 1, "region": "bfloat16"}),
                                     ("rules::bump_@vmap", ["x0"], None, {"site": 2, "dim": 1, "out": 0})],
             ["v0", "v1"])
    c = case(p, [{"s0": 3, "s1": 4}, {"s0": 5, "s1": 2}])
    found = judge_case(c, execute(c, "cpu", backend="aot_eager"), "cpu")
    assert found.status == contract.OK and found.divergences == [] and found.untested == [], found
