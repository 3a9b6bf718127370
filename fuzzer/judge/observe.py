"""What one run of a program observes, recorded the same way in the package and in
every standalone repro script.

Depends on torch and the standard library only: ``fuzzer.corpus.repro`` pastes this
module's text into each script, so a repro records a run exactly as the fuzzer did.

A run records its returned values, the final contents of every input, the effect
log and the call trace of the custom ops (the ``trace`` dict the op library fills),
and how it failed, if it did.  A compiled run also records its *coverage*: how much
of it ran as compiled code.  ``torch.compile`` without ``fullgraph`` runs whatever
Dynamo cannot trace eagerly (a graph break, a skipped frame, the eager fallback
after the recompile limit), and eager code cannot show a compiler bug: a run that
was not wholly compiled cannot be called clean.  Coverage is read from Dynamo's own
counters (``torch._dynamo.utils.counters``), before and after the run.
"""

from __future__ import annotations

import contextlib
import importlib
import traceback
from dataclasses import dataclass, field

import torch

COMPILE = "compile"
RUNTIME = "runtime"

#: why a compiled run did not run wholly as compiled code
GRAPH_BREAK = "graph-break"
SKIPPED_FRAME = "skipped-frame"
RECOMPILE_LIMIT = "recompile-limit"
NO_GRAPH = "no-graph"
#: the compiler declined the program for what it asked (a dim marked dynamic that
#: the program specialises, a guard on a size marked unbacked): ``contract.refusal``
REFUSED = "refused"
UNTESTED_REASONS = (GRAPH_BREAK, SKIPPED_FRAME, RECOMPILE_LIMIT, NO_GRAPH, REFUSED)
#: a graph break the program asked for (``torch._dynamo.graph_break()``): the parts
#: on either side are compiled, so it leaves nothing untested
REQUESTED_BREAK = "requested-break"
REQUESTED_BREAK_MESSAGE = "Call to `torch._dynamo.graph_break()`"


#: the on-disk compile caches (Inductor's FX graph cache, AOTAutograd's cache) and
#: the value that turns each off: a fresh compile must not be served from them
CACHE_SETTINGS: tuple[tuple[str, str, bool], ...] = (
    ("torch._inductor.config", "fx_graph_cache", False),
    ("torch._functorch.config", "enable_autograd_cache", False),
)


@contextlib.contextmanager
def caches_off():
    """Compile without reading or writing the on-disk compile caches.

    A confirmation or replay that a cached artifact could serve would only prove
    the cache holds what an earlier compile wrote: the divergence must come from a
    compile made now.
    """
    old = []
    try:
        for module_name, attr, value in CACHE_SETTINGS:
            try:
                module = importlib.import_module(module_name)
            except ImportError:  # a torch without that cache
                continue
            if hasattr(module, attr):
                old.append((module, attr, getattr(module, attr)))
                setattr(module, attr, value)
        yield
    finally:
        for module, attr, value in reversed(old):
            setattr(module, attr, value)


def draw_inputs(shapes, seed: int, device: str, dtype=torch.float32, strided=(), reference=False,
                aliases=()) -> list:
    """The inputs of one run: standard normal from ``seed``, drawn on the CPU in float32
    whatever the device, so every device and dtype start from the same numbers; cast
    to the program's ``dtype``, and for the float64 reference up from those values.
    An input whose index is in ``strided`` is handed over with its last dim strided
    by 2 (the same values, not contiguous); for each ``(k, j)`` of ``aliases`` input
    k is a view of the whole of input j (its own draw is discarded)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for k, size in enumerate(shapes):
        x = torch.randn(size, generator=g, dtype=torch.float32).to(dtype)
        x = x.to(device=device, dtype=torch.float64 if reference else dtype)
        if k in strided:
            wide = x.new_zeros(tuple(size[:-1]) + (2 * size[-1],))
            x = wide[..., ::2].copy_(x)
        out.append(x)
    for k, j in aliases:
        out[k] = out[j].view(out[j].shape)
    return out


@dataclass(frozen=True)
class Failure:
    """An exception raised by a run, with the stage it was raised in."""

    type: str
    message: str
    stage: str
    traceback: str = ""

    def line(self) -> str:
        """The type and first message line; a wrapper's first line ("backend='inductor'
        raised:") names no error, so the line it introduces is taken with it."""
        lines = [ln.strip() for ln in self.message.strip().splitlines() if ln.strip()]
        first = lines[0] if lines else ""
        if first.endswith("raised:") and len(lines) > 1:
            first = f"{first} {lines[1]}"
        return f"{self.type}: {first}"[:500]


@dataclass(frozen=True)
class Counts:
    """A snapshot of Dynamo's counters that say what was compiled."""

    frames_total: int = 0
    frames_ok: int = 0
    graphs: int = 0
    graph_breaks: tuple = ()
    unimplemented: tuple = ()

    @classmethod
    def now(cls) -> Counts:
        try:
            from torch._dynamo.utils import counters
        except ImportError:  # a torch without dynamo's counters: nothing is known
            return cls()
        return cls(int(counters["frames"]["total"]), int(counters["frames"]["ok"]),
                   int(counters["stats"]["unique_graphs"]),
                   tuple(sorted(counters["graph_break"].items())),
                   tuple(sorted(counters["unimplemented"].items())))


def _grown(before: tuple, after: tuple) -> list[str]:
    old = dict(before)
    return [msg for msg, n in after if n > old.get(msg, 0)]


@dataclass(frozen=True)
class Coverage:
    """What Dynamo did during one compiled run."""

    frames: int = 0
    graphs: int = 0
    #: (reason, Dynamo's message) for each way part of the run was not compiled
    gaps: tuple = ()

    @classmethod
    def between(cls, before: Counts, after: Counts, raised: bool) -> Coverage:
        gaps = [(REQUESTED_BREAK if m.startswith(REQUESTED_BREAK_MESSAGE) else GRAPH_BREAK, m)
                for m in _grown(before.graph_breaks, after.graph_breaks)]
        for m in _grown(before.unimplemented, after.unimplemented):
            gaps.append((RECOMPILE_LIMIT if "recompile limit" in m.lower() else SKIPPED_FRAME, m))
        failed = (after.frames_total - before.frames_total) - (after.frames_ok - before.frames_ok)
        if failed > 0 and not raised and not gaps:
            gaps.append((SKIPPED_FRAME, f"{failed} frame(s) not converted"))
        return cls(after.frames_ok - before.frames_ok, after.graphs - before.graphs, tuple(gaps))


@dataclass
class Run:
    """What one run of the program on one binding left behind."""

    outputs: list | None = None
    inputs_after: list = field(default_factory=list)
    effects: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    failure: Failure | None = None
    #: compiled runs only: what Dynamo compiled and what it left to eager
    coverage: Coverage | None = None


def _compile_exception_types() -> tuple:
    types: list = []
    for module, names in (("torch._dynamo.exc", ("TorchDynamoException", "BackendCompilerFailed",
                                                  "FailOnRecompileLimitHit")),
                          ("torch._inductor.exc", ("InductorError",))):
        try:
            mod = __import__(module, fromlist=list(names))
        except ImportError:
            continue
        types += [getattr(mod, n) for n in names if hasattr(mod, n)]
    return tuple(types)


def stage_of(exc: BaseException, before: Counts, after: Counts) -> str:
    """Whether an exception came from compiling or from running compiled code.

    Compiling: it is one of Dynamo's or Inductor's own exception types, or a frame
    conversion had started and not finished when it was raised (Dynamo counts a
    frame ``ok`` only once its compiled code is ready).  Anything else was raised
    by code that ran.
    """
    if isinstance(exc, _compile_exception_types()):
        return COMPILE
    started = after.frames_total - before.frames_total
    finished = after.frames_ok - before.frames_ok
    return COMPILE if started > finished else RUNTIME


def run_once(fn, inputs: list, trace: dict, compiled: bool = False) -> Run:
    """Call ``fn`` on ``inputs`` (mutated in place) and record the aftermath.

    ``trace`` is the op library's record of calls and effects; it is cleared first.
    """
    trace["calls"].clear()
    trace["effects"].clear()
    run = Run()
    before = Counts.now() if compiled else None
    try:
        result = fn(*inputs)
        run.outputs = [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in result]
    except Exception as exc:  # noqa: BLE001 - any failure is an observation
        after = Counts.now() if compiled else None
        stage = stage_of(exc, before, after) if compiled else RUNTIME
        run.failure = Failure(type(exc).__name__, str(exc), stage,
                              "".join(traceback.format_exception(exc))[-4000:])
    if compiled:
        run.coverage = Coverage.between(before, Counts.now(), raised=run.failure is not None)
    run.calls, run.effects = list(trace["calls"]), list(trace["effects"])
    trace["calls"].clear()
    trace["effects"].clear()
    run.inputs_after = [t.detach().clone() for t in inputs]
    return run
