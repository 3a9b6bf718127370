"""A user's op taking an opaque value object (``fuzzer.user.values``): read with the
objects its module gives, written in programs as their ``__fx_repr__`` text, judged,
and bound by import in a repro script; what cannot be written is skipped with why."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
import torch
from helpers import case, prog
from torch._dynamo import list_backends, register_backend

from fuzzer.judge import contract
from fuzzer.program import codegen, sources
from fuzzer.program.generate import OpSet, generate
from fuzzer.user import declared, library, values

pytestmark = pytest.mark.skipif(
    not hasattr(__import__("torch._library", fromlist=["opaque_object"]).opaque_object, "is_opaque_value_type"),
    reason="this torch has no opaque value types")

MODULE = "uval_ops"
#: the library: a value-type configuration (its kind's name is 2.14's where that torch
#: renamed it), an op taking it, the objects programs pass; and a reference type, an
#: op taking it, a value type without objects given, and one whose text lies
LIBRARY = textwrap.dedent('''
    import torch
    from torch._library import opaque_object as _opaque

    if hasattr(_opaque, "register_custom_class"):
        from torch._custom_class_base import CustomClassBase as _Base
        _REGISTER, _VALUE, _REFERENCE = _opaque.register_custom_class, "constant", "symbolic"
    else:
        from torch._opaque_base import OpaqueBase as _Base
        _REGISTER, _VALUE, _REFERENCE = _opaque.register_opaque_type, "value", "reference"


    class QCfg(_Base):
        def __init__(self, scale, shift):
            self.scale, self.shift = scale, shift

        def __eq__(self, other):
            return isinstance(other, QCfg) and (self.scale, self.shift) == (other.scale, other.shift)

        def __hash__(self):
            return hash((self.scale, self.shift))

        def __fx_repr__(self):
            return f"QCfg({self.scale!r}, {self.shift!r})", {"QCfg": QCfg}


    class Liar(QCfg):
        def __fx_repr__(self):
            return "Liar(0.0, 0.0)", {"Liar": Liar}


    class Handle(_Base):
        def __init__(self):
            self.state = torch.zeros(1)


    _MEMBERS = {"scale": _opaque.MemberType.USE_REAL, "shift": _opaque.MemberType.USE_REAL}
    _REGISTER(QCfg, typ=_VALUE, members=_MEMBERS)
    _REGISTER(Liar, typ=_VALUE, members=_MEMBERS)
    _REGISTER(Handle, typ=_REFERENCE)


    @torch.library.custom_op("uval::affine", mutates_args=())
    def affine(x: torch.Tensor, cfg: QCfg) -> torch.Tensor:
        return x * cfg.scale + cfg.shift


    @affine.register_fake
    def _(x, cfg):
        return torch.empty_like(x)


    @torch.library.custom_op("uval::given_none", mutates_args=())
    def given_none(x: torch.Tensor, cfg: QCfg) -> torch.Tensor:
        return x * cfg.scale


    @torch.library.custom_op("uval::lying", mutates_args=())
    def lying(x: torch.Tensor, cfg: Liar) -> torch.Tensor:
        return x * cfg.scale


    @torch.library.custom_op("uval::handled", mutates_args=())
    def handled(x: torch.Tensor, h: Handle) -> torch.Tensor:
        return x + h.state


    DCEFUZZ_SCALARS = {"uval::affine": {"cfg": [QCfg(2.0, 1.0), QCfg(-0.5, 0.25)]},
                       "uval::lying": {"cfg": [Liar(2.0, 1.0)]}}
''')

SWAP_VALUE = "dcefuzz_test_swap_value"


def _swap_value(gm, example_inputs):
    """A compiler that hands the op another configuration than the program's."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and "uval.affine" in str(node.target):
            cfg = node.args[1]
            node.args = (node.args[0], type(cfg)(cfg.scale + 1.0, cfg.shift))
    gm.recompile()
    return gm.forward


if SWAP_VALUE not in list_backends(exclude_tags=()):
    register_backend(_swap_value, name=SWAP_VALUE)


@pytest.fixture(scope="module")
def uval(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uval")
    (folder / f"{MODULE}.py").write_text(LIBRARY)
    return library.load(str(folder / f"{MODULE}.py"))


def _program(lib, text: str):
    body = [("uval::affine", ["x0"], "v0", {"site": 0, "scalars": {"cfg": text}})]
    return dataclasses.replace(prog({"x0": ("s0",)}, body, outputs=["v0"]), imports=(lib.ref.imported,))


def test_a_value_argument_takes_the_objects_given_as_their_text(uval):
    op = library.op("uval::affine")
    cfg, = op.scalars
    assert cfg.type == values.KIND and cfg.values == ("QCfg(2.0, 1.0)", "QCfg(-0.5, 0.25)")
    made = cfg.python(cfg.values[1], {}, "cpu")
    assert type(made).__name__ == "QCfg" and (made.scale, made.shift) == (-0.5, 0.25)


def test_what_cannot_be_written_is_skipped_with_why(uval):
    why = dict(uval.skipped)
    assert "an opaque reference type" in why["uval::handled"] and "own classes only" in why["uval::handled"]
    assert "give the objects programs pass" in why["uval::given_none"] and "DCEFUZZ_SCALARS" in why["uval::given_none"]
    assert "makes an object unequal to it" in why["uval::lying"]
    assert sorted(uval.qualnames) == ["uval::affine"]


def test_a_name_a_program_binds_is_refused():
    class Shadow:
        __module__, __qualname__ = "somewhere", "Shadow"

    with pytest.raises(values.BadValue, match="'x0', which a program's own text may bind"):
        values._check_name("x0", Shadow)
    with pytest.raises(values.BadValue, match="which a script cannot import"):
        values._check_name("Local", type("Local", (), {"__qualname__": "f.<locals>.Local"}))


def test_programs_draw_the_values_and_write_them_in_the_call(uval):
    ops = OpSet(builtin=False, user=("uval::affine",), imports=(uval.ref.imported,))
    drawn = [generate(seed, ops=ops).program for seed in range(12)]
    calls = [s.attrs["scalars"]["cfg"] for p in drawn for s in p.body if s.form == "uval::affine"]
    assert set(calls) == {"QCfg(2.0, 1.0)", "QCfg(-0.5, 0.25)"}
    text = codegen.source(next(p for p in drawn if p.user_ops()))
    assert "torch.ops.uval.affine(" in text and "QCfg(" in text


def test_the_value_is_judged_and_a_script_binds_it(uval, tmp_path):
    """Compiled through Dynamo, the object is a constant of the graph: a compiler that
    hands the op another one is a wrong output, one that keeps it is clean; the repro
    script binds the class by import and runs the program."""
    from fuzzer.judge.execute import execute
    from fuzzer.judge.trial import judge_case

    c = case(_program(uval, "QCfg(2.0, 1.0)"), bindings=[{"s0": 3}])
    runs = execute(c, "cpu", backend="eager")
    assert all(br.eager.failure is None for br in runs) and judge_case(c, runs, "cpu").kinds() == []
    wrong = judge_case(c, execute(c, "cpu", backend=SWAP_VALUE), "cpu")
    assert wrong.kinds() == [contract.WRONG_OUTPUT]

    script = sources.script(c.program)
    assert f"QCfg = importlib.import_module({MODULE!r}).QCfg" in script
    namespace: dict = {"__file__": str(tmp_path / "repro.py")}
    exec(compile(script + "\n\n" + codegen.source(c.program), "<script>", "exec"), namespace)  # noqa: S102
    out, = namespace["program"](torch.ones(3))
    assert torch.equal(out, torch.full((3,), 3.0))
