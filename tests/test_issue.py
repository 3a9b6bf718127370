"""A stale cache's issue (``fuzzer.cache.issue``): its title by the cache and the change,
and the evidence of the run with the FX graph cache alone; hand-built bugs."""

from types import SimpleNamespace

from helpers import klass

from fuzzer.cache import issue
from fuzzer.triage.culprit import Culprit


def _bug(family, subsystem, alone=None):
    culprit = Culprit("cache", subsystem=subsystem, switches={"fx_graph only": alone} if alone else {})
    return SimpleNamespace(family=klass(family), culprit=culprit)


def test_the_title_names_the_cache_and_what_changed():
    declared = issue.title(_bug("stale-cache|corrupted-value,effect-added", "aot_autograd_cache"))
    assert declared.startswith("[aotdispatch] AOTAutograd cache serves code compiled for a custom op's old "
                               "declaration after")
    setting = issue.title(_bug("stale-cache|config-changed:donated_buffer,corrupted-value", "fx_graph_cache"))
    assert "under the old setting" in setting


def test_the_evidence_says_which_cache_and_its_workaround():
    outer = issue.evidence(_bug("x", "aot_autograd_cache", "gone").culprit)
    assert outer[0] == "- **Cache**: the AOTAutograd cache." and "enable_autograd_cache = False" in outer[-1]
    inner = issue.evidence(_bug("x", "fx_graph_cache", "stays").culprit)
    assert "fx_graph_cache = False" in inner[-1]
    assert issue.evidence(None)[0].startswith("Not localised") and issue.evidence(Culprit(None))[0].startswith(
        "Not localised")
