"""Run a case eagerly and through ``torch.compile(dynamic=True)``, recording everything.

For each binding the executor makes fresh inputs from the case's seed and runs:
eager float32, the compiled function, and, when the oracle needs them, eager
float32 again (to prove eager is deterministic) and eager float64 (the numeric
reference).  Every run records
its returned values, the final contents of every input, the effect log and the
call trace.  All bindings go through *one* compiled function, in order, the way a
user's model meets new shapes.

Nothing here judges; ``oracle`` does.
"""

from __future__ import annotations

import functools
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from fuzzer import codegen, oplib, shapes
from fuzzer.program import Case

COMPILE = "compile"
RUNTIME = "runtime"


@dataclass
class Failure:
    """An exception raised by a run, with the stage it was raised in."""

    type: str
    message: str
    stage: str
    traceback: str = ""

    def line(self) -> str:
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.type}: {first}"[:500]


@dataclass
class Run:
    """What one run of the program on one binding left behind."""

    outputs: list | None = None
    inputs_after: list = field(default_factory=list)
    effects: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    failure: Failure | None = None


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


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def make_inputs(case: Case, index: int, device: str, dtype=torch.float32) -> list[torch.Tensor]:
    """Inputs for binding ``index``: standard normal, seeded per (case, binding).

    Drawn on the CPU in float32 whatever the device, so every device and the fp64
    reference start from the same numbers (a repro script draws them the same way).
    """
    binding = case.bindings[index]
    gen = torch.Generator().manual_seed(case.input_seed + index)
    out = []
    for inp in case.program.inputs:
        size = shapes.concrete(inp.dims, binding)
        out.append(torch.randn(size, generator=gen, dtype=torch.float32).to(device=device, dtype=dtype))
    return out


def _stage_of(exc: BaseException) -> str:
    """Whether an exception came from compiling (dynamo/AOT/inductor) or running."""
    try:
        from torch._dynamo.exc import (
            BackendCompilerFailed,
            TorchRuntimeError,
            Unsupported,
        )
        compile_types: tuple = (BackendCompilerFailed, TorchRuntimeError, Unsupported)
    except ImportError:  # pragma: no cover - very old torch
        compile_types = ()
    try:
        from torch._inductor.exc import InductorError
        compile_types += (InductorError,)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(exc, compile_types):
        return COMPILE
    frames = traceback.extract_tb(exc.__traceback__)
    if any("convert_frame.py" in f.filename or "compile_fx.py" in f.filename for f in frames):
        return COMPILE
    return RUNTIME


def run_once(fn, inputs: list[torch.Tensor]) -> Run:
    """Call ``fn`` on ``inputs`` (mutated in place) and record the aftermath."""
    oplib.reset_trace()
    run = Run()
    try:
        result = fn(*inputs)
        run.outputs = [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in result]
    except Exception as exc:  # noqa: BLE001 - any failure is an observation
        run.failure = Failure(type(exc).__name__, str(exc), _stage_of(exc),
                              "".join(traceback.format_exception(exc))[-4000:])
    run.calls, run.effects = oplib.take_trace()
    run.inputs_after = [t.detach().clone() for t in inputs]
    return run


def run_eager(case: Case, device: str) -> list[BindingRuns]:
    """Eager float32 runs of every binding; the second float32 and the float64 run on demand."""
    fn = codegen.build(case.program)
    out = []
    for i, binding in enumerate(case.bindings):
        def complete(i=i):
            return (run_once(fn, make_inputs(case, i, device)),
                    run_once(fn, make_inputs(case, i, device, torch.float64)))
        out.append(BindingRuns(binding=dict(binding), eager=run_once(fn, make_inputs(case, i, device)),
                               _complete=complete))
    return out


def compile_fn(case: Case, backend: str = "inductor"):
    """A fresh function object for the case, wrapped by ``torch.compile(dynamic=True)``."""
    return torch.compile(codegen.build(case.program), dynamic=True, backend=backend)


def dynamo_frames() -> int:
    """Frames dynamo has compiled in this process so far (0 if torch does not say).

    A compiled function run on several bindings compiles once, plus once per
    recompilation (a guard failed: a size of 0 or 1 specialised, duck-sized symbols
    that stop being equal); our programs have no graph breaks, so the frames
    compiled for one program, less one, are its recompiles.
    """
    try:
        from torch._dynamo.utils import counters
    except ImportError:  # pragma: no cover
        return 0
    return int(counters["frames"]["ok"])


def run_compiled(case: Case, device: str, runs: list[BindingRuns], compiled=None,
                 backend: str = "inductor") -> list[BindingRuns]:
    """Fill in the compiled run of every binding, through one compiled function."""
    compiled = compiled if compiled is not None else compile_fn(case, backend)
    for i, br in enumerate(runs):
        br.compiled = run_once(compiled, make_inputs(case, i, device))
    return runs


def execute(case: Case, device: str, backend: str = "inductor", compiled=None) -> list[BindingRuns]:
    """Everything the oracle needs for one case.

    When eager fails on any binding the case is invalid whatever the compiler does,
    so nothing is compiled (the shrinker proposes many such candidates).
    """
    runs = run_eager(case, device)
    if any(br.eager.failure for br in runs):
        return runs
    return run_compiled(case, device, runs, compiled=compiled, backend=backend)


class _ShapeEnvs:
    """Every ShapeEnv this process creates, weakly, so finished ones can be let go.

    A successful dynamo compile leaves each shape environment in a cycle that runs
    through C++ and that ``gc`` therefore never collects: ``ShapeEnv.tracked_fakes``
    -> ``TrackedFake`` -> the input's FakeTensor -> its symbolic sizes (C++) ->
    ``SymNode`` -> the ShapeEnv.  Dynamo breaks it (``tracked_fakes = None``) only
    on its restart paths, so a worker kept every graph's environment, with its
    guards, SymNodes and stack traces: about 2.6 environments and 0.3 MiB a program.
    Setting ``tracked_fakes = None`` after a reset, when no compiled code is left
    that could need it, lets the cycle be collected.
    """

    def __init__(self) -> None:
        self.live: weakref.WeakSet = weakref.WeakSet()
        self.installed = False

    def install(self) -> None:
        if self.installed:
            return
        self.installed = True
        try:
            from torch.fx.experimental.symbolic_shapes import ShapeEnv
        except ImportError:  # pragma: no cover
            return
        original, live = ShapeEnv.__init__, self.live

        @functools.wraps(original)
        def __init__(env, *args, **kwargs):
            original(env, *args, **kwargs)
            live.add(env)

        ShapeEnv.__init__ = __init__

    def release(self) -> None:
        for env in list(self.live):
            if getattr(env, "tracked_fakes", None) is not None:
                env.tracked_fakes = None


_SHAPE_ENVS = _ShapeEnvs()


def fresh_compile_state() -> None:
    """Forget every compiled graph, so the next compile starts as in a fresh process.

    ``torch._dynamo.reset()`` is not all of it: in a worker that compiles thousands
    of programs, three kinds of state outlive it and pin every shape environment
    ever traced (its SymNodes, guards and stack traces):

    * the cycle through C++ described in ``_ShapeEnvs``, broken here;
    * ``functools.lru_cache``s on ``ShapeEnv`` methods (some unbounded), keyed by
      ``self``;
    * FakeTensor's class-level dispatch cache.

    A fresh process, which is what a user's repro runs in, has none of them, so
    clearing them loses nothing a finding could rely on.
    """
    _SHAPE_ENVS.install()
    torch._dynamo.reset()
    _SHAPE_ENVS.release()
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv
    except ImportError:  # pragma: no cover - a torch without them has no such caches
        return
    for attr in vars(ShapeEnv).values():
        clear = getattr(attr, "cache_clear", None)
        if callable(clear):
            clear()
    if hasattr(FakeTensorMode, "cache_clear"):
        FakeTensorMode.cache_clear()
