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
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.triage.probe import Outcome, Probe


@dataclass(frozen=True)
class Switch:
    """One thing of Inductor to turn off: its name, the config patch, what it stops."""

    name: str
    config: tuple[tuple[str, object], ...]
    what: str

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
           "the post-grad pass that moves nodes next to their users"),
    _disabled("remove_noop_ops", "the post-grad pass that removes no-op views and copies"),
    Switch("pattern_matcher", (("pattern_matcher", False),),
           "the post-grad pattern-replacement passes"),
    _disabled("reinplace_inplaceable_ops",
              "reinplacing: functional custom-op calls turned back into in-place writes"),
    _disabled("decompose_auto_functionalized",
              "the decomposition of auto_functionalized into clones and the mutating call"),
    Switch("fusion", (("max_fusion_size", 1),), "the scheduler's fusion of kernels"),
    Switch("epilogue_fusion", (("epilogue_fusion", False),), "the scheduler's epilogue fusion"),
    Switch("buffer_reuse", (("inplace_buffers", False), ("allow_buffer_reuse", False)),
           "the scheduler's reuse of buffers and in-place kernels"),
    Switch("reorder_for_peak_memory", (("reorder_for_peak_memory", False),),
           "the scheduler's reordering of nodes to lower peak memory"),
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


def blamed(results: dict[str, str]) -> str | None:
    """The last switch, in pipeline order, whose throwing makes the bug go.

    When several do, the earlier ones mostly shape the graph that the later one
    then mishandles (a no-op removal that leaves a mutation where reinplacing can
    reach it, a fusion that feeds the peak-memory reordering), and the later pass
    is where the wrong decision is made.
    """
    gone = [s.name for s in SWITCHES if results.get(s.name) == Outcome.GONE.value]
    return gone[-1] if gone else None
