"""Run a case eagerly and through ``torch.compile`` with the program's dynamic mode
(``dynamic=True``, or ``dynamic=None`` for automatic dynamic: ``codegen.dynamic_arg``),
recording everything.

For each binding the executor makes fresh inputs from the case's seed and runs:
eager float32 and the compiled function (:func:`execute`); and, for the bindings
the contract names (``contract.needs_checks``), the check runs (:func:`run_checks`):
eager float32 again (to prove eager is deterministic) and eager float64 (the
numeric reference).  Every run records its returned values, the final contents of
every input, the effect log and the call trace (``observe.Run``), and a binding's
runs are one ``observe.BindingRuns``.  All bindings go through *one* compiled
function, in order, the way a user's model meets new shapes.

Nothing here judges or decides what to run for a judgement; ``contract`` does.
"""

from __future__ import annotations

import contextlib
import functools
import weakref

import torch

from fuzzer.judge import observe, targets
from fuzzer.judge.observe import BindingRuns, Run
from fuzzer.program import codegen, custom_ops, forms, sizes, windows
from fuzzer.program.ir import Case

# whatever executes cases runs the standard op library (a cache pair's side process
# installs a variant of it instead, and never imports this module)
custom_ops.install()


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def device_unavailable(device: str) -> str | None:
    """Why ``device`` cannot run a case in this process, or None when it can.

    Asked before running, so that an entry recorded on a GPU, met on a machine
    without one, gets a reason rather than whatever the first tensor move raises.
    """
    try:
        parsed = torch.device(device)
    except RuntimeError as exc:
        return str(exc)
    if parsed.type == "cpu":
        return None
    if parsed.type != "cuda":
        return f"unsupported device type {parsed.type!r}"
    if not torch.cuda.is_available():
        return "CUDA is not available on this machine"
    if parsed.index is not None and parsed.index >= torch.cuda.device_count():
        return f"this machine has {torch.cuda.device_count()} CUDA devices"
    return None


@contextlib.contextmanager
def intra_op_threads(threads: int | None):
    """Run the body with torch's intra-op threads at ``threads`` (None: as they are).

    Some bugs show only with a given number (one, in a campaign's workers: Inductor's
    CPU code generation reads it), so a saved finding is judged again with the number
    of the process that found it (``Entry.threads``)."""
    if threads is None or threads == torch.get_num_threads():
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def make_inputs(case: Case, index: int, device: str, reference: bool = False) -> list[torch.Tensor]:
    """Inputs for binding ``index``: standard normal, seeded per (case, binding), in the
    program's dtype and layout, or float64 for the reference
    (``observe.draw_inputs``, which a repro script carries)."""
    binding = case.bindings[index]
    program = case.program
    shapes = [sizes.concrete(inp.dims, binding) for inp in program.inputs]
    names = [inp.name for inp in program.inputs]
    strided = tuple(names.index(n) for n in program.mode.strided)
    aliases = tuple((names.index(n), names.index(b)) for n, b in program.mode.aliases)
    fixed = tuple((k, inp.dtype) for k, inp in enumerate(program.inputs) if inp.dtype is not None)
    layouts = tuple((names.index(n), how) for n, how in program.mode.layouts)
    spans = windows.concrete(program.mode, names, shapes, index)
    return observe.draw_inputs(shapes, case.input_seed + index, device, getattr(torch, program.mode.dtype),
                               observe.Handover(strided, aliases, fixed, layouts, tuple(spans)), reference)


def run_once(fn, inputs: list[torch.Tensor], compiled: bool = False) -> Run:
    """Call ``fn`` on ``inputs`` (mutated in place) and record the aftermath."""
    return observe.run_once(fn, inputs, custom_ops.install().TRACE, compiled)


def eager_fn(case: Case):
    """The program as eager runs call it (through its ``step`` when it has one)."""
    program, step = codegen.build_with_step(case.program)
    return codegen.driven(step, program)


def checks_fn(case: Case, index: int = 0, device: str = "cpu"):
    """The program as the check runs of binding ``index`` call it, and what makes their
    inputs (``make(reference)``): a module (a program with state) is made afresh for
    each run, so that every check run, eager, float64 or noisy, takes one path through
    the step's loading of its buffers whatever ran before it (the paths are compared:
    ``contract.another_path``, the noisy references').  A state that carries over
    (``Mode.carry``) is rebuilt first: the fresh module runs bindings 0 to ``index - 1``
    within the run (a noisy reference's rounding reaches the state as well) on inputs
    of the run's precision, drawn with the run's own, before it; their calls and
    effects are cleared from the trace."""
    program, step = codegen.build_with_step(case.program)
    earlier: list = []

    def make(reference: bool):
        earlier[:] = [make_inputs(case, k, device, reference) for k in range(index)] if case.program.mode.carry else []
        return make_inputs(case, index, device, reference)

    if not case.program.mode.module:
        return codegen.driven(step, program), make

    def run(*inputs):
        module = type(program)()
        for drawn in earlier:
            step(module, *drawn)
        custom_ops.install().TRACE["calls"].clear()
        custom_ops.install().TRACE["effects"].clear()
        return step(module, *inputs)
    return run, make


def run_eager(case: Case, device: str) -> list[BindingRuns]:
    """Eager float32 runs of every binding (their check runs: :func:`run_checks`)."""
    fn = eager_fn(case)
    return [BindingRuns(binding=dict(binding), eager=run_once(fn, make_inputs(case, i, device)))
            for i, binding in enumerate(case.bindings)]


def run_checks(case: Case, device: str, runs: list[BindingRuns], bindings) -> list[BindingRuns]:
    """Give each binding of ``bindings`` (those ``contract.needs_checks`` names) its
    check runs (``observe.reference_runs``): eager float32 again, the float64
    reference and, for float16 or bfloat16, its noisy references.  A binding that
    has them already keeps them."""
    bindings = [i for i in bindings if runs[i].checks is None]
    if not bindings:
        return runs
    dtype = getattr(torch, case.program.mode.dtype)
    record = not forms.eager_traces(case.program.body)
    for i in bindings:
        runs[i].checks = observe.reference_runs(*checks_fn(case, i, device), custom_ops.install().TRACE, dtype,
                                                case.input_seed + i, record)
    return runs


def compile_fn(case: Case, backend: str = "inductor", dynamic: bool = True):
    """A fresh function object for the case, wrapped by ``torch.compile`` with the
    program's dynamic mode, and run through its ``step`` when it has one
    (``dynamic=False``: static shapes, one compile per binding, which triage uses to
    tell bugs of symbolic shapes from the rest; the program's marks still apply)."""
    return targets.get(targets.COMPILE).build(case, backend, dynamic)


def run_compiled(case: Case, device: str, runs: list[BindingRuns], compiled=None,
                 backend: str = "inductor", target: str = targets.DEFAULT) -> list[BindingRuns]:
    """Fill in the compiled run of every binding, through one compiled function (made
    by ``target``, ``fuzzer.judge.targets``)."""
    how = targets.get(target)
    compiled = compiled if compiled is not None else how.build(case, backend)
    for i, br in enumerate(runs):
        br.compiled = how.run(compiled, make_inputs(case, i, device))
    return runs


def execute(case: Case, device: str, backend: str = "inductor", compiled=None,
            target: str = targets.DEFAULT) -> list[BindingRuns]:
    """The eager and compiled runs of one case (what else the oracle needs of it:
    :func:`run_checks`).

    When eager fails on any binding the case is invalid whatever the compiler does,
    so nothing is compiled (the shrinker proposes many such candidates).
    """
    runs = run_eager(case, device)
    if any(br.eager.failure for br in runs):
        return runs
    return run_compiled(case, device, runs, compiled=compiled, backend=backend, target=target)


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
