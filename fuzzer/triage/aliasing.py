"""Whether a wrong value needs its inputs' aliasing to change between calls.

``Mode.window_calls`` hands a program's windows over as views of their base at some
calls only (``fuzzer.program.windows``): distinct inputs at the first call and windows
from the second on (``later``), or the reverse (``first``), every binding through one
compiled function.  Code compiled for one aliasing of its inputs is only right for that
one, so torch guards it: Dynamo's no-aliasing guard compares the tensors it was given,
and AOTAutograd adds a ``StorageOverlap`` guard, but only where inputs overlapped at the
compile (``compute_overlapping_inputs``).  pytorch/pytorch#139789 (open) is code compiled
for distinct inputs run on overlapping ones with no recompile; its author says it should
recompile.

A wrong value that is gone both when the windows alias at every call, the compile's
call included, and when they are distinct inputs at every call, is such a case whatever
the program's forms: the code was right for either aliasing compiled for it, and ran on
the other.  Both are asked: a bug of distinct inputs that aliasing at the compile hides
(shown at the first call of ``later``) is gone with the windows at every call too, and
is no such case.  Before this fact a wrong value at a
stage the bisector has no subsystems for was keyed by what its program does
(``bugs.key_of``'s ``{does ...}``), so every set of forms that wrote a window made a bug
of its own: a one-hour campaign on 2.14.1 filed one cause as three bugs (two share a
key now; the third's probe meets another bug, below).  The key says
the fact instead (``Culprit.key``: ``guards [...]``), and nothing else: not the stage
that first shows it, nor a switch, nor what the program tells of its buffers.  Where
the functional graph already computes the stale answer it shows at ``aot_eager``; where
only Inductor's scheduling reads or writes across the windows in an order right for
distinct inputs, it shows at Inductor, blamed on fusion or the peak-memory reordering;
either way the code was compiled for the other aliasing, and a recompile fixes both (a
10-minute campaign of windows, seed 700, filed such findings under three keys).  Nor a
direction: code compiled for overlapping inputs run on distinct ones (``first``)
fails the same way with static shapes (on 2.14.1 a ``setStorage`` out of bounds, aten
alone), and pytorch/pytorch#185891 (open) fixes both with AOTAutograd's overlap guards.
The culprit keeps which way it changed.

The probes are two compiles, of the case with the windows at every call and with them
distinct inputs at every call, on the stage that first shows the bug; asked only of a wrong value (an error is keyed by torch's raising
frame already) whose program changes its aliasing between calls.  It compiles with
static shapes where static shapes show the bug too: with symbolic sizes, windows that
alias at the compile meet another bug of torch's first (``gen_alias_from_base``: a
``SymInt`` "not tracked with proxy", on 2.13 and 2.14.1), which says nothing of this
one.  Anything but the bug gone (it stays, or something else breaks) leaves the fact
unsaid, and the key reads the program as before: a finding is never grouped by a fact
no probe showed.

Nor is it asked where Dynamo recompiled at the call where the aliasing changed
(:func:`recompiled_at_change`): windows along a dim other than 0 bring a stride or an
offset its guards check, so that call ran a graph compiled for it, which the probes'
graphs are not; a bug of that graph filed as #139789's would be a blind spot.
"""

from __future__ import annotations

import dataclasses

from fuzzer.program import windows
from fuzzer.triage.family import VALUE_KINDS
from fuzzer.triage.probe import Outcome, Probe

#: how a bug that needs its inputs' aliasing to change is said, whichever way it changes
WORDS = "its inputs' aliasing changes between calls"
#: what its key says (``Culprit.key``): the guards of the compiled code, then the fact
BLAME, MARK = "guards", f" [{WORDS}]"


def asked(case, kind: str) -> bool:
    """Whether the fact is asked of a finding of ``kind`` on ``case``: a wrong value whose
    inputs alias at some calls only, among the calls its case makes."""
    mode = case.program.mode
    return kind in VALUE_KINDS and bool(mode.window_calls) and windows.changing_call(mode) < len(case.bindings)


def recompiled_at_change(probe: Probe, stage: str) -> bool:
    """Whether the finding's own case, compiled on ``stage`` as found, recompiled at the call
    where its inputs' aliasing changes (a compile of it there, unless the probe made one).

    Then no code ran on an aliasing it was not compiled for: Dynamo saw the change (windows
    along a dim other than 0 bring a stride or an offset of their own, which its guards
    check) and compiled for it, and a wrong value there is a bug of the recompiled graph.
    The two probes would compile other graphs (static shapes, the stride tied to the
    base's), so their answer would say nothing of it."""
    if (stage, True) not in probe.recompiled:
        probe.outcome(stage)
    return windows.changing_call(probe.case.program.mode) in probe.recompiled.get((stage, True), ())


def aliased_throughout(case):
    """``case`` with its windows aliasing their base at every call."""
    mode = dataclasses.replace(case.program.mode, window_calls="")
    return dataclasses.replace(case, program=dataclasses.replace(case.program, mode=mode))


def apart_throughout(case):
    """``case`` with its windows distinct inputs at every call (each drawn as its own)."""
    mode = dataclasses.replace(case.program.mode, windows=(), window_calls="")
    return dataclasses.replace(case, program=dataclasses.replace(case.program, mode=mode))


def needed(probe: Probe, stage: str, static_shows: bool) -> str:
    """The finding's ``window_calls`` where its bug, first shown on ``stage``, is gone both
    with the windows aliasing at every call and with them distinct at every call (a
    compile each, with static shapes where ``static_shows``: they show the bug too); ""
    where either shows it, something else breaks, the fact is not asked, or Dynamo
    recompiled at the change (:func:`recompiled_at_change`)."""
    if not asked(probe.case, probe.kind) or recompiled_at_change(probe, stage):
        return ""
    for throughout in (aliased_throughout(probe.case), apart_throughout(probe.case)):
        if probe.outcome(stage, dynamic=not static_shows, case=throughout) is not Outcome.GONE:
            return ""
    return probe.case.program.mode.window_calls
