"""Named switches of Inductor that the compiler bisector does not cover.

``CompilerBisector`` disables pre-grad, joint and post-grad pass applications and
lowerings, but has no subsystem for the scheduler (fusion, its reordering for peak
memory) and cannot say which post-grad pass a bug needs when an earlier one only
shapes the graph for it.  A switch turns one such thing off through Inductor's
config (``disabled_passes`` names a pass run under ``GraphTransformObserver``);
probing each, a finding's record says, per switch, whether its bug is gone or
stays with the switch thrown.

The table is data, in pipeline order (post-grad passes as ``post_grad.py`` runs
them, then the scheduler), because the blame (:func:`blamed`) reads it in that
order.  A switch whose config fields the installed torch lacks is left out: the
table is detected, not pinned to a release.

Each switch also says what its thing does to the program (:class:`Role`): a graph
pass *rewrites* it (drops a copy, makes a write in place), while the locality
reordering and the scheduler's features only *move* the same computation (order it,
group it into kernels, place it in buffers).  A bug's key (``Culprit.key``) names
the rewriting switches that remove it besides the one it blames, never the moving
ones (:func:`also_needed`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fuzzer.limits import TRIAGE
from fuzzer.triage.probe import Outcome, Probe


class Role(str, enum.Enum):
    """What a switch's thing does to the program it compiles."""

    #: a graph pass that changes the nodes a later pass sees: the clone the no-op
    #: removal drops is what reinplacing then writes through, a part of the cause
    REWRITES = "rewrites"
    #: orders, groups or places the same computation: thrown, it moves nodes so that a
    #: later pass's wrong decision is not reached, which hides a bug without being
    #: part of it (the dropped effect edge is removed by the locality reordering's or
    #: fusion's absence in some programs, the peak-memory reordering's in all)
    MOVES = "moves"


@dataclass(frozen=True)
class Switch:
    """One thing of Inductor to turn off: its name, the config patch, what it stops,
    and whether it rewrites the program or only moves it."""

    name: str
    config: tuple[tuple[str, object], ...]
    what: str
    role: Role = Role.REWRITES

    @property
    def patch(self) -> dict:
        return dict(self.config)

    def available(self) -> bool:
        from torch._inductor import config

        return all(hasattr(config, key) for key, _ in self.config)


def _disabled(pass_name: str, what: str) -> Switch:
    return Switch(pass_name, (("disabled_passes", pass_name.upper()),), what)


#: in pipeline order: post-grad passes, then the scheduler's fusion and reordering
SWITCHES: tuple[Switch, ...] = (
    Switch("reorder_for_locality", (("reorder_for_locality", False),),
           "the post-grad pass that moves nodes next to their users", Role.MOVES),
    _disabled("remove_noop_ops", "the post-grad pass that removes no-op views and copies"),
    Switch("pattern_matcher", (("pattern_matcher", False),),
           "the post-grad pattern-replacement passes"),
    _disabled("reinplace_inplaceable_ops",
              "reinplacing: functional custom-op calls turned back into in-place writes"),
    _disabled("decompose_auto_functionalized",
              "the decomposition of auto_functionalized into clones and the mutating call"),
    Switch("fusion", (("max_fusion_size", 1),), "the scheduler's fusion of kernels", Role.MOVES),
    Switch("epilogue_fusion", (("epilogue_fusion", False),), "the scheduler's epilogue fusion", Role.MOVES),
    Switch("buffer_reuse", (("inplace_buffers", False), ("allow_buffer_reuse", False)),
           "the scheduler's reuse of buffers and in-place kernels", Role.MOVES),
    Switch("reorder_for_peak_memory", (("reorder_for_peak_memory", False),),
           "the scheduler's reordering of nodes to lower peak memory", Role.MOVES),
)

BY_NAME = {s.name: s for s in SWITCHES}


def available() -> tuple[Switch, ...]:
    return tuple(s for s in SWITCHES if s.available())


def probe_all(probe: Probe, backend: str = "inductor",
              switches: tuple[Switch, ...] | None = None) -> dict[str, str]:
    """Each switch thrown in turn: switch name -> ``gone``, ``stays`` or ``changed``.

    Stops early (with what it has) when the probe's budget is spent.
    """
    from fuzzer.triage.probe import BudgetSpent

    found: dict[str, str] = {}
    for switch in switches if switches is not None else available():
        try:
            found[switch.name] = probe.outcome(backend, switch.patch).value
        except BudgetSpent:
            break
    return found


#: how a pair is named among the switches' outcomes
PAIR = "+"


def pairs_to_probe(results: dict[str, str]) -> list[tuple[Switch, Switch]]:
    """The pairs worth a compile when no switch alone removed the bug: the probed
    switches two at a time, nearest in the pipeline first (a pass shapes the input of
    the ones right after it: the no-op removal leaves the mutation that reinplacing
    then mishandles), up to ``TRIAGE.max_pairs``; none when one alone removes it."""
    if any(v == Outcome.GONE.value for v in results.values()):
        return []
    probed = [s for s in SWITCHES if s.name in results]
    pairs = [(a, b) for i, a in enumerate(probed) for b in probed[i + 1:]]
    pairs.sort(key=lambda p: (probed.index(p[1]) - probed.index(p[0]), probed.index(p[0])))
    return pairs[:TRIAGE.max_pairs]


def probe_pairs(probe: Probe, results: dict[str, str], backend: str = "inductor") -> dict[str, str]:
    """Each pair of ``pairs_to_probe`` thrown together: ``a+b`` -> its outcome."""
    from fuzzer.triage.probe import BudgetSpent

    found: dict[str, str] = {}
    for a, b in pairs_to_probe(results):
        name = f"{a.name}{PAIR}{b.name}"
        try:
            found[name] = probe.outcome(backend, patch_of(name)).value
        except BudgetSpent:
            break
    return found


def joined(*patches: dict) -> dict:
    """Config patches thrown together: ``disabled_passes`` lists its passes, comma
    separated (Inductor reads the list), the rest are set one by one."""
    out: dict = {}
    for patch in patches:
        for key, value in patch.items():
            if key == "disabled_passes" and out.get(key):
                value = f"{out[key]},{value}"
            out[key] = value
    return out


def patch_of(name: str) -> dict:
    """The config patch of a switch, or of a pair ``a+b`` (both at once)."""
    return joined(*(BY_NAME[part].patch for part in name.split(PAIR)))


def gone(results: dict[str, str]) -> list[str]:
    """The single switches whose throwing removes the bug, in pipeline order."""
    return [s.name for s in SWITCHES if results.get(s.name) == Outcome.GONE.value]


def blamed(results: dict[str, str]) -> str | None:
    """The last switch, in pipeline order, whose throwing makes the bug go; where none
    does alone, the first pair that does (``a+b``).

    When several do, the earlier ones mostly shape the graph that the later one
    then mishandles (a no-op removal that leaves a mutation where reinplacing can
    reach it, a fusion that feeds the peak-memory reordering), and the later pass
    is where the wrong decision is made.  Of the earlier ones, only those that
    rewrite the program are kept in the bug's key (:func:`also_needed`).
    """
    alone = gone(results)
    if alone:
        return alone[-1]
    pairs = [name for name, v in results.items() if PAIR in name and v == Outcome.GONE.value]
    return pairs[0] if pairs else None


def also_needed(results: dict[str, str], blamed_switch: str) -> list[str]:
    """The switches besides ``blamed_switch`` whose throwing alone removes the bug and
    that rewrite the program (:attr:`Role.REWRITES`), in pipeline order.

    Such a pass makes what the blamed one mishandles (a clone elided, so one buffer
    plays two roles once reinplaced, is another bug than a pending read reinplacing
    alone gets wrong).  A switch that only moves the computation is left out: its
    absence hides the bug by moving nodes, and a key that named it would split one
    cause by the programs it was found in (the dropped effect edge was four bugs, by
    which of the locality reordering, fusion and the no-op removal also hid it).
    """
    return [name for name in gone(results) if name != blamed_switch and BY_NAME[name].role is Role.REWRITES]


def only_moves(named: str) -> bool:
    """Whether a blamed switch (``a``, ``a[rule]`` or a pair ``a+b``) only moves the
    computation: every part of it is a known switch of :attr:`Role.MOVES`.

    Such a blame says where a wrong value shows (the scheduler placed a buffer, or
    ordered a read, where a wrong fact let it), not where the fact went wrong, which
    is in what the compiler was told of the program's buffers."""
    parts = [named_part.partition("[")[0] for named_part in named.split(PAIR)]
    return all(part in BY_NAME and BY_NAME[part].role is Role.MOVES for part in parts)
