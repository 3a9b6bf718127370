"""What a repro script knows of its entry (``fuzzer.render.spec``): the keys of its
``SPEC`` as ``repro.spec`` writes them, and which targets run through ``torch.export``;
entries of drawn programs, nothing run."""

import pytest
from helpers import divergence_on

from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract, targets
from fuzzer.program import features
from fuzzer.program.generate import generate
from fuzzer.render import repro
from fuzzer.render.spec import ReproSpec, through_export


@pytest.mark.parametrize("target", targets.names())
def test_a_target_runs_through_export_where_the_registry_says_it_exports(target):
    """The spec names the exporting targets by hand (a script carries the standard
    library only): they must be the registry's."""
    assert through_export({"target": target}) == isinstance(targets.get(target), targets.ExportTarget)


def test_no_target_is_compile_which_does_not_export():
    assert not through_export({})


def test_the_spec_of_every_drawn_program_holds_the_required_keys_and_only_keys_the_record_names():
    """Programs drawn with every feature, through each target in turn: between them they
    reach every key of what their mode and calls ask, which the record must name."""
    names, seen = targets.names(), set()
    for seed in range(60):
        found = Origin(seed=seed, device="cpu", backend="inductor", target=names[seed % len(names)], threads=1)
        e = Entry.build(contract.EFFECT_LOG, generate(seed, features=features.ALL), [divergence_on(0)], found)
        spec = repro.spec(e)
        assert ReproSpec.__required_keys__ <= set(spec), seed
        assert set(spec) <= ReproSpec.__required_keys__ | ReproSpec.__optional_keys__, seed
        seen |= set(spec)
    # a user's op's fixed dtypes and a process's hash seed are all that no drawn program has
    assert ReproSpec.__optional_keys__ - seen <= {"fixed", "hash_seed"}
