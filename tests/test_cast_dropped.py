"""The cast-dropped fault (``fuzzer.faults.cast_dropped``): which calls of an autocast
rule's cast it hands back uncast.  Planted on a real compile: ``tests/test_faults.py``
(its program on the ``autocast-rules`` path) and ``tests/test_autocasts.py``."""

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from fuzzer import faults
from fuzzer.faults import cast_dropped
from fuzzer.program import custom_ops

custom_ops.install()


def _cast(value):
    from torch._library import custom_ops as library

    return library._cast(value, "cpu", torch.bfloat16)


def test_a_real_tensor_is_cast_as_ever_and_a_fake_one_is_handed_back_uncast():
    real = torch.ones(2, 3)
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(real)
    with faults.planted("cast-dropped"):
        assert _cast((real,))[0].dtype == torch.bfloat16
        assert _cast((fake, 1))[0] is fake
    assert _cast((fake,))[0].dtype == torch.bfloat16  # undone


def test_the_dynamic_twin_hands_back_only_a_fake_tensor_of_symbolic_sizes():
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    real = torch.ones(4, 3)
    with FakeTensorMode() as mode:
        static = mode.from_tensor(real)
    with FakeTensorMode(shape_env=ShapeEnv()) as mode:
        dynamic = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC])
        symbolic = mode.from_tensor(real, symbolic_context=dynamic)
    assert cast_dropped._patching.has_free_symbols(symbolic) and not cast_dropped._patching.has_free_symbols(static)
    with faults.planted("cast-dropped-dynamic"):
        assert _cast((static,))[0].dtype == torch.bfloat16
        assert _cast((symbolic,))[0] is symbolic


def test_both_run_on_programs_with_autocast_regions():
    for name in ("cast-dropped", "cast-dropped-dynamic"):
        fault = faults.get(name)
        assert dict(fault.features) == {"autocast-rules": 1.0} and fault.expected_kind == "wrong-output"
