"""mutation-lost-export: export drops a mutating custom op whose result nobody reads.

Why this is realistic.  ``torch.export`` cleans the graphs it hands out with
``Graph.eliminate_dead_code``, and whether a node may go is ``Node.is_impure``'s call:
a custom op is kept for its schema's writes (``mutates_args``), not for its users.
Export passes have run dead-code elimination with their own purity rule (the
non-strict trace's ``_is_impure`` in ``torch/export/_trace.py``; the unlifting and
effect-token passes call it again), and a rule that asks only for users drops an
in-place call whose returned value is unused: its write to a program input never
happens.  Here the module that ``ExportedProgram.module()`` hands back has lost
every call of a mutating custom op whose result has no users.

It is a fault of the ``export`` target (``fuzzer.judge.targets``): ``torch.compile``
never calls ``ExportedProgram.module``.

Patched: ``torch.export.exported_program:ExportedProgram.module``.
"""

from __future__ import annotations

from fuzzer.faults import _patching
from fuzzer.faults._fault import MUTATION_LOST, Fault
from fuzzer.judge.targets import EXPORT

MODULE = "torch.export.exported_program:ExportedProgram.module"


def _mutating(op) -> bool:
    return _patching.is_custom_op(op) and op._schema.is_mutable


def _build(current):
    original = current(MODULE)

    def module(self, *args, **kwargs):
        gm = original(self, *args, **kwargs)
        dead = [node for node in gm.graph.nodes
                if node.op == "call_function" and _mutating(node.target) and not node.users]
        for node in dead:  # the bug: a write counted as dead for want of a reader
            gm.graph.erase_node(node)
        if dead:
            gm.recompile()
        return gm

    return {MODULE: module}


FAULTS = (
    Fault(
        name="mutation-lost-export",
        bug_class=MUTATION_LOST,
        expected_kind="wrong-mutation",
        dynamic_only=False,
        description=("torch.export's ExportedProgram.module() (the dead-code elimination of its graph) drops "
                     "a mutating custom op whose result has no users, so its write to a program input is lost"),
        targets=(MODULE,),
        build=_build,
        pipelines=(EXPORT,),
    ),
)
