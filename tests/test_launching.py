"""What ``dcefuzz run`` decides from its options (``fuzzer.cli.launching``): the bugs known
upstream read for ``--known-upstream``, a shard that does not read and a launch that
cannot be as click's usage errors; nothing launched."""

import click
import pytest

from fuzzer.campaign.launch import PlanError
from fuzzer.campaign.state import Shard
from fuzzer.cli import launching


def test_no_folder_knows_nothing_and_a_folder_without_an_upstream_file_is_a_usage_error(tmp_path):
    assert launching.known_keys_of(None) == ()
    with pytest.raises(click.BadParameter, match="upstream.json") as refused:
        launching.known_keys_of(str(tmp_path))
    assert refused.value.param_hint == "--known-upstream"


def test_a_shard_reads_as_its_record_or_is_the_shard_options_error():
    assert launching._shard("2/3") == Shard.parse("2/3")
    with pytest.raises(click.BadParameter) as refused:
        launching._shard("3/2")
    assert refused.value.param_hint == "--shard"


def test_a_launch_that_cannot_be_is_the_usage_error_of_its_option_or_of_the_whole():
    with pytest.raises(click.BadParameter) as refused, launching.usage_errors():
        raise PlanError("no GPUs to spread over", option="--devices")
    assert refused.value.param_hint == "--devices"
    with pytest.raises(click.UsageError, match="cannot be together") as whole, launching.usage_errors():
        raise PlanError("these cannot be together")
    assert not isinstance(whole.value, click.BadParameter)
