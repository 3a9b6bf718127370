"""mutation-lost (``fuzzer.faults.mutation_lost``): with the fault, inside Inductor's
decomposition of a functionalized custom op, the clones the op wrote are dropped and
the old bases returned; outside it, or for torch's ops, torch's own; stand-in originals."""

import torch

from fuzzer.faults import mutation_lost
from fuzzer.program import custom_ops


def _patched(fault):
    seen = []

    def dense(op, only_clone=None, **kwargs):
        seen.append(only_clone)
        return ("result", *[f"written {b}" for b in kwargs["_all_bases"]])

    patched = fault.build({mutation_lost.DECOMPOSE: lambda graph: graph(), mutation_lost.DENSE: dense}.__getitem__)
    return patched[mutation_lost.DECOMPOSE], patched[mutation_lost.DENSE], seen


def test_inside_the_decomposition_the_written_clones_are_dropped_for_a_custom_op():
    custom_ops.install()
    plain, _ = mutation_lost.FAULTS
    decompose, dense, seen = _patched(plain)
    op = torch.ops.dcefuzz.m_scale.default
    assert decompose(lambda: dense(op, _all_bases=["a", "b"])) == ("result", "a", "b")
    assert seen == [(0, 1)]  # every base cloned, as the bug needs
    assert dense(op, _all_bases=["a"]) == ("result", "written a")  # outside the decomposition
    assert decompose(lambda: dense(torch.ops.aten.add_.Tensor, _all_bases=["a"])) == ("result", "written a")


def test_the_dynamic_variant_drops_only_bases_with_symbolic_sizes():
    custom_ops.install()
    _, dynamic = mutation_lost.FAULTS
    decompose, dense, _ = _patched(dynamic)
    op = torch.ops.dcefuzz.m_scale.default
    assert decompose(lambda: dense(op, _all_bases=[torch.ones(2)])) == ("result", f"written {torch.ones(2)}")
    assert dynamic.pipelines == ("compile",) and mutation_lost.FAULTS[0].pipelines == ("compile", "aoti")
