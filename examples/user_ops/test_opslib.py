"""torch.compile keeps opslib's ops' meaning (README: "Fuzz your own custom ops")."""
import os

import opslib
from hypothesis import given, settings

from fuzzer.strategies import cases
from fuzzer.testing import assert_contract


@settings(max_examples=20, deadline=None)
@given(cases(ops=[opslib]))
def test_compile_keeps_opslib(case):
    assert_contract(case, backend=os.environ.get("OPSLIB_BACKEND", "inductor"))
