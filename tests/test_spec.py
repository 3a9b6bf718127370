"""What a repro script knows of its entry (``fuzzer.render.spec``): the keys of its
``SPEC`` as ``repro.spec`` writes them, and which targets run through ``torch.export``;
hand-built entries, nothing run."""

import dataclasses

import pytest
from helpers import case, divergence_on, prog

from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract, targets
from fuzzer.program.ir import Mode
from fuzzer.render import repro
from fuzzer.render.spec import ReproSpec, through_export

P = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                                   ("e_log", ["v0"], None, {"site": 1})], outputs=["v0"])


@pytest.mark.parametrize("target", targets.names())
def test_a_target_runs_through_export_where_the_registry_says_it_exports(target):
    """The spec names the exporting targets by hand (a script carries the standard
    library only): they must be the registry's."""
    assert through_export({"target": target}) == isinstance(targets.get(target), targets.ExportTarget)


def test_no_target_is_compile_which_does_not_export():
    assert not through_export({})


@pytest.mark.parametrize("mode, target", [(Mode(), targets.DEFAULT),
                                          (Mode(strided=("x0",), layouts=(("x1", "transposed"),)), "export")])
def test_the_spec_of_an_entry_holds_every_required_key_and_only_keys_the_record_names(mode, target):
    found = Origin(seed=1, device="cpu", backend="inductor", target=target, threads=1)
    e = Entry.build(contract.EFFECT_LOG, case(dataclasses.replace(P, mode=mode)), [divergence_on(0)], found)
    spec = repro.spec(e)
    assert ReproSpec.__required_keys__ <= set(spec)
    assert set(spec) <= ReproSpec.__required_keys__ | ReproSpec.__optional_keys__
    assert ("target" in spec) == (target != targets.DEFAULT) and ("layouts" in spec) == bool(mode.layouts)
