"""What a repro script knows of its entry: the ``SPEC`` it is written with, as a record.

A script holds its spec as a dict literal (``fuzzer.render.repro.spec`` builds it,
``pprint`` writes it) and its driver (``fuzzer.render.driver``) reads it by key, so the
spec stays a dict; :class:`ReproSpec` names each key and what it holds.  Carried into
every script before the driver, so it depends on the standard library only.
"""

from __future__ import annotations

from typing import TypedDict


class Wanted(TypedDict):
    """What a script looks for (``driver.conclude``): a stale-cache script's spec
    (``fuzzer.cache.scripts.pair_spec``) holds these too."""

    #: the entry's kind (``identity.Kind``'s value)
    kind: str
    #: its bug class's text (``identity.BugClass``): what a run must show again
    bug_class: str


class _Required(Wanted):
    #: the entry's id
    id: str
    #: the device it was found on (the script's default)
    device: str
    #: the backend it is compiled with
    backend: str
    #: the sizes of each call, symbol -> value
    bindings: list[dict[str, int]]
    #: the seed binding 0's inputs are drawn from (binding ``i``'s: ``input_seed + i``)
    input_seed: int
    #: the program's inputs' names, in order
    input_names: list[str]
    #: each input's dims, as expressions of the symbols
    input_dims: list[list[str]]
    #: ``torch.compile``'s ``dynamic=`` (None: automatic dynamic)
    dynamic: bool | None
    #: the inputs' dtype's name in ``torch``
    dtype: str
    #: the inputs handed over strided, by index
    strided: list[int]
    #: ``[k, j]`` for each input k that aliases input j
    aliases: list[list[int]]
    #: the dead pure call sites (``liveness.dead_pure_sites``): a ``missed-dce`` may not keep them
    dead_pure_sites: list[int]
    #: each dead pure call site (as a string) with why the compiler may keep it
    dead_site_causes: dict[str, str]
    #: how a crash or timeout entry's process died (None: any other kind)
    death: str | None
    #: the resident memory above which a crash or timeout child is killed
    memory_cap_mb: int
    #: the seconds a crash or timeout child may run
    time_limit_s: float


class ReproSpec(_Required, total=False):
    """The ``SPEC`` of an entry's script: each key only where the entry has it."""

    #: ``[k, dtype]`` for each input of a fixed dtype
    fixed: list[list]
    #: ``[k, how]`` for each input handed over in another layout
    layouts: list[list]
    #: ``[k, j, dim, start]`` for each input that is a window of input j
    windows: list[list]
    #: a module's state carries from call to call
    carry: bool
    #: the calls at which the windows share their base's storage
    window_at: list[int]
    #: what the program asks of the compiler (``trial.asks_of``): its marks' kinds ...
    marks: list[str]
    #: ... the higher-order ops it calls ...
    hops: list[str]
    #: ... the limits it may reach ...
    limits: list[str]
    #: ... the ``[input, dim]`` it marks unbacked ...
    unbacked: list[list]
    #: ... and the ``[op, site]`` events a backward logs
    backward_logs: list[list]
    #: torch's intra-op threads of the process that found it
    threads: int
    #: the hash seed of the process that found it
    hash_seed: str
    #: the target it was found through, where not ``compile``
    target: str
    #: ``torch.compile``'s ``mode=`` of its target, where it has one
    mode: str
    #: ``[type, stage, pattern]`` for each failure its target declines (``Target.declines``),
    #: where it declines any: refused, as the trial refused it
    declines: list[list[str]]
    #: how its target lowers the program it exports (``Target.lowering``'s name, one of
    #: ``exporting.LOWERINGS``), where its target exports
    lowering: str
    #: every run, its backward included, under compiled autograd (``Target.under_compiled_autograd``)
    compiled_autograd: bool
