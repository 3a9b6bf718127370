"""What a run keeps of a returned tensor subclass (``fuzzer.judge.wrapped``): its class,
flatten context and inner tensors; anything else as ``artifacts.kept`` keeps it."""

import torch
from helpers import prog

from fuzzer.judge.artifacts import not_real
from fuzzer.judge.wrapped import Wrapped, form_of, leaves, recorded
from fuzzer.program import codegen
from fuzzer.program.families import subclass

PROGRAM = prog({"x0": ("s0",), "x1": ("s0",)}, [("w_pair", ["x0", "x1"], "v0", {"c": 0.5})], outputs=["v0"])


def _pair_class():
    return codegen.build(PROGRAM).__globals__[subclass.CLASS]


def test_a_run_keeps_a_subclass_by_its_parts():
    pair_class = _pair_class()
    value = recorded(pair_class(torch.ones(2), torch.zeros(2)))
    assert isinstance(value, Wrapped) and value.kind == subclass.CLASS and value.names == ("a", "b")
    assert [type(p) for p in value.parts] == [torch.Tensor, torch.Tensor] and value.context == "None"


def test_a_kept_subclass_is_a_copy_whose_form_and_leaves_are_its_parts():
    pair_class = _pair_class()
    a, b = torch.ones(2), torch.zeros(2)
    value = recorded(pair_class(a, b))
    a.add_(5.0)                                   # a later write does not reach what the run kept
    assert torch.equal(value.parts[0], torch.ones(2))
    assert form_of(value) == (subclass.CLASS, "None", ("a", "b"), (None, None)) and form_of(torch.ones(1)) is None
    assert [t.tolist() for t in leaves(value)] == [[1.0, 1.0], [0.0, 0.0]]


def test_what_is_no_wrapper_subclass_is_kept_as_artifacts_keeps_it():
    plain = torch.arange(3.0)
    kept = recorded(plain)
    assert type(kept) is torch.Tensor and torch.equal(kept, plain) and kept is not plain
    meta = torch.empty(2, device="meta")
    assert recorded(meta) is meta and not_real(meta) is not None    # an artifact as it is
    assert recorded(3) == 3
