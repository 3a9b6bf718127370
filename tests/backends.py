"""Stand-in dynamo backends for tests: cheap (no inductor), one faithful, one broken.

``dcefuzz_test_eager`` runs dynamo's graph as is. ``dcefuzz_test_drop_log`` deletes
every ``e_log`` call from the graph: the bug class the effect-log clause exists for.
``dcefuzz_test_drop_object_writes`` deletes every ``o_put``: an opaque object's state
is never written.
Registered once per process, on import.  A process started with ``DCEFUZZ_TEST_FAULT``
set (a repro script a test runs) also plants that test fault for its whole life.
"""

import os

import torch
from torch._dynamo import list_backends, register_backend

FAITHFUL = "dcefuzz_test_eager"
DROP_LOG = "dcefuzz_test_drop_log"
DROP_LOG_AND_MUTATION = "dcefuzz_test_drop_log_and_mutation"
RAISE = "dcefuzz_test_raise"
DROP_OBJECT_WRITES = "dcefuzz_test_drop_object_writes"


def _is_e_log(target) -> bool:
    return target in (torch.ops.dcefuzz.e_log, torch.ops.dcefuzz.e_log.default)


def _faithful(gm, example_inputs):
    return gm.forward


def _drop_log(gm, example_inputs):
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and _is_e_log(node.target):
            gm.graph.erase_node(node)
    gm.recompile()
    return gm.forward


def _drop_log_and_mutation(gm, example_inputs):
    """Also deletes every ``m_scale`` call: an input mutation is lost as well."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and "m_scale" in str(node.target):
            gm.graph.erase_node(node)
    return _drop_log(gm, example_inputs)


def _drop_object_writes(gm, example_inputs):
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and "o_put" in str(node.target):
            gm.graph.erase_node(node)
    gm.recompile()
    return gm.forward


def _raise(gm, example_inputs):
    raise RuntimeError("planted backend failure")


if FAITHFUL not in list_backends(exclude_tags=()):
    register_backend(_faithful, name=FAITHFUL)
    register_backend(_drop_log, name=DROP_LOG)
    register_backend(_drop_log_and_mutation, name=DROP_LOG_AND_MUTATION)
    register_backend(_raise, name=RAISE)
    register_backend(_drop_object_writes, name=DROP_OBJECT_WRITES)


if os.environ.get("DCEFUZZ_TEST_FAULT"):
    from fuzzer import faults

    faults.get(os.environ["DCEFUZZ_TEST_FAULT"]).install()
