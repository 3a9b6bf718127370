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

Reinplacing (``reinplace_inplaceable_ops``) is one switch over several judgements too:
for each functional op it may turn back into its in-place twin it keeps an entry in
``torch._inductor.fx_passes.reinplace.inplaceable_ops`` (``index_put``, the view scatters
gathered into ``_generalized_scatter``, collectives), whose ``extra_check`` it asks
last, once every written argument may be written in place; the custom ops it reinplaces
through ``auto_functionalized`` have no entry.  A scatter written into a graph input
that a later write overwrites (pytorch/pytorch#198094) and a pending read run after a
custom op's in-place write are both gone with reinplacing off: the entries tell them
apart (``reinplace_inplaceable_ops[_generalized_scatter]``), where the second needs
none and keeps the switch's blame.  Each switch with rules is a :class:`Registry`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fuzzer.limits import TRIAGE
from fuzzer.triage import switches
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe

#: the switches whose rules are probed
NOOP_SWITCH = "remove_noop_ops"
REINPLACE_SWITCH = "reinplace_inplaceable_ops"


@dataclass(frozen=True)
class Registry:
    """A switch's rules: the table of torch they are entries of, by op, and how an
    entry's condition (asked last, right before the pass acts on a node) is wrapped."""

    #: the switch (and the ``GraphTransformObserver`` pass name) the rules are of
    switch: str
    #: the module and the name of its table
    module: str
    table: str
    #: an entry with its condition replaced: ``rewrap(entry, wrap)``, ``wrap(condition)``
    rewrap: Callable

    def load(self):
        """The module and its table, or (None, None) where this torch has none."""
        try:
            module = importlib.import_module(self.module)
        except ImportError:  # pragma: no cover - every supported torch has both
            return None, None
        table = getattr(module, self.table, None)
        return (module, table) if isinstance(table, dict) else (None, None)


REGISTRIES: dict[str, Registry] = {r.switch: r for r in (
    # an entry is (condition, ...): the condition first
    Registry(NOOP_SWITCH, "torch._inductor.fx_passes.post_grad", "noop_registry",
             lambda entry, wrap: (wrap(entry[0]), *entry[1:])),
    # an entry is an InplaceableOp: its extra_check
    Registry(REINPLACE_SWITCH, "torch._inductor.fx_passes.reinplace", "inplaceable_ops",
             lambda entry, wrap: dataclasses.replace(entry, extra_check=wrap(entry.extra_check))),
)}


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
    switch, rule = split(named)
    if rule is None or switch not in REGISTRIES:
        return ""
    registry = REGISTRIES[switch]
    return f"the {rule} entry taken out of {registry.module.rsplit('.', 1)[1]}.{registry.table}"


def available(switch: str = NOOP_SWITCH) -> bool:
    return switch in REGISTRIES and REGISTRIES[switch].load()[1] is not None


def _op(target) -> str:
    """An op overload's packet, as ``aten.clone`` (every overload of one op is one rule);
    a function (reinplacing's ``_generalized_scatter``) by its name."""
    packet = getattr(target, "overloadpacket", None)
    return str(packet) if packet is not None else getattr(target, "__name__", str(target))


@contextlib.contextmanager
def _recording(registry: Registry, removed: set[str]) -> Iterator[None]:
    """The registry with each rule's condition wrapped: an op whose condition held (the
    pass asks it only once the rest matched, and then removes or reinplaces the node)
    is added to ``removed``, while the pass runs as the post-grad pass of the program's
    graph.

    Only then: the pattern matcher's first use in a process traces its replacement
    patterns and calls the same function on their graphs (a ``slice`` dropped there is
    none of the program's), but not through ``GraphTransformObserver``, which every
    post-grad pass, and the switch that turns this one off, goes through."""
    from torch.fx.passes.graph_transform_observer import GraphTransformObserver

    table = registry.load()[1]
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
        if self.passname != registry.switch:
            return original(self, pass_fn)
        inside[0] = True
        try:
            return original(self, pass_fn)
        finally:
            inside[0] = False

    GraphTransformObserver.apply_graph_pass = observed
    try:
        with _swapped(registry, {target: registry.rewrap(entry, lambda cond, target=target: wrap(target, cond))
                                 for target, entry in table.items()}):
            yield
    finally:
        if GraphTransformObserver.apply_graph_pass is observed:  # else wrapped since: left in, inert
            GraphTransformObserver.apply_graph_pass = original


def _without(registry: Registry, op: str) -> contextlib.AbstractContextManager:
    """The registry without the rules of ``op``: the pass leaves every call of it."""
    return _swapped(registry, {t: e for t, e in registry.load()[1].items() if _op(t) != op})


@contextlib.contextmanager
def _swapped(registry: Registry, replacement: dict) -> Iterator[None]:
    """``replacement`` in the table's place for the block, torch's own put back after."""
    module, table = registry.load()
    setattr(module, registry.table, replacement)
    try:
        yield
    finally:
        setattr(module, registry.table, table)


def removed_ops(probe: Probe, backend: str = "inductor", switch: str = NOOP_SWITCH) -> list[str]:
    """The ops ``switch``'s pass removed (or reinplaced) in a compile that shows the bug,
    sorted; none where the bug did not show (what a compile without it did says nothing)."""
    removed: set[str] = set()
    if probe.outcome(backend, within=lambda: _recording(REGISTRIES[switch], removed)) is not Outcome.STAYS:
        return []
    return sorted(removed)


def probe_rules(probe: Probe, results: dict[str, str], backend: str = "inductor") -> dict[str, str]:
    """Where ``results`` blame a switch with rules: each rule it applied, taken out alone,
    ``remove_noop_ops[op]`` -> its outcome.  Stops early (with what it has) when the
    budget is spent."""
    switch = switches.blamed(results)
    if switch not in REGISTRIES or not available(switch):
        return {}
    found: dict[str, str] = {}
    try:
        for op in removed_ops(probe, backend, switch)[:TRIAGE.max_rules]:
            found[name(switch, op)] = probe.outcome(
                backend, within=lambda op=op: _without(REGISTRIES[switch], op)).value
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
