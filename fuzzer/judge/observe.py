"""What one run of a program observes, recorded the same way in the package and in
every repro script (``fuzzer.render.repro`` pastes this module's text into each, after
the judge's modules it imports), so a repro records a run as the fuzzer did.

A run records its returned values (a tensor subclass by its parts: ``wrapped``; one that
is not a real tensor as it is: ``artifacts``), the final contents of every input, the
effect log (an :class:`Event` a call), the custom ops' call trace (the ``trace`` dict
the op library fills), and how it failed, if it did.  A binding's runs are one
:class:`BindingRuns`: eager, compiled and, where the contract asks for them
(``contract.needs_checks``), its :class:`Checks`.  A compiled run also records its
*coverage*: how much of it ran as compiled code.  ``torch.compile`` without ``fullgraph``
runs whatever Dynamo cannot trace eagerly (a graph break, a skipped frame, the eager
fallback after the recompile limit), and eager code cannot show a compiler bug: a run
that was not wholly compiled cannot be called clean.  Coverage is read from Dynamo's own
counters, before and after the run.
"""

from __future__ import annotations

import contextlib
import importlib
import traceback
from dataclasses import dataclass, field

import torch

from fuzzer.judge.graphs import GRAPHS
from fuzzer.judge.paths import modes
from fuzzer.judge.guarded import guarded_on
from fuzzer.judge.raised import BackwardNodes, raised_at
from fuzzer.judge.wrapped import recorded

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
#: a region (``nested_compile_region``) or ``torch.cond`` the program asked for is not
#: in the graphs Dynamo handed its backend: inlined, the higher-order op never compiled
HOP_INLINED = "hop-inlined"
#: the float64 reference took another path than eager (a size from data, a branch):
#: it vouches for nothing on that binding, and what it cannot vouch for is unjudged
REFERENCE_DIVERGED = "reference-diverged"
#: the program asks a higher-order op for what torch documents unsupported: unjudged
HOP_LIMIT = "hop-limit"
#: a size marked unbacked is 0 or 1 in a binding, which ``mark_unbacked`` documents the
#: compiled code reports it never is (``contract.unbacked_edge``): that binding is not judged
UNBACKED_EDGE = "unbacked-edge"
#: a low-precision value only a rounding Inductor elides changes (PRECISION ELISION)
PRECISION_ELIDED = "precision-elided"
UNTESTED_REASONS = (GRAPH_BREAK, SKIPPED_FRAME, RECOMPILE_LIMIT, NO_GRAPH, REFUSED, HOP_INLINED,
                    REFERENCE_DIVERGED, HOP_LIMIT, UNBACKED_EDGE, PRECISION_ELIDED)


@dataclass(frozen=True)
class Gap:
    """One way a compiled run was not wholly compiled, or a binding not judged
    (``contract.Verdict.untested``): its reason (:data:`UNTESTED_REASONS`, or a trial
    kind's own), what torch or the contract said, and ``cause``: what a campaign counts
    it by within its reason (the type of the failure a refusal declined, the limit a
    form goes beyond; empty where the reason says all), set where the gap is made,
    never read back from its message."""

    reason: str
    message: str = ""
    cause: str = ""

    def to_json(self) -> dict:
        return {"reason": self.reason, "cause": self.cause, "message": self.message[:300]}

    @classmethod
    def from_json(cls, data: dict) -> Gap:
        return cls(data["reason"], data.get("message", ""), data.get("cause", ""))

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


#: the values an integer input is drawn from, by dtype: a byte's whole range (a
#: quantiser's codes), and small numbers for wider integers (counts, sums of codes)
INTEGER_RANGES = {"bool": (0, 2), "uint8": (0, 256), "int8": (-128, 128)}
WIDE_INTEGER_RANGE = (-64, 64)


def fixed_tensor(size, dtype: str, g) -> torch.Tensor:
    """A CPU tensor of a fixed dtype (an integer, bool or float8 one) drawn from
    generator ``g``: integers uniform in their range, float8 the standard normal's
    values rounded."""
    kind = getattr(torch, dtype)
    if kind.is_floating_point:
        return torch.randn(size, generator=g, dtype=torch.float32).to(kind)
    low, high = INTEGER_RANGES.get(dtype, WIDE_INTEGER_RANGE)
    return torch.randint(low, high, tuple(size), generator=g, dtype=torch.int64).to(kind)


#: how an input of each layout (``fuzzer.program.layouts``) is made from its contiguous draw
LAYOUT_MAKERS = {
    "transposed": lambda x: x.mT.contiguous().mT,
    "channels_last": lambda x: x.movedim(1, -1).contiguous().movedim(-1, 1),
    "expanded": lambda x: x[:1].expand(x.shape),
}


@dataclass(frozen=True)
class Handover:
    """How a run's inputs are handed over beyond their draw, each named by its index."""

    #: the inputs handed over with their last dim strided by 2 (the same values, not contiguous)
    strided: tuple = ()
    #: ``(k, j)``: input k is a view of the whole of input j (its own draw is discarded)
    aliases: tuple = ()
    #: ``(k, name)``: input k has that fixed dtype (``fixed_tensor``), in the reference too: not the program's
    fixed: tuple = ()
    #: ``(k, layout)``: input k is laid out so (``LAYOUT_MAKERS``)
    layouts: tuple = ()
    #: ``(k, j, dim, start, size)``: input k is ``input_j.narrow(dim, start, size)`` (its own draw is discarded)
    windows: tuple = ()


def draw_inputs(shapes, seed: int, device: str, dtype=torch.float32, handover: Handover = Handover(),
                reference=False) -> list:
    """The inputs of one run: standard normal from ``seed``, drawn on the CPU in float32
    whatever the device, so every device and dtype start from the same numbers; cast
    to the program's ``dtype``, and for the float64 reference up from those values;
    handed over as ``handover`` says."""
    g = torch.Generator().manual_seed(seed)
    own = dict(handover.fixed)
    out = []
    for k, size in enumerate(shapes):
        if k in own:
            out.append(fixed_tensor(size, own[k], g).to(device))
            continue
        x = torch.randn(size, generator=g, dtype=torch.float32).to(dtype)
        x = x.to(device=device, dtype=torch.float64 if reference else dtype)
        if k in handover.strided:
            wide = x.new_zeros(tuple(size[:-1]) + (2 * size[-1],))
            x = wide[..., ::2].copy_(x)
        out.append(x)
    for k, layout in handover.layouts:
        out[k] = LAYOUT_MAKERS[layout](out[k])
    for k, j in handover.aliases:
        out[k] = out[j].view(out[j].shape)
    for k, j, dim, start, size in handover.windows:
        out[k] = out[j].narrow(dim, start, size)
    return out


@dataclass(frozen=True)
class Failure:
    """An exception raised by a run, with the stage it was raised in and where
    (``raised_at``)."""

    type: str
    message: str
    stage: str
    traceback: str = ""
    #: where it was raised, and the message that goes with that (``raised_at``)
    site: str = ""
    site_message: str = ""
    #: what a guard on a data-dependent size asked the value of (``guarded_on``): "" for
    #: any other failure
    guarded: str = ""

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
    #: resume functions Dynamo made: each is a graph break, whether or not Dynamo counted
    #: it in ``graph_break`` (2.13 does not count the one a data-dependent ``setitem``
    #: takes, ``v[v < 0] = c`` on a 0-d tensor, yet runs the rest of the frame eagerly)
    resumes: int = 0

    @classmethod
    def now(cls) -> Counts:
        try:
            from torch._dynamo.utils import counters
        except ImportError:  # a torch without dynamo's counters: nothing is known
            return cls()
        return cls(int(counters["frames"]["total"]), int(counters["frames"]["ok"]),
                   int(counters["stats"]["unique_graphs"]),
                   tuple(sorted(counters["graph_break"].items())),
                   tuple(sorted(counters["unimplemented"].items())),
                   sum(counters["resumes"].values()))


def _grown(before: tuple, after: tuple) -> list[str]:
    old = dict(before)
    return [msg for msg, n in after if n > old.get(msg, 0)]


@dataclass(frozen=True)
class Coverage:
    """What Dynamo did during one compiled run."""

    frames: int = 0
    graphs: int = 0
    #: a :class:`Gap` (reason, Dynamo's message) for each way part of the run was not compiled
    gaps: tuple = ()
    #: the higher-order ops (``cond``, ``invoke_subgraph``) in the graphs Dynamo
    #: handed its backend during the run (None: this torch cannot say)
    hops: tuple | None = None
    #: the custom-op call sites a runtime assert of those graphs reads (:class:`Graph`)
    asserted: tuple = ()

    @classmethod
    def between(cls, before: Counts, after: Counts, raised: bool, graphs_before: int = 0) -> Coverage:
        gaps = [Gap(REQUESTED_BREAK if m.startswith(REQUESTED_BREAK_MESSAGE) else GRAPH_BREAK, m)
                for m in _grown(before.graph_breaks, after.graph_breaks)]
        counted = sum(n - dict(before.graph_breaks).get(m, 0) for m, n in after.graph_breaks)
        uncounted = (after.resumes - before.resumes) - counted
        if uncounted > 0:
            gaps.append(Gap(GRAPH_BREAK, f"{uncounted} graph break(s) Dynamo resumed after without counting"))
        for m in _grown(before.unimplemented, after.unimplemented):
            gaps.append(Gap(RECOMPILE_LIMIT if "recompile limit" in m.lower() else SKIPPED_FRAME, m))
        failed = (after.frames_total - before.frames_total) - (after.frames_ok - before.frames_ok)
        if failed > 0 and not raised and not gaps:
            gaps.append(Gap(SKIPPED_FRAME, f"{failed} frame(s) not converted"))
        hops = None
        made = GRAPHS.graphs[graphs_before:]
        if GRAPHS.observed:
            hops = tuple(sorted({op for graph in made for op in graph.hops}))
        asserted = tuple(sorted({site for graph in made for site in graph.asserted}))
        return cls(after.frames_ok - before.frames_ok, after.graphs - before.graphs, tuple(gaps), hops, asserted)


@dataclass(frozen=True, eq=False)
class Event:
    """One call of an ORDERED effectful op, as a run's effect log holds it: the op, its
    call site (None for a user's op, which takes none) and a copy of each tensor it saw.
    (The op library's trace holds it as an ``(op, site, tensors)`` triple.)"""

    op: str
    site: int | None
    tensors: tuple = ()

    @property
    def call(self) -> tuple:
        """``(op, site)``: what the effect sequence is made of."""
        return (self.op, self.site)


@dataclass
class Run:
    """What one run of the program on one binding left behind."""

    outputs: list | None = None
    inputs_after: list = field(default_factory=list)
    #: the ORDERED effects' calls, in the order they ran (:class:`Event`)
    effects: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    failure: Failure | None = None
    #: compiled runs only: what Dynamo compiled and what it left to eager
    coverage: Coverage | None = None
    #: eager runs recorded with a path (:class:`PathRecorder`): the ops that ran, the
    #: shapes they returned and the ints and bools they decided (None: not recorded)
    path: tuple | None = None


@dataclass(frozen=True)
class Checks:
    """What judges a compiled run that differs from eager on one binding
    (:func:`reference_runs`): eager run again (is it deterministic?), the float64
    reference and, for a float16 or bfloat16 program, its noisy references."""

    eager_again: Run
    reference: Run
    noisy: tuple = ()


@dataclass
class BindingRuns:
    """The runs of one binding, as execution records them and the contract reads them.

    ``checks`` are made only for a binding whose compiled run the contract cannot
    pass by sight (``contract.needs_checks``: not bit-identical to eager), by whoever
    ran the others (``fuzzer.judge.trial``, a repro script's driver): most bindings
    cost one eager run, not three.
    """

    binding: dict
    eager: Run
    compiled: Run | None = None
    checks: Checks | None = None


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


def run_recorded(fn, make_inputs, trace: dict, noise: tuple[float, int] | None = None) -> Run:
    """An eager run with its path recorded (``Run.path``); with ``noise``, ``(unit,
    seed)``, a float64 reference whose rounding a ``NoisyReference`` makes up.

    ``make_inputs`` gives the run's inputs afresh: a run that the recording itself
    breaks (a torch whose dispatch modes cannot pass a higher-order op) is made
    again unrecorded, on new inputs; a noisy one that fails is returned failed, with
    no path, and is not used.
    """
    recorder_class, noisy_class = modes()
    recorder = recorder_class() if noise is None else noisy_class(*noise)
    run = run_once(fn, make_inputs(), trace, within=recorder)
    if run.failure is None:
        run.path = tuple(recorder.path)
        return run
    return run if noise is not None else run_once(fn, make_inputs(), trace)


#: the noisy float64 references a float16 or bfloat16 binding gets (``NoisyReference``):
#: the largest spread of three samples stands for what rounding can carry to an element
NOISY_REFERENCES = 3


def reference_runs(fn, make_inputs, trace: dict, dtype, seed: int, record: bool = True) -> Checks:
    """What judges a compiled run that differs from eager on one binding: eager again
    (is it deterministic? its path recorded), the float64 reference (its path
    recorded) and, for a float16 or bfloat16 program, its noisy references, seeded by
    ``seed``.  ``make_inputs(reference)`` gives the binding's inputs afresh (float64
    for the reference).

    ``record=False`` (a program with ``torch.cond``) runs them under no dispatch mode:
    an eager ``torch.cond`` called under one leaves Dynamo's compile of its own eager
    wrapper broken for the calls after it (torch 2.13).  Its branch then shows in the
    call sites run, and its sizes in the values' shapes (``contract.another_path``).
    """
    if not record:
        return Checks(run_once(fn, make_inputs(False), trace), run_once(fn, make_inputs(True), trace))
    again = run_recorded(fn, lambda: make_inputs(False), trace)
    ref = run_recorded(fn, lambda: make_inputs(True), trace)
    noisy = []
    if dtype in (torch.float16, torch.bfloat16):
        unit = torch.finfo(dtype).eps / 2
        noisy = [run_recorded(fn, lambda: make_inputs(True), trace,
                              noise=(unit, (seed * NOISY_REFERENCES + k) % 2**63))
                 for k in range(NOISY_REFERENCES)]
    return Checks(again, ref, tuple(noisy))


def run_once(fn, inputs: list, trace: dict, compiled: bool = False,
             within: contextlib.AbstractContextManager | None = None) -> Run:
    """Call ``fn`` on ``inputs`` (mutated in place) and record the aftermath.

    ``trace`` is the op library's record of calls and effects; it is cleared first.
    ``within``: a context (a dispatch mode) the call alone runs in.
    """
    trace["calls"].clear()
    trace["effects"].clear()
    run = Run()
    before = Counts.now() if compiled else None
    graphs = len(GRAPHS.graphs)
    if compiled:
        GRAPHS.install()
    backward = BackwardNodes() if compiled else contextlib.nullcontext(BackwardNodes())
    try:
        with within if within is not None else contextlib.nullcontext(), backward as failed:
            result = fn(*inputs)
        run.outputs = [recorded(value) for value in result]
    except Exception as exc:  # noqa: BLE001 - any failure is an observation
        after = Counts.now() if compiled else None
        stage = stage_of(exc, before, after) if compiled else RUNTIME
        run.failure = Failure(type(exc).__name__, str(exc), stage,
                              "".join(traceback.format_exception(exc))[-4000:], *raised_at(exc, failed.nodes),
                              guarded=guarded_on(exc))
    if compiled:
        run.coverage = Coverage.between(before, Counts.now(), raised=run.failure is not None,
                                        graphs_before=graphs)
    run.calls = list(trace["calls"])
    run.effects = [Event(op, site, tensors) for op, site, tensors in trace["effects"]]
    trace["calls"].clear()
    trace["effects"].clear()
    run.inputs_after = [recorded(t) for t in inputs]
    return run
