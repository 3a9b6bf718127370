"""Bug classes as older dcefuzz versions made them.

An entry's class is fixed when it is saved; when the contract learns to class a bug
better (an error by where torch raised it, not by its words; a missed-dce by why the
call may be kept), entries saved before still say the old class.  Replaying or
localising such an entry looks for a class today's contract never makes: ``dcefuzz
reclass`` (``fuzzer.replay.reclass``) renames them, and triage refuses to probe one
(``fuzzer.triage.probe.OutdatedClass``) rather than call it "not localised".
"""

from __future__ import annotations

import re

from fuzzer.judge import contract, raised

#: FX's generated names with a suffix (``arg3_1``, ``primals_2_1``): a class saved before
#: the contract took their numbers out (``contract._NAMES``) keeps them, so one cause
#: (an effect token's placeholder never passed, whichever argument it is) was a class
#: per placeholder
_SUFFIXED = re.compile(r"\b([svux]|buf|op|arg|primals_|tangents_)\d+_\d+\b")


def renamed(saved: contract.BugClass) -> contract.BugClass:
    """A bug class saved before FX's suffixed names lost their numbers, as today's
    contract writes it."""
    return contract.BugClass(saved.kind, tuple(_SUFFIXED.sub(lambda match: match.group(1) + "#", symptom)
                                               for symptom in saved.symptoms))


def legacy_class(kind: str, divs: list[contract.Divergence]) -> contract.BugClass:
    """The class ``divs`` had before errors were classed by where they were raised, and
    before a missed-dce was parted by why the call may be kept."""
    if kind in contract.ERROR_KINDS and divs:
        return contract.BugClass(kind, (contract.normalise_message(divs[0].detail),))
    if kind == contract.MISSED_DCE:
        return contract.BugClass(kind)
    return contract.bug_class(kind, divs)


def unnamed_raiser(kind: str, divs: list[contract.Divergence]) -> contract.BugClass:
    """The class ``divs`` had before a place that names no one thing (autograd's engine,
    Inductor's generated code: ``raised.RAISER``) said what raised under it, and kept
    its words only where the error surfaced below Python."""
    if kind not in contract.ERROR_KINDS or not divs or not divs[0].symptoms:
        return contract.bug_class(kind, divs)
    site = divs[0].symptoms[0]
    named = raised.RAISER.search(site)
    engine = f" in torch.autograd:{raised.ENGINE[1]}: "
    if named is not None:
        site = site[:named.start()]
    elif engine in site:
        site = site[:site.index(engine) + len(engine) - 2]
    return contract.BugClass(kind, (site,))
