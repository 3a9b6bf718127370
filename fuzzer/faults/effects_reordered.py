"""effects-reordered: Inductor's scheduler runs ORDERED custom-op calls out of order.

Why this is realistic.  Inductor does not keep FX order for free: its scheduler
re-sorts nodes (``Scheduler.topological_sort_schedule``, fusion, peak-memory
reordering), and any topological order of its dependency graph counts as valid.
The ``with_effects`` lowering (``torch/_inductor/lowering.py``) records the order
of effectful kernels as ``V.graph.additional_star_deps``.  On torch 2.13 that edge
names the previous *operation* (``op0``) while the topological sort only follows
*buffer* names, so in practice effect order survives only because the sort is
stable.  The planted regression is the natural next step: a sort that starts its
depth-first walk from the newest node (still topologically valid, the kind of
change a scheduling heuristic makes) whenever the graph holds effectful custom
kernels, which then run in reverse where nothing else orders them.

The dynamic variant does so only when such a kernel has symbolic input sizes.

Patched: ``torch._inductor.scheduler.Scheduler.topological_sort_schedule``.
"""

from __future__ import annotations

import re

from fuzzer.faults import _patching
from fuzzer.faults._fault import EFFECTS_REORDERED, Fault

_OP_INDEX = re.compile(r"op(\d+)")
TOPO_SORT = "torch._inductor.scheduler:Scheduler.topological_sort_schedule"


def _effectful_custom_kernel(scheduler_node, dynamic: bool) -> bool:
    kernel = getattr(scheduler_node, "node", None)
    op = getattr(kernel, "op_overload", None)
    return (_patching.is_custom_op(op) and _patching.op_effect(op) is not None
            and (not dynamic or _patching.has_free_symbols(list(kernel.inputs))))


def _creation_index(scheduler_node) -> int:
    """Position of the node's first operation in lowering order (``op<N>``)."""
    found = _OP_INDEX.search(scheduler_node.get_name())
    return int(found.group(1)) if found else 0


def _build(dynamic: bool):
    def build(current):
        original_sort = current(TOPO_SORT)

        def topological_sort_schedule(self, nodes):
            if any(_effectful_custom_kernel(n, dynamic) for n in nodes):
                # Newest operation first; sorting (not reversing) keeps repeated sorts stable.
                return original_sort(self, sorted(nodes, key=_creation_index, reverse=True))
            return original_sort(self, nodes)

        return {TOPO_SORT: topological_sort_schedule}
    return build


FAULTS = Fault.twins(
    _build, " with symbolic input sizes",
    name="effects-reordered",
    bug_class=EFFECTS_REORDERED,
    expected_kind="effect-log",
    description=(
        "torch._inductor.scheduler.Scheduler.topological_sort_schedule walks from the "
        "newest node when the graph has effectful custom kernels{scope}; the effect-order "
        "StarDep is not followed, so independent effect calls run in reverse"),
    targets=(TOPO_SORT,),
    quick=True,
)
