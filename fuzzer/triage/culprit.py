"""A finding's culprit: where in the compiler its bug lives, and what finding that cost.

Three probes, each a series of fresh compiles of the finding's case judged for the
same bug class (``fuzzer.triage.probe``), within one budget:

1. the *stage* (``fuzzer.triage.stage``): the first of torch's debugging backends
   that shows the bug, and whether it shows with static shapes too (one compile
   with ``dynamic=False`` on that stage): a bug gone without symbolic shapes lives
   in their handling, which no switch of a pass can say;
2. the *switches* (``fuzzer.triage.switches``), when the stage is Inductor: each
   named pass or scheduler feature turned off in turn, gone or stays, and where
   none alone removes the bug, a few pairs of them (``TRIAGE.max_pairs``);
3. the *bisection* (``fuzzer.triage.bisect``): torch's ``CompilerBisector`` on the
   stage's subsystems, down to one pass or lowering.

The *blame* is the part that names a root cause, and what bugs group by
(``fuzzer.corpus.bugs``): the stage, refined by the last switch that removes the
bug (in pipeline order; for the no-op removal, by the per-op rule inside it whose
absence removes it, ``fuzzer.triage.rules``) or else by the pass the bisector found (for an error,
the bisector's alone: its last application is the pass that raises it, and the
error's class names torch's raising frame, while a switch that avoids it only
reshapes that code's input; its switches are probed for the report, not the key), and marked
"dynamic shapes only" when static shapes do not show it.  The bisector's answer
alone is weak: every bug of a mutating custom op in Inductor needs the pass that
decomposes ``auto_functionalized`` (it is where the op's in-place call appears), so
on the corpus it names the same pass for a compile error, a storage offset
dropped under symbolic shapes and a copy-back read after a mutation; the static
probe tells those apart.  A lowering the bisector names is an op of the program: an
error keeps only "lowerings" of it (its class names where it is raised), while a wrong
value, which has nothing else to tell two lowerings' bugs apart, keeps the op too,
``lowerings[as_strided]`` (:func:`keyed_subsystems`): one cause met through two
consumer ops is then two keys, a duplicate to merge by hand, where the coarser key
called a new bug a held one.  A culprit whose stage walk found nothing (the bug did not
show again) blames nothing and groups with nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

from fuzzer.judge import contract
from fuzzer.limits import TRIAGE, OracleBudget
from fuzzer.program.ir import Case
from fuzzer.triage import aliasing, bisect, causes, lookup, rules, stage, switches
from fuzzer.triage.family import VALUE_KINDS
from fuzzer.triage.probe import BudgetSpent, Outcome, Probe

#: bisector subsystems whose application is a named pass (the rest name program ops)
PASS_SUBSYSTEMS = bisect.PASS_SUBSYSTEMS


def lowered_op(application: str) -> str:
    """The op a lowerings application lowered, from the graph node's name the bisector
    gives (``as_strided_1`` is the second ``as_strided``: the count is the program's)."""
    return re.sub(r"_\d+$", "", application)


def keyed_subsystems(kind: str) -> tuple[str, ...]:
    """The bisector subsystems whose application a key of ``kind`` reads: a pass's for
    every kind, and for a wrong value the op the lowerings lowered, the one place that
    tells apart two values Inductor's lowering gets wrong (an as_strided over the
    wrong storage, a dtype view's consumer read after a write): an error's is where it
    is raised, read off its class."""
    return PASS_SUBSYSTEMS + (bisect.LOWERINGS,) if kind in VALUE_KINDS else PASS_SUBSYSTEMS


@dataclass(frozen=True)
class Culprit:
    """Where a finding's bug lives, as far as its triage got."""

    stage: str | None
    subsystem: str | None = None
    pass_name: str | None = None
    switches: dict = field(default_factory=dict)
    #: the kind of finding it localised ("" in culprits saved before it was recorded)
    kind: str = ""
    #: True: gone with static shapes; False: shows with them too; None: not probed, or
    #: static shapes broke something else
    dynamic_only: bool | None = None
    #: the program's ``Mode.window_calls`` where the bug is gone with its inputs aliasing
    #: at every call (``fuzzer.triage.aliasing``): part of the key; "" not so, or not asked
    aliasing_changes: str = ""
    oracle_calls: int = 0
    seconds: float = 0.0
    budget_exhausted: bool = False
    torch_version: str = ""
    #: made with only the probes its key needs (``localise(key_only=True)``): the key
    #: is a whole triage's, the record may lack switches or the bisection
    key_only: bool = False
    #: stages before ``stage`` that failed otherwise: stage -> the finding kinds (or
    #: the status) it showed instead; not part of the key
    otherwise: dict = field(default_factory=dict)
    #: for a failed lookup (a ``KeyError``), the raising frame's locals that hold the
    #: missing key (``fuzzer.triage.lookup``): part of the key
    named_by: tuple[str, ...] = ()
    #: the target it was localised through where that is not the finding's own: a
    #: finding of ``export``, ``aoti`` or ``compiled-autograd`` whose program shows the
    #: same bug through ``compile`` is localised there (torch's debugging backends and
    #: switches are ``torch.compile``'s), so it is keyed as that bug (""; its own)
    via: str = ""
    #: the cause its probes showed (``fuzzer.triage.causes``): then the key is the cause
    #: alone, whatever the family, stage, switches or program ("": none shown, or not asked)
    cause: str = ""

    @property
    def blame(self) -> str | None:
        """The stage and, inside it, the switch or pass to blame (None: not localised)."""
        if self.stage is None:
            return None
        switch = rules.refined(switches.blamed(self.switches), self.switches)
        named = self.subsystem
        if self.pass_name and self.subsystem in PASS_SUBSYSTEMS:
            named = self.pass_name
        elif self.pass_name and self.subsystem in keyed_subsystems(self.kind):  # a wrong value's lowering
            named = f"{self.subsystem}[{lowered_op(self.pass_name)}]"
        if self.kind in contract.ERROR_KINDS:
            # an error is where it is raised: the bisector's last application is the pass
            # that raises, and its class names torch's raising frame; a switch that avoids
            # it only reshapes that code's input, so no switch is part of its blame
            switch = None
        if switch is not None:
            return f"{self.stage}:{switch}"
        return f"{self.stage}:{named}" if named is not None else self.stage

    @property
    def places(self) -> bool:
        """Whether the blame is a switch that only moves the computation
        (``switches.only_moves``): the scheduler's buffer reuse, its reordering, fusion."""
        blame = self.blame
        return blame is not None and ":" in blame and switches.only_moves(blame.partition(":")[2])

    @property
    def key(self) -> str | None:
        """What bugs group by: the blame; for a wrong result, every other switch that
        rewrites the program and whose throwing removes it too (a pending read
        computed after a later write, which only reinplacing's absence removes, and a
        clone elided so one buffer plays two roles, which the no-op removal's absence
        removes as well, both blame reinplacing, and are two bugs), but no switch
        that only moves the computation (``switches.also_needed``: it hides the bug,
        it is not part of it); and whether the bug needs dynamic shapes.  A bug that
        needs its inputs' aliasing to change between calls is keyed by that alone
        (``aliasing.BLAME``): the compiled code's guards, whatever stage first shows it."""
        if self.blame is None:
            return None
        if self.aliasing_changes:  # whatever stage or switch shows it; static shapes can still say
            return aliasing.BLAME + (" [dynamic shapes only]" if self.dynamic_only else "") + aliasing.MARK
        also = ""
        if self.kind not in contract.ERROR_KINDS:
            blamed = rules.split(self.blame.partition(":")[2])[0]
            others = switches.also_needed(self.switches, blamed)
            also = f" (also gone with {', '.join(others)} off)" if others else ""
        elif self.named_by:
            also = f" (missing key held by {', '.join(self.named_by)})"
        return (self.blame + also + (" [dynamic shapes only]" if self.dynamic_only else "")
                + (aliasing.MARK if self.aliasing_changes else ""))

    def to_json(self) -> dict:
        out = {"stage": self.stage, "kind": self.kind, "blame": self.blame, "dynamic_only": self.dynamic_only}
        if self.subsystem is not None:
            out["subsystem"] = self.subsystem
        if self.pass_name is not None:
            out["pass"] = self.pass_name
        if self.switches:
            out["switches"] = dict(self.switches)
        out.update(oracle_calls=self.oracle_calls, seconds=round(self.seconds, 2),
                   budget_exhausted=self.budget_exhausted, torch_version=self.torch_version)
        if self.aliasing_changes:
            out["aliasing_changes"] = self.aliasing_changes
        if self.key_only:
            out["key_only"] = True
        if self.named_by:
            out["named_by"] = list(self.named_by)
        if self.via:
            out["via"] = self.via
        if self.otherwise:
            out["otherwise"] = {stage_name: list(kinds) for stage_name, kinds in self.otherwise.items()}
        if self.cause:
            out["cause"] = self.cause
        return out

    @classmethod
    def from_json(cls, data: dict) -> Culprit:
        return cls(stage=data.get("stage"), subsystem=data.get("subsystem"), kind=data.get("kind", ""),
                   pass_name=data.get("pass"),
                   switches=dict(data.get("switches", {})), dynamic_only=data.get("dynamic_only"),
                   oracle_calls=int(data.get("oracle_calls", 0)),
                   seconds=float(data.get("seconds", 0.0)),
                   budget_exhausted=bool(data.get("budget_exhausted", False)),
                   torch_version=data.get("torch_version", ""),
                   key_only=bool(data.get("key_only", False)),
                   otherwise={k: tuple(v) for k, v in data.get("otherwise", {}).items()},
                   named_by=tuple(data.get("named_by", ())), via=data.get("via", ""),
                   aliasing_changes=str(data.get("aliasing_changes", "")), cause=str(data.get("cause", "")))


def localise(case: Case, kind: str, bug_class: contract.BugClass, device: str,
             budget: OracleBudget = TRIAGE.budget, backend: str = "inductor", key_only: bool = False,
             spots: frozenset | None = None) -> Culprit:
    """The culprit of ``case``'s bug (``bug_class`` of ``kind``, found on ``backend``, one
    of ``stage.STAGES``, showing at ``spots``: ``Probe``), within ``budget``.

    ``key_only`` leaves out the probes whose answers cannot change the culprit's key,
    for a finding that is only to be counted as its bug (a repeat of one with its
    examples): the key is the same, and the record lacks what was not asked.  The
    blame (:attr:`Culprit.blame`) reads the bisection or the switches, never both:
    an error's reads the bisection alone, so its switches are not probed; for a wrong
    result a switch wins, so the bisector runs only where no switch, alone or paired,
    removes it.  Of an unshrunk finding's twenty-odd compiles, that is the nine switch
    probes of every compile error, or the bisection (ten to twenty) of most wrong
    results.
    """
    probe = Probe(case, kind, bug_class, device, budget, spots)
    found_stage, found_switches, bisection, dynamic_only, named_by, changes, cause = None, {}, None, None, (), "", ""
    otherwise: dict[str, tuple[str, ...]] = {}
    error = kind in contract.ERROR_KINDS
    try:
        found_stage = stage.walk(probe, stage.stages_for(kind, backend), otherwise)
        if found_stage is not None:
            static = probe.outcome(found_stage, dynamic=False)
            dynamic_only = {Outcome.GONE: True, Outcome.STAYS: False}.get(static)
            changes = aliasing.needed(probe, found_stage, static is Outcome.STAYS)
            cause = "" if changes else causes.shown(probe, found_stage)
            if error and lookup.missed(bug_class):
                named_by = lookup.probe_lookup(probe, found_stage)
        inside = not (key_only and (changes or cause))  # else the key is the fact alone
        if key_only and error and found_stage is not None and inside:
            bisection = bisect.bisect(probe, found_stage, applications=False)
        if found_stage == "inductor" and not (key_only and error) and inside:
            found_switches = switches.probe_all(probe)
            if not error:  # an error's key is where it is raised
                found_switches.update(switches.probe_pairs(probe, found_switches))
                found_switches.update(rules.probe_rules(probe, found_switches))
        if found_stage is not None and not (key_only and (error or switches.blamed(found_switches))) and inside:
            bisection = bisect.bisect(probe, found_stage, applications=not key_only, keyed=keyed_subsystems(kind))
    except BudgetSpent:
        pass
    return Culprit(stage=found_stage, kind=kind,
                   subsystem=bisection.subsystem if bisection else None,
                   pass_name=bisection.application if bisection else None,
                   switches=found_switches, dynamic_only=dynamic_only, aliasing_changes=changes,
                   oracle_calls=probe.calls,
                   seconds=probe.seconds,
                   budget_exhausted=probe.exhausted, torch_version=torch.__version__, key_only=key_only,
                   otherwise=otherwise if found_stage is not None else {}, named_by=named_by, cause=cause)


def triageable(kind: str, backend: str = "inductor") -> bool:
    """Deaths are not localised in-process (a probe that kills its process would take
    the triage with it), nor findings of a backend that is not one of torch's
    debugging stages (a stand-in backend: no stage walk leads to it)."""
    return kind not in contract.PROCESS_KINDS and backend in stage.STAGES
