"""A user's op as the compiler sees it (``fuzzer.user.declared``): what it declares, its
tensors and scalars, what it writes, and its call's arguments; the example library."""

from pathlib import Path

from fuzzer.program.custom_ops import EFFECTFUL, MUTATING, PURE
from fuzzer.user import declared, library

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


def _ops():
    return {op.qualname: op for op in library.load(OPSLIB).ops}


def test_what_each_op_declares_and_writes():
    ops = _ops()
    acc, log, tanh = ops["opslib::accumulate"], ops["opslib::log_sum"], ops["opslib::scaled_tanh"]
    assert (acc.declaration, acc.mutates, acc.results) == (MUTATING, (0,), 0)
    assert (log.declaration, log.effect, log.kinds) == (EFFECTFUL, True, (EFFECTFUL,))
    assert (tanh.declaration, [a.name for a in tanh.tensors], [a.name for a in tanh.scalars]) == (PURE, ["x"],
                                                                                                  ["alpha"])
    assert acc.call == "torch.ops.opslib.accumulate" and acc.opaque and tanh.taken == (0,)


def test_an_op_that_writes_and_has_an_effect_is_both():
    op = declared.UserOp("ns::both", MUTATING, (), 0, effect=True)
    assert op.kinds == (MUTATING, EFFECTFUL) and op.kind == "mutating+effectful"


def test_a_call_gives_each_tensor_and_each_scalar_its_value():
    tanh = _ops()["opslib::scaled_tanh"]
    args, kwargs = tanh.call_arguments(lambda k: f"t{k}", lambda arg: 2.0)
    assert (args, kwargs) == (["t0", 2.0], {})
