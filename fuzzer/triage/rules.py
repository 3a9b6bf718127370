"""The rules inside a switch: which of the no-op removal's per-op rules a bug needs.

``remove_noop_ops`` is one switch but many judgements: for each op it may drop (a
``clone`` of a tensor with the same sizes and strides, a ``copy`` into a buffer of the
same, a ``slice`` of the whole dim, a ``view`` to the same shape, ...) it keeps a rule in
``torch._inductor.fx_passes.post_grad.noop_registry``, and a rule gone wrong is its own
root cause.  Two bugs the switch removes can be two rules: a snapshot ``x1.copy_(x0)``
dropped before ``x0`` is written (pytorch/pytorch#198131) is the ``copy`` rule; a
``clone`` of ``x0[1:]`` dropped although the clone starts at offset 0 and the view at
1 (``same_meta`` compares sizes and strides, not the storage offset) is the ``clone``
rule.  Both blame the same switch, in the same family: without the rule they would be
one bug id with two causes.

So when the switch a wrong result is blamed on is the no-op removal, triage asks two
more things: which ops the pass removed in the failing compile (one compile, each
rule's condition wrapped to record a removal: the pass drops a node exactly when its
metadata matches and its rule's condition holds, and the condition is asked last),
and, for each such op, whether the bug goes with that op's rule alone taken out of
the registry (one compile each).  The rules whose absence removes it refine the blame:
``remove_noop_ops[aten.clone]``.  Where no rule alone does (the bug needs two
removals) the blame stays the switch's.  A torch without the registry is probed for
nothing: the blame is the switch's, as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fuzzer.limits import TRIAGE
from fuzzer.triage import switches
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe

#: the switch whose rules are probed
NOOP_SWITCH = "remove_noop_ops"


def name(switch: str, op: str) -> str:
    """How one rule of ``switch`` is named among the switches' outcomes."""
    return f"{switch}[{op}]"


def split(named: str) -> tuple[str, str | None]:
    """A switch name and its rule (None for the switch itself)."""
    switch, bracket, rest = named.partition("[")
    return (switch, rest.rstrip("]")) if bracket else (named, None)


def words(named: str) -> str:
    """A switch or rule name as a title says it: ``remove_noop_ops's aten.clone rule``."""
    switch, rule = split(named)
    return f"{switch}'s {rule} rule" if rule is not None else named


def setting(named: str) -> str:
    """How a rule is taken out, for a report's table (no config does it)."""
    rule = split(named)[1]
    return f"the {rule} entry taken out of post_grad.noop_registry" if rule is not None else ""


def _registry():
    try:
        from torch._inductor.fx_passes import post_grad
    except ImportError:  # pragma: no cover - every supported torch has it
        return None, None
    registry = getattr(post_grad, "noop_registry", None)
    return (post_grad, registry) if isinstance(registry, dict) else (None, None)


def available() -> bool:
    return _registry()[1] is not None


def _op(target) -> str:
    """An op overload's packet, as ``aten.clone`` (every overload of one op is one rule)."""
    packet = getattr(target, "overloadpacket", target)
    return str(packet)


@contextlib.contextmanager
def _recording(removed: set[str]) -> Iterator[None]:
    """The registry with each rule's condition wrapped: an op whose condition held (the
    pass asks it only once the metadata matched, and then removes the node) is added
    to ``removed``, while the pass runs as the post-grad pass of the program's graph.

    Only then: the pattern matcher's first use in a process traces its replacement
    patterns and calls the same function on their graphs (a ``slice`` dropped there is
    none of the program's), but not through ``GraphTransformObserver``, which every
    post-grad pass, and the switch that turns this one off, goes through."""
    from torch.fx.passes.graph_transform_observer import GraphTransformObserver

    registry = _registry()[1]
    inside = [False]

    def wrap(target, cond):
        def recorded(*args, **kwargs):
            held = cond(*args, **kwargs)
            if held and inside[0]:
                removed.add(_op(target))
            return held
        return recorded

    original = GraphTransformObserver.apply_graph_pass

    def observed(self, pass_fn):
        if self.passname != NOOP_SWITCH:
            return original(self, pass_fn)
        inside[0] = True
        try:
            return original(self, pass_fn)
        finally:
            inside[0] = False

    GraphTransformObserver.apply_graph_pass = observed
    try:
        with _swapped({target: (wrap(target, entry[0]), *entry[1:]) for target, entry in registry.items()}):
            yield
    finally:
        if GraphTransformObserver.apply_graph_pass is observed:  # else wrapped since: left in, inert
            GraphTransformObserver.apply_graph_pass = original


def _without(op: str) -> contextlib.AbstractContextManager:
    """The registry without the rules of ``op``: the pass leaves every call of it."""
    return _swapped({t: e for t, e in _registry()[1].items() if _op(t) != op})


@contextlib.contextmanager
def _swapped(replacement: dict) -> Iterator[None]:
    """``replacement`` in the registry's place for the block, torch's own put back after."""
    module, registry = _registry()
    module.noop_registry = replacement
    try:
        yield
    finally:
        module.noop_registry = registry


def removed_ops(probe: Probe, backend: str = "inductor") -> list[str]:
    """The ops the no-op removal dropped in a compile that shows the bug, sorted; none
    where the bug did not show (what a compile without it removed says nothing)."""
    removed: set[str] = set()
    if probe.outcome(backend, within=lambda: _recording(removed)) is not Outcome.STAYS:
        return []
    return sorted(removed)


def probe_rules(probe: Probe, results: dict[str, str], backend: str = "inductor") -> dict[str, str]:
    """Where ``results`` blame the no-op removal: each rule it applied, taken out alone,
    ``remove_noop_ops[op]`` -> its outcome.  Stops early (with what it has) when the
    budget is spent."""
    if switches.blamed(results) != NOOP_SWITCH or not available():
        return {}
    found: dict[str, str] = {}
    try:
        for op in removed_ops(probe, backend)[:TRIAGE.max_rules]:
            found[name(NOOP_SWITCH, op)] = probe.outcome(backend, within=lambda op=op: _without(op)).value
    except BudgetSpent:
        pass
    return found


def refined(switch: str | None, results: dict[str, str]) -> str | None:
    """``switch`` with the rules whose absence alone removes the bug, where any was
    probed: ``remove_noop_ops[aten.clone]`` (two: ``[aten.clone,aten.copy]``)."""
    if switch is None:
        return None
    gone = sorted(rule for named, outcome in results.items()
                  if outcome == Outcome.GONE.value and split(named)[0] == switch
                  and (rule := split(named)[1]) is not None)
    return f"{switch}[{','.join(gone)}]" if gone else switch
