"""test-internal-error (``fuzzer.faults.internal_error``): with the fault, the contract's
judge itself raises; undone, it judges again."""

import pytest

from fuzzer.faults import internal_error
from fuzzer.judge import contract


def test_the_judge_raises_while_planted_and_is_itself_after():
    (fault,) = (f for f in internal_error.FAULTS if f.name == "test-internal-error")
    original = contract.judge_runs
    undo = fault.install()
    try:
        with pytest.raises(RuntimeError, match=internal_error.MESSAGE):
            contract.judge_runs([], {}, [], None)
    finally:
        undo()
    assert contract.judge_runs is original and fault.expected_kind == "internal-error"


def test_the_lost_device_raises_a_cuda_error_while_planted():
    (fault,) = (f for f in internal_error.FAULTS if f.name == "test-device-lost")
    undo = fault.install()
    try:
        with pytest.raises(RuntimeError, match=internal_error.DEVICE_LOST_MESSAGE):
            contract.judge_runs([], {}, [], None)
    finally:
        undo()
