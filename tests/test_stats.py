"""A campaign run's counts (``fuzzer.campaign.stats``): added to the state it resumes,
and said in its summary and progress line; hand-filled counts."""

from collections import Counter

from fuzzer.campaign.state import CampaignState, Shard
from fuzzer.campaign.stats import Stats, progress_line

BASE = CampaignState(seed=3, shard=Shard(), next_index=5, done_above=[7], programs=5, seconds=10.0,
                     findings=Counter({"effect-log": 1}), saved=1, untested=Counter({"graph-break": 1}))


def test_a_run_starts_where_its_base_stopped_and_adds_to_it():
    stats = Stats(BASE)
    assert stats.next_index == 5 and stats.done_above == [7]
    stats.count("ok")
    stats.count("flaky")
    stats.seconds, stats.next_index = 4.0, 8
    stats.findings["effect-log"] += 2
    stats.saved.append("effect-log-1")
    stats.untested["refused"] += 1
    state = stats.to_state()
    assert (state.programs, state.seconds, state.next_index, state.saved) == (7, 14.0, 8, 2)
    assert state.findings == Counter({"effect-log": 3})
    assert state.untested == Counter({"graph-break": 1, "refused": 1})
    assert stats.rate == 0.5


def test_mostly_untested_is_more_than_half_of_this_runs_programs():
    stats = Stats(CampaignState(seed=0, shard=Shard()))
    assert not stats.mostly_untested
    stats.count("ok")
    stats.count("ok")
    stats.untested["graph-break"] = 1
    assert not stats.mostly_untested
    stats.untested["refused"] = 1
    assert stats.mostly_untested


def test_the_summary_and_progress_line_say_the_counts():
    stats = Stats(BASE)
    stats.count("ok")
    stats.seconds = 60.0
    stats.findings["wrong-output"] = 2
    summary = stats.summary()
    assert "programs   1 in 60s (1.0/min)" in summary and "findings   wrong-output 2" in summary
    assert "resumed    6 programs in all, next program index 5" in summary
    line = progress_line(stats, " !")
    assert line.startswith("[    60s] 1 programs, 1.0/min, 2 findings (wrong-output 2)") and line.endswith(" !")
