"""dcefuzz finding compile-error-202939e590dc: compile-error

[compile-error] binding 0, compile: InductorError: ValueRangeError: Invalid ranges [0:-1]

Found with torch 2.13.0+cpu on cpu.
Run: python compile-error-202939e590dc.py [cpu|cuda]   (default: cpu)
Exit 1: reproduces, 0: does not, 125: cannot judge (for git bisect run).
"""

from __future__ import annotations


import sys

sys.excepthook = lambda kind, value, tb: (
    __import__("traceback").print_exception(kind, value, tb),
    print(f"cannot judge: {kind.__name__} (exit 125)", flush=True),
    __import__("os")._exit(125))


from typing import Optional

import torch

TRACE = {"calls": [], "effects": []}


def _hit(op, site, *tensors, effect=False):
    """Record that call site `site` of `op` ran; effects keep a copy of their inputs."""
    TRACE["calls"].append((op, site))
    if effect:
        TRACE["effects"].append((op, site, tuple(t.detach().to("cpu", copy=True) for t in tensors)))


def _register_ordered(opdef):
    """Mark a custom op as an ORDERED side effect on any torch from 2.11 on."""
    if hasattr(opdef, "register_effect"):
        from torch._library.effects import EffectType
        opdef.register_effect(EffectType.ORDERED)
    else:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _register_effectful_op(opdef._opoverload, _EffectType.ORDERED)


@torch.library.custom_op("dcefuzz::p_head", mutates_args=())
def p_head(x: torch.Tensor, n: int, site: int) -> torch.Tensor:
    _hit("p_head", site)
    return (x[:n] * 1.5).contiguous()


@p_head.register_fake
def _(x, n, site):
    return x.new_empty((n,) + tuple(x.shape[1:]))


def _p_head_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _p_head_backward(ctx, grad):
    x, = ctx.saved_tensors
    return torch.cat([grad * 1.5, grad.new_zeros((x.shape[0] - grad.shape[0],) + tuple(x.shape[1:]))]), None, None


p_head.register_autograd(_p_head_backward, setup_context=_p_head_setup)


import torch

#: Compiled may carry this many times eager's own error against fp64 at the same
#: element.  ``same`` uses 3.0 for tensors under 1000 elements (2.0 for larger
#: float32 ones, whose RMSE averages noise away); per element nothing is averaged,
#: so the larger factor.
ERROR_MULTIPLIER = 3.0
#: Relative slack on the element's fp64 value: ``same``'s default ``tol`` (1e-4),
#: about 800 float32 ulps, room for a different but legitimate float32 formula.
RELATIVE_SLACK = 1e-4
#: Absolute slack: ``same``'s ``tol / 10`` (1e-5), for elements at or near zero.
ABSOLUTE_SLACK = 1e-5
#: Floor proportional to the tensor's magnitude (max |fp64| over judged elements):
#: reassociating a float32 reduction moves its result by some ulps of its
#: *summands*, which for a cancelling element (result much smaller than its terms)
#: is far beyond RELATIVE_SLACK of the result; the tensor's largest value stands in
#: for the summands' scale.  64 * float32 eps (~7.6e-6) is the worst-case bound for
#: reordering a sum of ~64 such terms and the typical (random-walk, ~sqrt(n) ulps)
#: error for thousands, yet stays ~1300x below a 1% error at the tensor's scale.
SCALE_SLACK = 64 * torch.finfo(torch.float32).eps
#: ``torch.testing.assert_close``'s float32 default rtol: compiled this close to
#: eager at an element (about 10 ulps) is acceptable whatever the reference says.
RTOL_CLOSE = 1.3e-6
#: ``torch.testing.assert_close``'s float32 default atol, the same test's floor near 0.
ATOL_CLOSE = 1e-5


#: The float16 and bfloat16 counterparts of (RTOL_CLOSE, ATOL_CLOSE, RELATIVE_SLACK,
#: SCALE_SLACK): ``assert_close``'s defaults for the dtype (about two ulps), two ulps
#: of slack on the fp64 value, and 4 ulps of the tensor's magnitude for a cancelling
#: element (a compiled kernel keeps float32 between ops where eager rounds after each
#: one, so compiled is mostly nearer the reference than eager, and rule (b) holds).
LOW_PRECISION = {
    torch.float16: (1e-3, 1e-5, 2 * torch.finfo(torch.float16).eps, 4 * torch.finfo(torch.float16).eps),
    torch.bfloat16: (1.6e-2, 1e-5, 2 * torch.finfo(torch.bfloat16).eps, 4 * torch.finfo(torch.bfloat16).eps),
}


def tensor_difference(ref64, eager, compiled,
                      multiplier=ERROR_MULTIPLIER, rel=RELATIVE_SLACK, abs_=ABSOLUTE_SLACK,
                      scale_slack=SCALE_SLACK, rtol_close=RTOL_CLOSE, atol_close=ATOL_CLOSE):
    """None when ``compiled`` is acceptable, else a one-line reason.

    Element k (finite in ref, eager and compiled) is acceptable when
    ``|c-e| <= atol_close + rtol_close*|e|`` or
    ``|c-r| <= multiplier*|e-r| + rel*|r| + scale_slack*max|r| + abs_``.
    """
    if tuple(compiled.shape) != tuple(eager.shape):
        return f"shape {tuple(compiled.shape)} != eager {tuple(eager.shape)}"
    if compiled.dtype != eager.dtype:
        return f"dtype {compiled.dtype} != eager {eager.dtype}"
    if eager.numel() == 0:
        return None
    if eager.dtype in LOW_PRECISION:
        rtol_close, atol_close, rel, scale_slack = LOW_PRECISION[eager.dtype]
    r = ref64.detach().to("cpu", torch.float64).flatten()
    e = eager.detach().to("cpu", torch.float64).flatten()
    c = compiled.detach().to("cpu", torch.float64).flatten()
    fe, fc, fr = torch.isfinite(e), torch.isfinite(c), torch.isfinite(r)
    same_nonfinite = (torch.isnan(e) & torch.isnan(c)) | (~fe & ~fc & (e == c))
    odd = (fe != fc) | (~fe & ~same_nonfinite)
    # only where eager itself matches the fp64 reference's finiteness is eager trusted
    trusted = odd & (fe == fr)
    if bool(trusted.any()):
        i = int(trusted.nonzero()[0])
        return (f"non-finite mismatch at flat index {i}: compiled {c[i].item()} "
                f"vs eager {e[i].item()}")
    both = fe & fc & fr
    if not bool(both.any()):
        return None
    idx = both.nonzero().flatten()
    r, e, c = r[idx], e[idx], c[idx]
    close = (c - e).abs() <= atol_close + rtol_close * e.abs()
    err = (c - r).abs()
    allowed = (multiplier * (e - r).abs() + rel * r.abs()
               + scale_slack * r.abs().max() + abs_)
    bad = ~close & (err > allowed)
    if not bool(bad.any()):
        return None
    n = int(bad.sum())
    worst = int(torch.where(bad, err / allowed, torch.zeros_like(err)).argmax())
    i = int(idx[worst])
    return (f"values differ at {n} of {int(both.sum())} elements; worst at flat index {i}: "
            f"compiled {c[worst].item():.9g} eager {e[worst].item():.9g} "
            f"fp64 {r[worst].item():.9g} (error {err[worst].item():.3g}, "
            f"allowed {allowed[worst].item():.3g})")


def bitwise_equal(a, b):
    """Exact equality, NaN equal to NaN: how eager is checked against itself."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a, b) or torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))


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


import re
from collections.abc import Callable
from dataclasses import dataclass, field


WRONG_OUTPUT = "wrong-output"
WRONG_MUTATION = "wrong-mutation"
EFFECT_LOG = "effect-log"
COMPILE_ERROR = "compile-error"
RUNTIME_ERROR = "runtime-error"
MISSED_DCE = "missed-dce"
CRASH = "crash"
TIMEOUT = "timeout"

STALE_CACHE = "stale-cache"

CORRECTNESS_KINDS = (COMPILE_ERROR, RUNTIME_ERROR, EFFECT_LOG, WRONG_MUTATION, WRONG_OUTPUT)
PERFORMANCE_KINDS = (MISSED_DCE,)
#: judged on a cache pair only, never on a single compile
CACHE_KINDS = (STALE_CACHE,)
KINDS = CORRECTNESS_KINDS + PERFORMANCE_KINDS + CACHE_KINDS
#: Deaths of the compiling process: no verdict of this module can report them.
PROCESS_KINDS = (CRASH, TIMEOUT)
ERROR_KINDS = (COMPILE_ERROR, RUNTIME_ERROR) + PROCESS_KINDS

OK = "ok"
INVALID = "invalid"
NONDETERMINISTIC = "nondeterministic"

#: how an effect log can change (its symptoms; "data": an event saw other data)
MISSING, EXTRA, DUPLICATED, REORDERED, DATA = "missing", "extra", "duplicated", "reordered", "data"
#: what about a value can differ
COUNT, SHAPE, DTYPE, NON_FINITE, VALUES = "count", "shape", "dtype", "non-finite", "values"

_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")
#: an object's address in a repr ("object at 0x7f3a..."): another in every process
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NAMES = re.compile(r"\b([svux]|buf|op|arg|primals_|tangents_)\d+\b")
#: a size symbol is a size like any number: a stride ``s33`` where another compile
#: has ``1`` is the same message
_SIZE_SYMBOL = re.compile(r"\b[su]#")
#: what a FakeTensor's repr adds that says nothing of the bug: the program's dtype,
#: whether it takes gradients
_TENSOR_ATTRS = re.compile(r",\s*(dtype=torch\.\w+|grad_fn=<\w+>|requires_grad=True)")
#: which of our custom ops an error names is the program's business, not the bug's:
#: the shrinker may swap an op for a simpler one of the same kind
_OUR_OPS = re.compile(r"\b(?:torch\.ops\.)?dcefuzz\.\w+(?:\.default)?")


def normalise_message(line: str) -> str:
    """An error or death message with numbers, value names and our op names removed."""
    line = _OUR_OPS.sub("dcefuzz.<op>", line)
    line = _TENSOR_ATTRS.sub("", line)
    line = _ADDRESS.sub("0x#", line)
    line = _NAMES.sub(lambda m: m.group(1) + "#", line)
    line = _SIZE_SYMBOL.sub("#", line)
    line = _NUMBER.sub("#", line)
    return re.sub(r"\s+", " ", line).strip()[:200]


@dataclass(frozen=True)
class Divergence:
    """One broken clause on one binding.

    ``symptoms`` say how it broke, in the words the bug class is made of; an error
    or a death has none: its normalised message is its symptom.
    """

    kind: str
    binding: int
    where: str
    detail: str
    symptoms: tuple[str, ...] = ()

    def line(self) -> str:
        return f"[{self.kind}] binding {self.binding}, {self.where}: {self.detail}"


def bug_class(kind: str, divs: list[Divergence]) -> str:
    """The kind plus the symptoms of its divergences: what a replay must see again."""
    if not divs:
        return ""
    if kind in ERROR_KINDS:
        return f"{kind}|{normalise_message(divs[0].detail)}"
    words = sorted({w for d in divs for w in d.symptoms})
    return kind + (f"|{','.join(words)}" if words else "")


@dataclass
class Verdict:
    status: str
    divergences: list[Divergence] = field(default_factory=list)
    reason: str = ""
    #: (reason, message) of each way a compiled run was not wholly compiled
    untested: list[tuple[str, str]] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Divergence]:
        return [d for d in self.divergences if d.kind == kind]

    def kinds(self) -> list[str]:
        present = {d.kind for d in self.divergences}
        return [k for k in KINDS if k in present]


@dataclass
class BindingRuns:
    """The runs of one binding.

    ``eager_again`` (the determinism check) and ``reference`` (float64) are only
    needed to judge a compiled run that differs from eager at all, so they are made
    on demand by :meth:`complete`: a compiled run bit-identical to eager (most of
    them) costs one eager run, not three.
    """

    binding: dict
    eager: Run
    eager_again: Run | None = None
    reference: Run | None = None
    compiled: Run | None = None
    _complete: Callable[[], tuple[Run, Run]] | None = field(default=None, repr=False)

    def complete(self) -> None:
        if self.eager_again is None or self.reference is None:
            self.eager_again, self.reference = self._complete()


# ------------------------------------------------------------------ clauses

def _value(r, e, c) -> tuple[str, str] | None:
    """(symptom, reason) when compiled value ``c`` breaks the numeric rule."""
    if tuple(c.shape) != tuple(e.shape):
        return SHAPE, f"shape {tuple(c.shape)} != eager {tuple(e.shape)}"
    if c.dtype != e.dtype:
        return DTYPE, f"dtype {c.dtype} != eager {e.dtype}"
    why = tensor_difference(r, e, c)
    if why is None:
        return None
    return (NON_FINITE if why.startswith("non-finite") else VALUES), why


#: exception types by which Dynamo itself declines what a program asked for; raised
#: from a backend they arrive wrapped (InductorError, BackendCompilerFailed) instead
REFUSAL_TYPES = ("ConstraintViolationError", "UserError", "GuardOnDataDependentSymNode")


def refusal(compiled: Run) -> str | None:
    """The message, when the compiled run failed because the compiler declined the
    program's marks or sizes from data (never a finding), else None."""
    f = compiled.failure
    if f is None or f.stage != COMPILE or f.type not in REFUSAL_TYPES:
        return None
    return f.line()


def check_outcome(i: int, eager: Run, compiled: Run) -> list[Divergence]:
    """Clause 4: eager returned, so compiled must return too."""
    if compiled.failure is None:
        return []
    f = compiled.failure
    kind = COMPILE_ERROR if f.stage == COMPILE else RUNTIME_ERROR
    return [Divergence(kind, i, f.stage, f.line())]


def check_outputs(i: int, eager: Run, ref: Run, compiled: Run) -> list[Divergence]:
    """Clause 1: returned values."""
    if len(compiled.outputs) != len(eager.outputs):
        return [Divergence(WRONG_OUTPUT, i, "outputs",
                           f"{len(compiled.outputs)} values returned, eager returned {len(eager.outputs)}",
                           (COUNT,))]
    out = []
    for k, (r, e, c) in enumerate(zip(ref.outputs, eager.outputs, compiled.outputs)):
        bad = _value(r, e, c)
        if bad:
            out.append(Divergence(WRONG_OUTPUT, i, f"output {k}", bad[1], (bad[0],)))
    return out


def check_inputs(i: int, names, eager: Run, ref: Run, compiled: Run) -> list[Divergence]:
    """Clause 2: final contents of every program input."""
    out = []
    for name, r, e, c in zip(names, ref.inputs_after, eager.inputs_after, compiled.inputs_after):
        bad = _value(r, e, c)
        if bad:
            out.append(Divergence(WRONG_MUTATION, i, f"input {name}", bad[1], (bad[0],)))
    return out


def event_text(op: str, site) -> str:
    """``op@site``, or the bare op for a user's op, whose calls carry no site."""
    return op if site is None else f"{op}@{site}"


def _seq(events) -> str:
    return "[" + ", ".join(event_text(op, site) for op, site in events) + "]"


def sequence_change(expected: list, got: list) -> tuple[tuple[str, ...], str]:
    """How the effect sequence ``got`` departs from ``expected``: symptoms and words."""
    # counted, not just looked up: an identical call repeats its (op, site), and two
    # of them merged into one is an event missing
    missing = list(dict.fromkeys(ev for ev in expected if got.count(ev) < expected.count(ev)))
    extra = [ev for ev in got if ev not in expected]
    dup = sorted({ev for ev in got if got.count(ev) > expected.count(ev) and ev in expected})
    parts = []
    for word, events in ((MISSING, missing), (EXTRA, extra), (DUPLICATED, dup)):
        if events:
            parts.append((word, word + " " + ", ".join(event_text(op, site) for op, site in events)))
    if not parts:
        parts.append((REORDERED, REORDERED))
    text = "; ".join(p for _, p in parts) + f" (eager {_seq(expected)}, compiled {_seq(got)})"
    return tuple(w for w, _ in parts), text


def check_effects(i: int, eager: Run, ref: Run, compiled: Run) -> list[Divergence]:
    """Clause 3: the ORDERED effect log, event by event."""
    expected = [(op, site) for op, site, _ in eager.effects]
    got = [(op, site) for op, site, _ in compiled.effects]
    if expected != got:
        symptoms, text = sequence_change(expected, got)
        return [Divergence(EFFECT_LOG, i, "sequence", text, symptoms)]
    out = []
    for n, (r, e, c) in enumerate(zip(ref.effects, eager.effects, compiled.effects)):
        for k, (rt, et, ct) in enumerate(zip(r[2], e[2], c[2])):
            bad = _value(rt, et, ct)
            if bad:
                out.append(Divergence(EFFECT_LOG, i, f"event {n} ({event_text(e[0], e[1])}) input {k}",
                                      f"saw different data: {bad[1]}", (DATA,)))
    return out


def check_dead_calls(i: int, dead_sites, compiled: Run) -> list[Divergence]:
    """Performance: dead pure call sites the compiled code still ran."""
    ran = sorted({site for op, site in compiled.calls if site in dead_sites})
    if not ran:
        return []
    names = {site: op for op, site in compiled.calls}
    return [Divergence(MISSED_DCE, i, "calls",
                       "dead pure call sites executed: " + ", ".join(f"{names[s]}@{s}" for s in ran))]


def _message_symptom(detail: str) -> str:
    """An error's message as one symptom word: normalised, its first clause only (an
    assertion on sizes repeats itself once per dim), and no commas (they part words)."""
    return normalise_message(detail).split(";")[0].replace(",", "")


def check_stale(warm: Verdict, cold: Verdict, label: str) -> list[Divergence]:
    """Stale cache: the warm compile's correctness divergences of a kind whose bug
    class the cold compile of the same declaration does not show."""
    out = []
    for kind in CORRECTNESS_KINDS:
        seen = warm.of_kind(kind)
        if not seen or bug_class(kind, seen) == bug_class(kind, cold.of_kind(kind)):
            continue
        for d in seen:
            symptoms = d.symptoms or (_message_symptom(d.detail),)
            out.append(Divergence(STALE_CACHE, d.binding, d.where, f"{label}: [{kind}] {d.detail}",
                                  (label, kind) + tuple(symptoms)))
    return out


# ------------------------------------------------------------------ verdict

def _tensor_pairs(a: Run, b: Run) -> list:
    pairs = list(zip(a.outputs, b.outputs)) + list(zip(a.inputs_after, b.inputs_after))
    return pairs + [(x, y) for ea, eb in zip(a.effects, b.effects) for x, y in zip(ea[2], eb[2])]


def _same_record(a: Run, b: Run) -> bool:
    """Bit-identical records (NaN equal NaN): nothing any clause could flag."""
    if b.failure is not None or len(a.outputs) != len(b.outputs):
        return False
    if [(o, s) for o, s, _ in a.effects] != [(o, s) for o, s, _ in b.effects]:
        return False
    return all(bitwise_equal(x, y) for x, y in _tensor_pairs(a, b))


def judge_runs(input_names, dead_sites, runs: list[BindingRuns]) -> Verdict:
    """Apply every clause to every binding's runs.

    A compiled run bit-identical to eager breaks no clause, so only the call trace
    (missed-dce) is looked at; any other run first gets its determinism check and
    float64 reference (``BindingRuns.complete``).
    """
    for i, br in enumerate(runs):
        if br.eager.failure is not None:
            return Verdict(INVALID, reason=f"eager raised on binding {i}: {br.eager.failure.line()}")
    divergences: list[Divergence] = []
    untested: list[tuple[str, str]] = []
    crossed = False  # a requested graph break was met
    for i, br in enumerate(runs):
        c = br.compiled
        if c is None:
            continue
        if c.coverage is not None:
            untested += [gap for gap in c.coverage.gaps if gap not in untested and gap[0] != REQUESTED_BREAK]
            crossed = crossed or any(gap[0] == REQUESTED_BREAK for gap in c.coverage.gaps)
        declined = refusal(c)
        if declined is not None:
            untested.append((REFUSED, declined))
            continue
        if not _same_record(br.eager, c):
            br.complete()
            for run in (br.eager_again, br.reference):
                if run.failure is not None:
                    return Verdict(INVALID, reason=f"eager raised on binding {i}: {run.failure.line()}")
            if not _same_record(br.eager, br.eager_again):
                return Verdict(NONDETERMINISTIC, reason=f"eager disagrees with itself on binding {i}")
            failed = check_outcome(i, br.eager, c)
            divergences += failed
            if failed:
                continue
            divergences += check_outputs(i, br.eager, br.reference, c)
            divergences += check_inputs(i, input_names, br.eager, br.reference, c)
            divergences += check_effects(i, br.eager, br.reference, c)
        if not untested and not crossed:
            divergences += check_dead_calls(i, dead_sites, c)
    compiled = [br.compiled for br in runs if br.compiled is not None]
    if (compiled and all(c.coverage is not None and c.failure is None for c in compiled)
            and sum(c.coverage.graphs for c in compiled) == 0):
        untested.append((NO_GRAPH, "Dynamo compiled no graph: the program ran eagerly"))
        divergences = [d for d in divergences if d.kind != MISSED_DCE]
    return Verdict(OK, divergences, untested=untested)


import os
import subprocess
import sys
import tempfile
import time

import torch


REPRODUCES_EXIT = 1
FIXED_EXIT = 0
CANNOT_JUDGE_EXIT = 125
#: how often the parent of a crash/timeout repro looks at its child
POLL_S = 0.25
#: the environment variable naming the file a crash/timeout child creates once its
#: eager runs are done (a death before that says nothing about the compiler)
EAGER_DONE_ENV = "DCEFUZZ_EAGER_DONE"


def make_inputs(spec: dict, i: int, device: str, reference: bool = False) -> list:
    """Inputs for binding i (float64 for the reference), drawn exactly as dcefuzz draws them."""
    binding = spec["bindings"][i]
    sizes = [[_size(d, binding) for d in dims] for dims in spec["input_dims"]]
    return draw_inputs(sizes, spec["input_seed"] + i, device, getattr(torch, spec.get("dtype", "float32")),
                       spec.get("strided", ()), reference, [tuple(a) for a in spec.get("aliases", ())])


def _size(expr: str, binding: dict) -> int:
    """A dim such as ``s0``, ``s0 // 2`` or ``(s0 // 2) - 1`` for one binding (the
    expressions are dcefuzz's own, checked when the entry was read)."""
    return int(eval(expr, {"__builtins__": {}}, dict(binding)))  # noqa: S307


def _through(step, fn):
    """``fn`` as a run calls it: through the program's ``step`` (its mode) when it has one."""
    return fn if step is None else (lambda *inputs: step(fn, *inputs))


def judge(spec: dict, program, trace: dict, device: str, step=None):
    """Run eager and compiled over the recorded bindings, with the on-disk compile
    caches off (no artifact of an earlier run may serve this one); the verdict."""
    runs = []
    eager_fn = _through(step, program)
    for i in range(len(spec["bindings"])):
        def complete(i=i):
            return (run_once(eager_fn, make_inputs(spec, i, device), trace),
                    run_once(eager_fn, make_inputs(spec, i, device, reference=True), trace))
        eager = run_once(eager_fn, make_inputs(spec, i, device), trace)
        runs.append(BindingRuns(binding=dict(spec["bindings"][i]), eager=eager, _complete=complete))
    done = os.environ.get(EAGER_DONE_ENV)
    if done and not any(br.eager.failure for br in runs):
        open(done, "w").close()
    compiled = _through(step, torch.compile(program, dynamic=spec.get("dynamic", True),
                                            backend=spec["backend"]))
    if not any(br.eager.failure for br in runs):
        for i, br in enumerate(runs):
            with caches_off():
                br.compiled = run_once(compiled, make_inputs(spec, i, device), trace, compiled=True)
    return judge_runs(spec["input_names"], set(spec["dead_pure_sites"]), runs)


def _device(spec: dict, argv: list) -> str | None:
    device = argv[0] if argv else spec["device"]
    if device.startswith("cuda") and not torch.cuda.is_available():
        print(f"device {device} is not available here")
        return None
    return device


def main(spec: dict, program, trace: dict, argv: list | None = None, step=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    child = "--child" in argv
    argv = [a for a in argv if a != "--child"]
    if spec["kind"] in ("crash", "timeout") and not child:
        return run_isolated(spec, argv)
    if child:
        import faulthandler  # where it dies or hangs: the Python stack, on stderr

        faulthandler.enable(all_threads=True)
        faulthandler.dump_traceback_later(spec["time_limit_s"] - 1)
    device = _device(spec, argv)
    if device is None:
        return CANNOT_JUDGE_EXIT
    print(f"torch {torch.__version__}, device {device}, looking for: {spec['bug_class']}", flush=True)
    verdict = judge(spec, program, trace, device, step)
    if child:
        return FIXED_EXIT
    return conclude(spec, verdict)


def conclude(spec: dict, verdict) -> int:
    """Print a verdict and say, as an exit status, whether it shows ``spec``'s bug."""
    if verdict.status != OK:
        print(f"cannot judge: {verdict.status}: {verdict.reason}")
        return CANNOT_JUDGE_EXIT
    for d in verdict.divergences:
        print(d.line())
    for reason, message in verdict.untested:
        print(f"not wholly compiled ({reason}): {message.splitlines()[0] if message else ''}")
    seen = bug_class(spec["kind"], verdict.of_kind(spec["kind"]))
    if seen == spec["bug_class"]:
        print("REPRODUCES")
        return REPRODUCES_EXIT
    if seen:
        # the kind still diverges, another way (often the same failure, worded anew by a
        # later torch): neither this bug nor fixed
        print(f"cannot judge: another bug of this kind ({seen})")
        return CANNOT_JUDGE_EXIT
    print(f"does not reproduce (saw no {spec['kind']})")
    return FIXED_EXIT


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_isolated(spec: dict, argv: list) -> int:
    """Crash and timeout findings: run this script again in a child, judge how it ends.

    Only the recorded death reproduces: the same signal, the memory cap, or a hang,
    and only once the child's eager runs are done.
    """
    death = spec["death"]
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "eager-done")
        env = dict(os.environ, **{EAGER_DONE_ENV: marker})
        child = subprocess.Popen([sys.executable, sys.argv[0], *argv, "--child"], env=env)
        deadline = time.monotonic() + spec["time_limit_s"]
        how = None
        while child.poll() is None:
            if time.monotonic() > deadline:
                how = "timeout"
            elif spec.get("memory_cap_mb") and _rss_mb(child.pid) > spec["memory_cap_mb"]:
                how = "memory"
            if how:
                child.kill()
                child.wait()
                break
            time.sleep(POLL_S)
        eager_done = os.path.exists(marker)
    code = child.returncode
    if how is None and code == CANNOT_JUDGE_EXIT:
        return CANNOT_JUDGE_EXIT
    if how is None and code < 0:
        import signal
        how = signal.Signals(-code).name
    elif how is None and code != FIXED_EXIT:
        how = f"exit code {code}"
    if not eager_done and how is not None:
        print(f"the child died ({how}) before its eager runs were done: cannot judge")
        return CANNOT_JUDGE_EXIT
    if how == death:
        print(f"REPRODUCES: {how}")
        return REPRODUCES_EXIT
    print(f"does not reproduce: looking for {death}, the child ended with "
          f"{how or f'exit status {code}'}")
    return FIXED_EXIT


def program(x0):
    s0 = x0.shape[0]
    v0 = torch.ops.dcefuzz.p_head(x0, (s0 // 2), 0)
    v1 = v0[: (s0 // 2) // 2]
    v2 = v1.sum(0)
    return (v2,)


SPEC = {'id': 'compile-error-202939e590dc',
 'kind': 'compile-error',
 'bug_class': 'compile-error|InductorError: ValueRangeError: Invalid ranges [#:-#]',
 'device': 'cpu',
 'backend': 'inductor',
 'bindings': [{'s0': 2}],
 'input_seed': 1359181739492069515,
 'input_names': ['x0'],
 'input_dims': [['s0']],
 'dynamic': True,
 'dtype': 'float32',
 'strided': [],
 'aliases': [],
 'dead_pure_sites': [],
 'death': None,
 'memory_cap_mb': 6144,
 'time_limit_s': 300}


if __name__ == "__main__":
    sys.exit(main(SPEC, program, TRACE))
