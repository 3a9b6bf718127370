"""The batch-dim-lost fault (``fuzzer.faults.batch_dim_lost``): which results of a vmap
rule it wraps with the batch first.  Planted on a real compile: ``tests/test_faults.py``
(its program on the ``vmap-rules`` path)."""

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from fuzzer import faults
from fuzzer.faults import batch_dim_lost


def _batched_dims(tensor, out_dim) -> list[int]:
    """The logical sizes of ``tensor`` wrapped at ``out_dim`` by the helper's lookup."""
    from torch._functorch import autograd_function

    wrapped = autograd_function._add_batch_dim(tensor, out_dim, 1)
    return list(wrapped.shape)


def test_a_real_result_keeps_the_rules_dim_and_a_fake_one_is_wrapped_first():
    real = torch.ones(3, 5)
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(real)
    with faults.planted("batch-dim-lost"):
        assert _batched_dims(real, 1) == [3]
        assert _batched_dims(fake, 1) == [5]  # the batch (dim 1, of 5) taken from the front instead
        assert _batched_dims(fake, 0) == [5]
    assert _batched_dims(fake, 1) == [3]  # undone


def test_the_dynamic_twin_drops_it_only_for_a_result_of_symbolic_sizes():
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    real = torch.ones(3, 5)
    with FakeTensorMode() as mode:
        static = mode.from_tensor(real)
    with FakeTensorMode(shape_env=ShapeEnv()) as mode:
        dynamic = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC])
        symbolic = mode.from_tensor(real, symbolic_context=dynamic)
        with faults.planted("batch-dim-lost-dynamic"):
            assert batch_dim_lost._patching.has_free_symbols(symbolic)
            assert [str(d) for d in _batched_dims(symbolic, 1)] == [str(symbolic.shape[1])]
    with faults.planted("batch-dim-lost-dynamic"):
        assert _batched_dims(static, 1) == [3]


def test_both_run_on_programs_with_vmap_rules():
    for name in ("batch-dim-lost", "batch-dim-lost-dynamic"):
        fault = faults.get(name)
        assert dict(fault.features) == {"vmap-rules": 1.0} and fault.expected_kind == "wrong-output"
        assert fault.unavailable() is None
