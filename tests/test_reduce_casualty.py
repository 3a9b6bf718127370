"""Shrinking a crash or a timeout (``fuzzer.reduce.casualty``): the death an entry
records, and whether a fresh process confirms it; stand-in entries and deaths, no
child process."""

from types import SimpleNamespace

from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.limits import PoolLimits
from fuzzer.reduce import casualty


def _entry(detail, kind=contract.CRASH):
    return SimpleNamespace(kind=kind, detail=[detail], case=case(prog({"x0": ("s0",)}, [])), device="cpu",
                           backend="inductor", fault=None)


def test_the_death_is_read_off_a_campaigns_detail_line_and_a_shrunk_ones():
    campaign = casualty.divergence_of(_entry("[crash] program 7: process died: SIGSEGV"))
    shrunk = casualty.divergence_of(_entry("[crash] binding 0, process: process died: SIGSEGV"))
    assert campaign.detail == shrunk.detail == "process died: SIGSEGV"
    assert campaign.kind == contract.CRASH and campaign.where == "process"
    assert casualty.divergence_of(_entry("whatever else")).detail == "whatever else"


class Dying:
    """A stand-in death that confirms one bug class."""

    def __init__(self, confirms_class, after_eager=True):
        self.confirms_class, self.after_eager, self.asked = confirms_class, after_eager, []

    def confirms(self, bug_class):
        self.asked.append(bug_class)
        return bug_class == self.confirms_class

    def line(self):
        return "crash: process died: SIGSEGV"


def test_a_death_confirms_the_entrys_own_class():
    entry = _entry("[crash] program 7: process died: SIGSEGV")
    own = contract.bug_class(contract.CRASH, [casualty.divergence_of(entry)])
    assert casualty.confirms(entry, Dying(own))
    assert not casualty.confirms(entry, Dying("crash: something else"))


def test_dies_again_stops_at_the_first_confirmation_and_says_why_none_did(monkeypatch):
    entry = _entry("[crash] program 7: process died: SIGSEGV")
    own = contract.bug_class(contract.CRASH, [casualty.divergence_of(entry)])
    deaths = iter([Dying("other", after_eager=False), Dying(own)])
    monkeypatch.setattr(casualty, "probe", lambda *a, **k: next(deaths))
    confirmation = casualty.dies_again(entry, PoolLimits(casualty_confirmations=3))
    assert confirmation.confirmed and len(confirmation.ends) == 2
    assert confirmation.ends[0].startswith("eager execution ")
    monkeypatch.setattr(casualty, "probe", lambda *a, **k: Dying("other"))
    refused = casualty.dies_again(entry, PoolLimits(casualty_confirmations=2))
    assert not refused.confirmed
    assert refused.why() == "it did not die so again in 2 fresh processes (crash: process died: SIGSEGV x2)"
