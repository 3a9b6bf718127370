"""What a run returned that is not a value (``fuzzer.judge.artifacts``): a real tensor
told from each tracing artifact that can stand where one was due, and what a run keeps
of each; values built by hand, no compile."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from fuzzer.judge import artifacts


def test_a_real_tensor_and_a_parameter_are_real():
    assert artifacts.not_real(torch.ones(2)) is None
    assert artifacts.not_real(torch.nn.Parameter(torch.ones(2))) is None
    assert artifacts.not_real(torch.ones(4)[::2]) is None


@pytest.mark.parametrize("value, says", [
    (3, "a int, not a tensor"),
    (None, "a NoneType, not a tensor"),
    ((torch.ones(1),), "a tuple, not a tensor"),
])
def test_what_is_not_a_tensor_says_what_it_is(value, says):
    assert artifacts.not_real(value) == says


def test_a_fake_tensor_is_a_subclass_and_a_meta_tensor_has_no_data():
    with FakeTensorMode():
        fake = torch.empty(2)
    assert artifacts.not_real(fake) == "a FakeTensor, not a plain tensor"
    assert artifacts.not_real(torch.empty(2, device="meta")) == "a tensor of the meta device (no data)"


def test_a_wrapper_of_a_transform_or_of_functionalization_is_not_real():
    """Both have ``torch.Tensor`` for their Python class: only torch's own checks tell them."""
    seen = []
    torch.func.vmap(lambda x: seen.append(x) or x)(torch.ones(2, 3))
    assert type(seen[0]) is torch.Tensor
    assert artifacts.not_real(seen[0]) == "a tensor wrapped by a functorch transform"
    functional = torch._to_functional_tensor(torch.ones(2))
    assert type(functional) is torch.Tensor
    assert artifacts.not_real(functional) == "a tensor wrapped by functionalization"


def test_a_real_value_is_kept_as_a_copy_and_an_artifact_as_it_is():
    value = torch.ones(2, requires_grad=True) * 2
    copy = artifacts.kept(value)
    value.data.add_(1)
    assert torch.equal(copy, torch.full((2,), 2.0)) and not copy.requires_grad
    meta = torch.empty(2, device="meta")
    assert artifacts.kept(meta) is meta and artifacts.kept(5) == 5
