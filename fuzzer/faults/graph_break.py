"""Test-only fault: Dynamo graph-breaks at every custom-op call.

It exists to prove the untested rule (``fuzzer.judge.contract``): a program that did
not run wholly as compiled code must be counted ``untested``, never clean.  Dynamo
represents a call of ``torch.ops.<ns>.<op>`` by ``TorchInGraphFunctionVariable``;
raising ``Unsupported`` from its ``call_function`` is what Dynamo itself does for a
call it cannot put in the graph: it breaks the graph there, runs the call eagerly,
and counts the break in ``counters["graph_break"]``.
"""

from __future__ import annotations

from fuzzer.faults._fault import Fault

CALL_FUNCTION = "torch._dynamo.variables.torch:TorchInGraphFunctionVariable.call_function"


def _build(current):
    from torch._dynamo.exc import Unsupported

    original = current(CALL_FUNCTION)

    def call_function(self, tx, args, kwargs):
        if "dcefuzz" in str(getattr(self, "value", "")):
            raise Unsupported("dcefuzz test fault: graph break at a custom op call")
        return original(self, tx, args, kwargs)

    return {CALL_FUNCTION: call_function}


FAULTS = (
    Fault(name="test-graph-break", bug_class="untested", expected_kind="untested", dynamic_only=False,
          description="test only: Dynamo graph-breaks at every custom-op call",
          targets=(CALL_FUNCTION,), build=_build),
)
