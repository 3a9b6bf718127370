"""The effect edge kept (``fuzzer.triage.edges``): for the length of a compile, an edge
recorded under a buffer's name is found under its operation's too, and the scheduler is
put back after; a stand-in scheduler and graph, no compile."""

from collections import defaultdict
from types import SimpleNamespace

import pytest

from fuzzer.triage import edges

pytestmark = pytest.mark.skipif(not edges.available(), reason="this torch's Inductor has no edge table")


def test_an_edge_keyed_by_a_buffer_is_found_under_its_operation_and_the_scheduler_put_back(monkeypatch):
    from torch._inductor.scheduler import Scheduler
    from torch._inductor.virtualized import V

    seen = []
    monkeypatch.setattr(Scheduler, "compute_dependencies", lambda self: seen.append(dict(table)))
    table = defaultdict(set, {"buf2": {"op1"}, "op9": {"op8"}})
    node = SimpleNamespace(name_to_buf={"buf2": SimpleNamespace(defining_op_name=lambda: "op2")})
    original = Scheduler.compute_dependencies
    with V.set_graph_handler(SimpleNamespace(additional_star_deps=table)):
        with edges.kept():
            assert Scheduler.compute_dependencies is not original
            Scheduler.compute_dependencies(node)
        assert Scheduler.compute_dependencies is original
    assert seen == [{"buf2": {"op1"}, "op9": {"op8"}, "op2": {"op1"}}]
