"""Plant: the compile caches' key ignores Inductor's custom graph passes.

Today ``FxGraphHashDetails`` (which the AOTAutograd cache's key extends) puts the
``uuid()`` of every custom pass set in Inductor's config into the key, so a compile
with a pass and one without never share an artifact.  This fault drops them from
the key: a compile served by a cache that a compile with another pass filled gets
that compile's code.  Only a cache pair can see it (``dcefuzz run --cache-pairs``):
its ``config-changed`` variant runs a wrong custom pass on the old side and none on
the new one.
"""

from __future__ import annotations

from fuzzer.faults._fault import STALE_KEY, Fault

TARGET = "torch._inductor.codecache:FxGraphHashDetails._get_custom_pass_detail"


def _build(current):
    def _get_custom_pass_detail(self, custom_pass):
        return None

    return {TARGET: _get_custom_pass_detail}


FAULTS = (
    Fault(
        name="cache-key-ignores-custom-passes",
        bug_class=STALE_KEY,
        expected_kind="stale-cache",
        dynamic_only=False,
        description="the compile caches' key leaves out Inductor's custom graph passes",
        targets=(TARGET,),
        build=_build,
        # cache pairs draw a config-changed variant for one program in about ten, and
        # each pair is two processes and three compiles: ten minutes find it
        seconds=900.0,
    ),
)
