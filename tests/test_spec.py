"""What a repro script knows of its entry (``fuzzer.render.spec``): the keys of its
``SPEC`` as ``repro.spec`` writes them, and how each target runs the program;
entries of drawn programs, nothing run."""

import pytest
from helpers import divergence_on

from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract, targets
from fuzzer.program import features
from fuzzer.program.generate import generate
from fuzzer.render import repro
from fuzzer.render.spec import ReproSpec


@pytest.mark.parametrize("target", targets.names())
def test_a_spec_says_how_its_target_runs_the_program_as_the_registry_says(target):
    """A script carries the standard library only, so its driver reads how the target
    runs the program from the spec: the lowering of a target that exports, and whether
    runs go under compiled autograd, each exactly where the registry's target says so."""
    found = Origin(seed=3, device="cpu", backend="inductor", target=target, threads=1)
    spec = repro.spec(Entry.build(contract.EFFECT_LOG, generate(3), [divergence_on(0)], found))
    lowering = targets.get(target).lowering
    assert spec.get("lowering") == (lowering.name if lowering is not None else None)
    assert spec.get("compiled_autograd", False) == targets.get(target).under_compiled_autograd


#: drawn programs enough to reach every key: with the memory features (index-writes,
#: dtype-reads, input-swaps, base-offsets, transposed-writes) and the op families' (opaque
#: objects, tensor subclasses, vmap and autocast rules) in the table the first to reach
#: ``backward_logs`` is seed 234 (it was within 60)
SPEC_PROGRAMS = 300


def test_the_spec_of_every_drawn_program_holds_the_required_keys_and_only_keys_the_record_names():
    """Programs drawn with every feature, through each target in turn: between them they
    reach every key of what their mode and calls ask, which the record must name."""
    names, seen = targets.names(), set()
    for seed in range(SPEC_PROGRAMS):
        found = Origin(seed=seed, device="cpu", backend="inductor", target=names[seed % len(names)], threads=1)
        e = Entry.build(contract.EFFECT_LOG, generate(seed, features=features.ALL), [divergence_on(0)], found)
        spec = repro.spec(e)
        assert ReproSpec.__required_keys__ <= set(spec), seed
        assert set(spec) <= ReproSpec.__required_keys__ | ReproSpec.__optional_keys__, seed
        seen |= set(spec)
        if ReproSpec.__optional_keys__ - seen <= {"fixed", "hash_seed"} and seed >= 60:
            break
    # a user's op's fixed dtypes and a process's hash seed are all that no drawn program has
    assert ReproSpec.__optional_keys__ - seen <= {"fixed", "hash_seed"}
