"""Merging shard folders (``fuzzer.campaign.merge``): counts summed, the watermark the
first program no shard ran, one entry per signature with every hit, and shards of
another campaign or run twice refused; hand-written states and entries."""

import json
from collections import Counter

import pytest
from helpers import case, divergence_on, prog

from fuzzer.campaign.merge import merge
from fuzzer.campaign.state import STATS_FILE, BadState, CampaignFolder, CampaignState, Shard
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract


def _shard(folder, shard, next_index, done_above=(), seed=5, found=()):
    """A shard's folder: its state, a stats line, and an entry of ``n`` statements for
    each ``n`` of ``found`` (programs of one size are one signature)."""
    state = CampaignState(seed=seed, shard=shard, next_index=next_index, done_above=list(done_above),
                          programs=next_index, seconds=2.0, findings=Counter({"effect-log": len(found)}),
                          saved=len(found))
    CampaignFolder(folder).save(state)
    CampaignFolder(folder).log_stats(state)
    for n in found:
        body = [("p_sin", ["x0"], f"v{k}", {"site": k + 1}) for k in range(n - 1)]
        c = case(prog({"x0": ("s0",)}, [*body, ("e_log", ["x0"], None, {"site": 0})]))
        store.save(Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)],
                               Origin(seed=1, device="cpu", backend="inductor")), CampaignFolder(folder).corpus)


def test_shards_merge_into_one_run_of_their_seed(tmp_path):
    _shard(tmp_path / "a", Shard(1, 2), 4, found=(1,))          # ran 0, 2
    _shard(tmp_path / "b", Shard(2, 2), 7, done_above=(9,), found=(1, 2))   # ran 1, 3, 5, 9
    merged = merge(tmp_path / "out", [tmp_path / "a", tmp_path / "b"])
    state = CampaignFolder(tmp_path / "out").load()
    assert state.shard == Shard() and state.next_index == 4 and state.done_above == [5, 9]
    assert state.programs == 11 and state.seconds == 4.0 and state.findings == Counter({"effect-log": 3})
    # the same program in two shards is one entry with both hits
    assert (merged.entries, merged.new_entries, merged.merged_hits) == (3, 2, 1)
    assert (state.saved, state.repeats) == (2, 1)
    lines = (tmp_path / "out" / STATS_FILE).read_text().splitlines()
    assert [json.loads(line)["merged_from"] for line in lines] == ["1/2", "2/2"]


def test_another_campaigns_shard_or_a_shard_merged_twice_is_refused(tmp_path):
    _shard(tmp_path / "a", Shard(1, 2), 4)
    _shard(tmp_path / "b", Shard(2, 2), 4, seed=6)
    with pytest.raises(BadState, match="ran seed 6"):
        merge(tmp_path / "out", [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(BadState, match="ran programs another folder ran too"):
        merge(tmp_path / "out2", [tmp_path / "a", tmp_path / "a"])
