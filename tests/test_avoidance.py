"""Avoidance (``fuzzer.campaign.avoidance``, ``--avoid-held``): a campaign draws again a
program that holds a held bug's example, deterministically, says so in its log, and
keeps the examples it started with across ``--resume``.  No program is run here."""

import shutil
from pathlib import Path

from helpers import prog

from fuzzer.campaign.avoidance import AVOID_FILE, Avoidance, Drawn, HeldExample
from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.entries import case_of
from fuzzer.campaign.session import Session
from fuzzer.campaign.state import CampaignFolder, Shard
from fuzzer.corpus import store
from fuzzer.limits import CAMPAIGN
from fuzzer.program.features import ALL
from fuzzer.program.generate import derive_seed, program_seed

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
EXAMPLE = prog({"x0": ("s0",)}, [("while_tap", ["x0"], "v0", {"site": 0})], outputs=["v0"])
HOLDS = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("while_tap", ["v0"], "v1", {"site": 1})],
             outputs=["v1"])
CLEAN = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])
AVOID = Avoidance((HeldExample("bug-while", "effect-log-1", EXAMPLE),))


def _explores(index: int, seed: int = 5) -> bool:
    from random import Random

    return Random(derive_seed("avoid-explore", seed, index)).random() < CAMPAIGN.avoid_explore


def test_a_draw_that_holds_an_example_is_drawn_again_from_a_seed_of_its_own():
    index = next(i for i in range(100) if not _explores(i))
    pseed = program_seed(5, index)
    drawn = AVOID.draw(5, index, pseed, lambda seed: HOLDS if seed == pseed else CLEAN)
    assert drawn == Drawn(index, derive_seed("avoid", pseed, 1), (("bug-while",),))
    # a clean first draw is run as drawn
    assert AVOID.draw(5, index, pseed, lambda seed: CLEAN) == Drawn(index, pseed)


def test_every_draw_holding_one_runs_the_first_and_an_exploring_index_runs_it_whatever_it_holds():
    index = next(i for i in range(100) if not _explores(i))
    pseed = program_seed(5, index)
    drawn = AVOID.draw(5, index, pseed, lambda seed: HOLDS)
    assert drawn.seed == pseed and len(drawn.avoided) == CAMPAIGN.avoid_draws
    exploring = next(i for i in range(100) if _explores(i))
    assert AVOID.draw(5, exploring, program_seed(5, exploring), lambda seed: HOLDS) == Drawn(exploring, program_seed(5, exploring))


def test_a_held_cause_is_held_by_every_program_with_what_its_probes_showed_it_needs():
    """An effect inside a ``torch.cond`` branch, whichever form puts it there, holds the
    cause; the same higher-order op around a body without an effect does not."""
    avoid = Avoidance((), (("bug-cond", "effect-in-cond"),))
    for form in ("cond_tap", "cond_log"):
        assert avoid.held_by(prog({"x0": ("s0",)}, [(form, ["x0"], "v0", {"site": 0})], outputs=["v0"])) \
            == ("bug-cond",)
    assert avoid.held_by(prog({"x0": ("s0",)}, [("cond_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])) == ()
    assert avoid.held_by(HOLDS) == ()  # an effect in a while_loop body: another cause
    # the committed corpus holds both effect-in-body causes of the compile target
    held = Avoidance.of_folders([CORPUS], lambda key: True, lambda entry: entry.origin.variant is None)
    assert {name for _, name in held.causes} >= {"effect-in-cond", "effect-in-while_loop"}


def test_only_examples_of_held_bugs_found_as_the_campaign_finds_them_are_avoided():
    everything = Avoidance.of_folders([CORPUS], lambda key: True, lambda entry: True)
    alike = Avoidance.of_folders([CORPUS], lambda key: True, lambda entry: entry.origin.variant is None)
    kinds = {store.load(p).kind for p in store.entries_in([str(CORPUS)])[0]}
    assert "stale-cache" in kinds
    assert {e.entry.rsplit("-", 1)[0] for e in everything.examples} >= {"stale-cache"}
    assert all(not e.entry.startswith("stale-cache") for e in alike.examples) and alike.examples
    assert Avoidance.of_folders([CORPUS], lambda key: False, lambda entry: True).examples == ()


def _session(tmp_path: Path, resume: bool = False, shard: Shard | None = None, state: str = "state") -> Session:
    config = Config(seed=100, device="cpu", corpus_dir=str(tmp_path / "corpus"), features=tuple(ALL.items()),
                    avoid_held=True)
    return Session(config, Budget(programs=400), shard or Shard(), folder=CampaignFolder(tmp_path / state), resume=resume,
                   log=lambda line: None)


def test_a_campaign_sets_aside_the_draws_holding_held_examples_and_keeps_its_examples_on_resume(tmp_path):
    shutil.copytree(CORPUS, tmp_path / "corpus")
    session = _session(tmp_path)
    recipes = [session.next_program() for _ in range(60)]
    aside = [r for r in recipes if r.avoided]
    assert aside, "some of seed 100's first 60 programs hold a held bug's example"
    for r in recipes:
        redrawn = bool(r.avoided) and len(r.avoided) < CAMPAIGN.avoid_draws
        assert (r.seed != program_seed(100, r.index)) == redrawn
        assert r.draws == len(r.avoided) + (len(r.avoided) < CAMPAIGN.avoid_draws)
        if redrawn:  # what runs holds none, and each draw set aside held what the log says
            assert session.avoidance.held_by(case_of(r.seed, session.config).program) == ()
            assert session.avoidance.held_by(case_of(program_seed(100, r.index), session.config).program) \
                == r.avoided[0]
    examples = session.avoidance
    assert examples.causes and examples.examples
    assert (tmp_path / "state" / AVOID_FILE).is_file()
    session.checkpoint()
    # a resumed campaign avoids what it started with, whatever the corpus holds since
    for path in (tmp_path / "corpus").glob("*"):
        path.unlink()
    assert _session(tmp_path, resume=True).avoidance == examples
    # two shards of the same seed draw, index for index, what the whole campaign drew
    shutil.copytree(CORPUS, tmp_path / "corpus", dirs_exist_ok=True)
    halves = [_session(tmp_path, shard=Shard(k, 2), state=f"shard{k}") for k in (1, 2)]
    by_index = {d.index: d for half in halves for d in (half.next_program() for _ in range(30))}
    assert [by_index[r.index] for r in recipes] == recipes


def test_with_known_upstream_the_public_bugs_of_that_folder_are_avoided_beside_an_empty_corpus(tmp_path):
    from fuzzer.corpus.bugs import bug_id
    from fuzzer.corpus.known import known_keys

    keys = known_keys(str(CORPUS)).keys
    config = Config(seed=1, device="cpu", corpus_dir=str(tmp_path / "corpus"), known=keys, known_dir=str(CORPUS),
                    avoid_held=True)
    avoided = {e.bug for e in Session(config, Budget(programs=1), log=lambda line: None).avoidance.examples}
    assert avoided and avoided <= {bug_id(k) for k in keys}
    alone = Config(seed=1, device="cpu", corpus_dir=str(tmp_path / "corpus"), avoid_held=True)
    assert Session(alone, Budget(programs=1), log=lambda line: None).avoidance.examples == ()
