"""opaque-guard-dropped: Dynamo guards neither an opaque value object nor what a reference
type's ``guard_fn`` returns, so a call handed another object runs the graph specialised
for the first.

Why this is realistic.  An opaque object reaches Dynamo through one branch of
``VariableBuilder`` (``torch/_dynamo/variables/builder.py``): a value type is baked into
the graph and guarded on its ``__eq__`` (``GuardBuilder.CONSTANT_MATCH``), a reference
type is a graph input guarded on its type and on the values its class's ``guard_fn``
returns (``GuardBuilder.OPAQUE_OBJ_GUARD_FN_MATCH``), which is what keeps a member read
at trace time (``MemberType.USE_REAL``) from going stale.  Those guards are the whole
of what the Note [Opaque Objects] promises, and they are new code: a regression that
builds them for the wrong source, or skips an object it takes for a plain constant,
leaves the graph specialised on the first call's object.  (PyTorch fixed one such in
2026: a reference object made mid-trace was baked with no guard at all, PR #176044.)

The fault drops both guards: ``CONSTANT_MATCH`` installs nothing for an object of a
registered value type (any other constant keeps its guard), and
``OPAQUE_OBJ_GUARD_FN_MATCH`` nothing at all.  Only programs that hand over opaque
objects meet it (feature ``opaque-objects``): a later call whose ``Scale`` or
``Cache.decay`` differs computes with the first call's, a wrong value (``wrong-output``;
the state a stale decay wrote is one too).

Patched: ``torch._dynamo.guards.GuardBuilder.CONSTANT_MATCH`` and
``GuardBuilder.OPAQUE_OBJ_GUARD_FN_MATCH``, looked up on the class each time a guard is
made (``VariableBuilder.install_guards``) and called when the guards are built.
"""

from __future__ import annotations

import functools

from fuzzer.faults._fault import STALE_GUARD, Fault

CONSTANT_MATCH = "torch._dynamo.guards:GuardBuilder.CONSTANT_MATCH"
GUARD_FN_MATCH = "torch._dynamo.guards:GuardBuilder.OPAQUE_OBJ_GUARD_FN_MATCH"


def _opaque_value(value) -> bool:
    """Whether ``value`` is an object of a registered opaque value type (a ``constant``
    type, as torch 2.14 calls them), read off the registry without its deprecated names."""
    from torch._library import opaque_object

    info = opaque_object.get_opaque_obj_info(type(value))
    return info is not None and info.opaque_typ in ("value", "constant")


def _build(current):
    constant_match = current(CONSTANT_MATCH)

    @functools.wraps(constant_match)
    def unguarded_constant(self, guard):
        if _opaque_value(self.get(guard)):
            return None  # the bug: the graph is specialised on the object, and nothing guards it
        return constant_match(self, guard)

    @functools.wraps(current(GUARD_FN_MATCH))
    def no_guard_fn(self, guard):
        return None

    return {CONSTANT_MATCH: unguarded_constant, GUARD_FN_MATCH: no_guard_fn}


FAULTS = (
    Fault(
        name="opaque-guard-dropped",
        bug_class=STALE_GUARD,
        expected_kind="wrong-output",
        dynamic_only=False,
        description=("Dynamo installs no guard on an opaque value object (CONSTANT_MATCH) nor on what a reference "
                     "type's guard_fn returns, so a call handed another object runs the graph specialised for the "
                     "first"),
        targets=(CONSTANT_MATCH, GUARD_FN_MATCH),
        build=_build,
        features=(("opaque-objects", 1.0),),
        # only a program whose object changes between its calls, where Dynamo had
        # specialised a kept graph on it, shows the fault: seed 0 met one at its 70th
        # program, 90 s into the campaign (2026-12-07, 2.13.0, two idle cores)
        seconds=270.0,
    ),
)
