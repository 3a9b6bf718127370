"""A user's ops (``--ops``) read by their real declaration: a written ``Tensor(a!)[]``,
hand-written schemas among them, and an out= op whose results are several buffers, each
of which a program may take."""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage
from fuzzer.judge.trial import judge_case
from fuzzer.program import codegen, forms
from fuzzer.program.ir import check

USER_OPS = '''
import torch


@torch.library.custom_op("listusr::scale_all", mutates_args=("xs",))
def scale_all(xs: list[torch.Tensor], y: torch.Tensor) -> None:
    for x in xs:
        x.mul_(0.5).add_(y)


_lib = torch.library.Library("listusr", "FRAGMENT")
_lib.define("shift_all(Tensor(a!)[] xs, Tensor y, *, float alpha=1.0) -> Tensor")


def _shift_all(xs, y, *, alpha=1.0):
    for x in xs:
        x.sub_(y, alpha=alpha)
    return y * 2.0


_lib.impl("shift_all", _shift_all, "CompositeExplicitAutograd")


@torch.library.register_fake("listusr::shift_all")
def _(xs, y, *, alpha=1.0):
    return torch.empty_like(y)


@torch.library.custom_op("listusr::sincos_out", mutates_args=("s", "c"), tags=torch.Tag.out)
def sincos_out(x: torch.Tensor, *, s: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    torch.sin(x, out=s)
    torch.cos(x, out=c)
    return s, c
'''

WHOLLY = Coverage(frames=1, graphs=1)


@pytest.fixture(scope="module")
def user_ops(tmp_path_factory):
    from fuzzer.user import selection
    folder = tmp_path_factory.mktemp("listusr")
    (folder / "listusr_ops.py").write_text(USER_OPS)
    return selection.select([str(folder / "listusr_ops.py")], only=True)


def _verdict(stand_in, c):
    runs = execute(c, "cpu", compiled=stand_in)
    for br in runs:
        br.compiled.coverage = WHOLLY
    return judge_case(c, runs, "cpu")


def test_a_written_tensor_list_is_read_as_written_elements(user_ops):
    from fuzzer.user import library
    for qualname in ("listusr::scale_all", "listusr::shift_all"):
        op = library.op(qualname)
        assert [(a.name, a.written, a.element_of) for a in op.tensors][:2] == [("xs[0]", True, "xs"),
                                                                               ("xs[1]", True, "xs")]
        assert op.mutates == (0, 1) and forms.form(qualname).mutates == (0, 1)
    assert not user_ops.findings and not user_ops.skipped, (user_ops.findings, user_ops.skipped)
    assert {"listusr::scale_all", "listusr::shift_all", "listusr::sincos_out"} <= set(user_ops.ops.user)


def test_a_tensor_list_is_passed_as_one_list(user_ops):
    assert (forms.form("listusr::scale_all").render(["x0", "x1", "x2"], {"site": 0}, [("s0",)] * 3)
            == "torch.ops.listusr.scale_all([x0, x1], x2)")
    text = forms.form("listusr::shift_all").render(["x0", "x1", "x2"], {"site": 0, "scalars": {"alpha": 2.0}},
                                                   [("s0",)] * 3)
    assert text == "torch.ops.listusr.shift_all([x0, x1], x2, alpha=2.0)"


def test_each_buffer_an_out_op_returns_has_a_form_listing_it_first(user_ops):
    first, second = forms.form("listusr::sincos_out"), forms.form("listusr::sincos_out[1]")
    assert first.result_aliases and second.result_aliases and second.mutates == (0, 2)
    assert (second.render(["v0", "x1", "v2"], {"take": 1}, [("s0",)] * 3)
            == "torch.ops.listusr.sincos_out(x1, s=v2, c=v0)[1]")
    typing = check(prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)},
                        [("listusr::sincos_out[1]", ["x2", "x0", "x1"], "v0", {"site": 0, "take": 1})]))
    assert typing.root["v0"] == "x2"


LIST_PROGRAM = prog({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",), "x3": ("s0",)}, [
    ("listusr::scale_all", ["x0", "x1", "x2"], None, {"site": 0}),
    ("listusr::sincos_out[1]", ["x2", "x0", "x3"], "v0", {"site": 1, "take": 1}),
    ("mul_", ["v0"], None, {"c": -1.0}),
], outputs=[])


def test_a_write_to_the_second_element_or_through_the_second_buffer_lost_is_flagged(user_ops):
    c = case(dataclasses.replace(LIST_PROGRAM, imports=user_ops.ops.imports))
    honest = _verdict(lambda *a: codegen.build(c.program)(*a), c)
    assert honest.status == contract.OK and honest.kinds() == [], honest.reason

    def loses_element(x0, x1, x2, x3):
        torch.ops.listusr.scale_all([x0, x1.clone()], x2)     # xs[1]'s write never reaches x1
        v0 = torch.ops.listusr.sincos_out(x0, s=x3, c=x2)[1]
        v0.mul_(-1.0)
        return ()

    def loses_buffer(x0, x1, x2, x3):
        torch.ops.listusr.scale_all([x0, x1], x2)
        v0 = torch.ops.listusr.sincos_out(x0, s=x3, c=x2)[1].clone()   # no longer x2
        v0.mul_(-1.0)
        return ()
    for lossy, where in ((loses_element, "input x1"), (loses_buffer, "input x2")):
        v = _verdict(lossy, c)
        assert v.kinds() == [contract.WRONG_MUTATION] and {d.where for d in v.divergences} == {where}


def test_programs_calling_them_are_legal_and_take_the_second_buffer(user_ops):
    from fuzzer.program.generate import generate
    called = set()
    for seed in range(60):
        program = generate(seed, ops=user_ops.ops).program
        typing = check(program)
        for s in program.body:
            called.add(s.form)
            if s.form == "listusr::sincos_out[1]":
                assert typing.root[s.out] == typing.root[s.args[0]] and s.attrs["take"] == 1
    assert {"listusr::scale_all", "listusr::shift_all", "listusr::sincos_out[1]"} <= called
