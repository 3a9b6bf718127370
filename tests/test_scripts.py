"""A stale cache's scripts (``fuzzer.cache.scripts``): the spec its pair reads, a script
that carries both sides' libraries and parses, and a brief that parses; hand-built entries
of a declaration and of a setting, nothing run."""

import ast

from helpers import case, prog

from fuzzer.cache import pair, scripts
from fuzzer.cache.variants import variants_of
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract

C = case(prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"]))
STALE = contract.Divergence(contract.STALE_CACHE, 0, "output 0", "x", ("effect-added", "wrong-output", "values"))


def _entry(variant):
    return Entry.build(contract.STALE_CACHE, C, [STALE],
                       Origin(seed=1, device="cpu", backend="inductor", variant=variant.to_json()))


def _variant(kind):
    return next(v for v in variants_of(C.program) if v.kind == kind)


def test_the_spec_carries_what_the_pair_reads():
    e = _entry(_variant("effect-added"))
    spec = scripts.pair_spec(e)
    assert spec["label"] == "effect-added" and spec["bug_class"] == e.bug_class.text and spec["input_names"] == ["x0"]
    assert spec["caches"] == list(pair.CACHES) and spec["bindings"] == [dict(b) for b in C.bindings]


def test_a_script_carries_both_libraries_and_parses():
    variant = _variant("effect-added")
    text = scripts.script(_entry(variant))
    tree = ast.parse(text)
    names = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)}
    assert {"LIBRARY_OLD", "LIBRARY_NEW", "PROGRAM", "SPEC"} <= names
    assert repr(variant.library(["p_sin"], pair.NEW)) in text and "The declaration changed" in text


def test_a_settings_script_says_a_setting_changed_and_its_brief_parses():
    settings = [v for v in variants_of(C.program) if v.kind == "config-changed"]
    setting = next(v for v in settings if v.config_new)  # the new side sets it: the label names it
    e = _entry(setting)
    assert "A setting changed between two runs" in scripts.script(e)
    assert scripts.pair_spec(e)["label"] == setting.label and setting.label.startswith("config-changed:")
    assert all(v.label == "config-changed" for v in settings if not v.config_new)
    ast.parse(scripts.brief(e))
    ast.parse(scripts.brief(_entry(_variant("effect-added"))))
