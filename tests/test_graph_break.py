"""test-graph-break (``fuzzer.faults.graph_break``): with the fault, Dynamo breaks the
graph at a call of one of our ops and at no other; a stand-in original, no trace."""

from types import SimpleNamespace

import pytest
from torch._dynamo.exc import Unsupported

from fuzzer.faults import graph_break


def test_only_a_call_of_our_ops_breaks_the_graph():
    (fault,) = graph_break.FAULTS
    call = fault.build({graph_break.CALL_FUNCTION: lambda self, tx, args, kwargs: "traced"}.__getitem__)[
        graph_break.CALL_FUNCTION]
    with pytest.raises(Unsupported, match="graph break at a custom op call"):
        call(SimpleNamespace(value="dcefuzz.p_sin.default"), None, [], {})
    assert call(SimpleNamespace(value="aten.sin.default"), None, [], {}) == "traced"
    assert fault.unavailable() is None and fault.expected_kind == "untested"
