"""The graphs Dynamo hands its backend, as a run records them: what they call, the
higher-order ops that reach the backend, and the call sites their runtime asserts read.

Carried into every repro script before ``observe`` (``fuzzer.render.repro``), so it
depends on torch and the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Graph:
    """One graph Dynamo handed its backend: the targets it calls, the higher-order ops
    among them that reach the backend, and the call sites its runtime asserts read.

    A runtime assert (``aten._assert_scalar`` on a size from data, ``u0 >= 0``) is
    side-effectful (``torch.fx.node._side_effectful_functions``), so dead-code
    elimination keeps it and every node it reads: the custom-op call whose result's
    size it checks, and the calls that call's operands come from.  Keeping those calls
    is torch's design (with ``do_not_emit_runtime_asserts`` the graph has no assert and
    Inductor removes them), so ``contract.check_dead_calls`` allows it."""

    ops: tuple
    hops: tuple
    asserted: tuple = ()


#: the targets by which Dynamo's graph checks at run time what it assumed of a size
#: from data (``insert_deferred_runtime_asserts``), as ``str(target)`` names them
RUNTIME_ASSERTS = frozenset({"aten._assert_scalar.default", "aten._assert_async.msg", "aten._assert_async.default",
                             "aten.sym_constrain_range.default", "aten.sym_constrain_range_for_size.default"})


def _site_of(node) -> int | None:
    """The ``site`` argument of a custom-op call node (None: the op takes none)."""
    target = node.target
    schema = getattr(getattr(target, "default", target), "_schema", None)
    if schema is None:
        return None
    for k, arg in enumerate(schema.arguments):
        if arg.name == "site":
            site = node.kwargs.get("site", node.args[k] if k < len(node.args) else None)
            return site if isinstance(site, int) else None
    return None


def _asserted_sites(graph) -> tuple:
    """The call sites some runtime assert of ``graph`` reads, directly or through the
    values it is computed from: a higher-order op it reads (a ``torch.cond`` whose
    result's size is checked) brings every call of its subgraphs with it, since
    dead-code elimination keeps or drops the op as a whole."""
    seen, todo = set(), [n for n in graph.nodes if n.op == "call_function" and str(n.target) in RUNTIME_ASSERTS]
    sites = set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op == "call_function":
            site = _site_of(node)
            if site is not None:
                sites.add(site)
        elif node.op == "get_attr":
            sites |= _sites_within(getattr(graph.owning_module, node.target, None))
        todo.extend(node.all_input_nodes)
    return tuple(sorted(sites))


def _sites_within(module) -> set:
    """Every call site of a subgraph (a higher-order op's branch or body), nested ones too."""
    if not isinstance(module, torch.fx.GraphModule):
        return set()
    sites = set()
    for node in module.graph.nodes:
        if node.op == "call_function" and (site := _site_of(node)) is not None:
            sites.add(site)
        elif node.op == "get_attr":
            sites |= _sites_within(getattr(module, node.target, None))
    return sites


class GraphLog:
    """The graphs Dynamo hands a backend in this process, in order.

    Dynamo calls ``OutputGraph.call_user_compiler`` with each graph it captured; the
    log wraps it (once per process) and keeps what the graph calls.  Dynamo then
    inlines a region (``invoke_subgraph``) used once when
    ``inline_single_use_invoke_subgraph`` is on, and every region when
    ``inline_invoke_subgraph`` is: the log counts a region only where it survives.
    On a torch without that method nothing is recorded (``observed`` is False).
    """

    def __init__(self) -> None:
        self.graphs: list[Graph] = []
        self.observed = False

    def install(self) -> None:
        if self.observed:
            return
        try:
            from torch._dynamo.output_graph import OutputGraph
        except ImportError:  # pragma: no cover - a torch without Dynamo's output graph
            return
        original = getattr(OutputGraph, "call_user_compiler", None)
        if original is None:
            return
        log = self

        def call_user_compiler(self, gm, example_inputs):
            log.graphs.append(_graph_of(gm))
            return original(self, gm, example_inputs)

        OutputGraph.call_user_compiler = call_user_compiler
        self.observed = True


GRAPHS = GraphLog()


def _graph_of(gm) -> Graph:
    from torch._ops import HigherOrderOperator

    config = torch._dynamo.config
    ops, hops, regions = [], [], []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if isinstance(target, HigherOrderOperator):
            ops.append(target.name())
            if target.name() == "invoke_subgraph":
                regions.append(str(node.args[1]))
            else:
                hops.append(target.name())
        else:
            ops.append(getattr(target, "__name__", str(target)) if callable(target) else str(target))
    if regions and not getattr(config, "inline_invoke_subgraph", False):
        single = getattr(config, "inline_single_use_invoke_subgraph", False)
        if not single or any(regions.count(r) > 1 for r in regions):
            hops.append("invoke_subgraph")
    return Graph(tuple(ops), tuple(sorted(set(hops))), _asserted_sites(gm.graph))
