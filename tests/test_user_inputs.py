"""The declaration check's inputs (``fuzzer.user.inputs``): the shapes of each input set,
the scalar values each check runs with, and the arguments made; the example library."""

from pathlib import Path

import torch

from fuzzer.limits import AUDIT
from fuzzer.user import inputs, library

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


def _op(name):
    library.load(OPSLIB)
    return library.op(name)


def test_each_size_then_distinct_sizes_by_the_signature():
    sets = inputs.input_sets(_op("opslib::matmul"))
    assert [label for label, _ in sets] == [f"sizes {s}" for s in AUDIT.sizes] + ["distinct sizes"]
    d = AUDIT.distinct_from
    assert sets[-1][1] == [(d, d + 1), (d + 1, d + 2)]  # m, n, p each another size
    assert sets[0][1] == [(AUDIT.sizes[0],) * 2] * 2


def test_each_scalar_value_is_checked_with_the_rest_at_their_first():
    assert inputs.variants(_op("opslib::scaled_tanh")) == [{"alpha": 0.5}, {"alpha": 2.0}]
    assert inputs.describe({"alpha": 0.5, "flag": True}) == "alpha=0.5, flag=True"


def test_the_arguments_are_seeded_tensors_and_the_scalars_values():
    op = _op("opslib::scaled_tanh")
    args, kwargs = inputs.arguments(op, [(2, 3)], "cpu", seed=5, values={"alpha": 2.0}, grad=True)
    again, _ = inputs.arguments(op, [(2, 3)], "cpu", seed=5, values={"alpha": 2.0})
    assert args[1] == 2.0 and args[0].shape == (2, 3) and args[0].requires_grad and torch.equal(args[0], again[0])
