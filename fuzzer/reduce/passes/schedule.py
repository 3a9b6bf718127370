"""The passes by name, and the order the shrinker runs them in, round after round,
until a whole round takes nothing (a fixpoint).

Deletion runs twice in a round: early, where it takes the most, and again after the
rewrites, which may leave a statement nothing reads.
"""

from __future__ import annotations

from fuzzer.reduce.passes.base import ShrinkPass
from fuzzer.reduce.passes.bindings import FailingBindings
from fuzzer.reduce.passes.inputs import DropUnusedInputs
from fuzzer.reduce.passes.mode import SimplerMode
from fuzzer.reduce.passes.outputs import DropOutputs
from fuzzer.reduce.passes.plain import PlainValues
from fuzzer.reduce.passes.rewrite import RewriteStatements
from fuzzer.reduce.passes.sizes import SmallerSizes
from fuzzer.reduce.passes.statements import DeleteStatements

#: every pass, by its name
PASSES: dict[str, ShrinkPass] = {p.name: p for p in (
    FailingBindings(), DeleteStatements(), DropOutputs(), DropUnusedInputs(),
    SimplerMode(), PlainValues(), RewriteStatements(), SmallerSizes())}

#: one round of the shrinker, in order (a name may come more than once)
SCHEDULE: tuple[str, ...] = ("bindings", "statements", "outputs", "inputs",
                             "mode", "plain", "rewrite", "statements", "sizes")
