"""Where torch raised an error: what an error's bug class is made of.

Depends on the standard library only: ``fuzzer.render.repro`` pastes this module's
text into each script, ahead of ``observe``, so a repro places an error exactly as
the fuzzer did.  docs/contract.md gives the rule; :func:`raised_at` applies it.
"""

from __future__ import annotations

import linecache
import re
import warnings

#: modules that raise on behalf of whoever called them (a guard the shape environment
#: cannot decide, a ``torch._check``, a tree that does not match): an error raised in
#: them is placed at the frame that called into them, the code that asked for what
#: could not be done (each with its submodules; ``torch`` itself, whose ``_check``
#: and ``sym_*`` raise for their callers, without them)
RAISING_HELPERS = ("torch.fx.experimental.symbolic_shapes", "torch.fx.experimental.sym_node",
                   "torch.fx.experimental.recording", "torch.utils._sympy", "torch._prims_common",
                   "torch.utils._pytree", "torch._dynamo.exc", "torch._logging", "torch.utils._traceback")
#: modules that run other code (an op's dispatch into C++, fake tensors' meta
#: kernels, an FX interpreter, a module call, a counting decorator): an error that
#: surfaces in them was raised below Python, or in code that is not torch's, so no
#: frame says what raised it; the frame that called into them is its place, and its
#: message says which error it is
MACHINERY = ("torch._ops", "torch._subclasses", "torch.fx.interpreter", "torch.fx._symbolic_trace",
             "torch.fx.graph_module", "torch.fx.experimental.proxy_tensor", "torch.fx.experimental._backward_state",
             "torch.nn.modules.module", "torch.utils._stats", "torch.utils._python_dispatch",
             "torch._dynamo.eval_frame", "torch._compile", "torch._library", "torch.autograd.function")
#: exceptions that only wrap another: torch keeps the wrapped one as
#: ``inner_exception``, as the cause, or (raised ``from None``) as the context
WRAPPERS = frozenset({"BackendCompilerFailed", "InductorError", "LoweringException", "InternalTorchDynamoError",
                      "TorchRuntimeError", "Unsupported"})
#: how a bug class names an error by where it was raised
SITE_PREFIX = "raised "
#: digits in a function's name are a generated graph's number (``false_graph_0``)
_DIGITS = re.compile(r"\d+")
#: the Python entry of autograd's C++ engine: an error raised under it was raised by
#: the backward formula of some node, which no Python frame names (a guard on a size
#: from data in ``cumsum``'s or ``masked_select``'s formula), so the place is the same
#: for every formula and says nothing of which; anomaly mode names the node
ENGINE = ("torch.autograd.graph", "_engine_run_backward")
#: the modules Inductor's generated code is loaded as (``compile_tasks._reload_python_module``):
#: one function (``Runner.call``) holds every kernel call and check of a graph, so the
#: place says nothing of which failed; its line does
GENERATED = "torch._inductor.runtime.compile_tasks"
#: what anomaly mode warns before an error in a node's backward (``python_anomaly_mode.cpp``)
_ANOMALY = re.compile(r"Error detected in (\w+)\.")
#: the first call of a generated line: the kernel, op or check it runs
_CALLED = re.compile(r"([A-Za-z_][\w.]*)\(")
#: how a class says what raised under a place that names no one thing (the legacy
#: class, saved before, lacks it: ``fuzzer.judge.legacy``)
RAISER = re.compile(r" \((?:backward of [^)]*|generated(?:: [^)]*)?)\)")


def unwrapped(exc: BaseException) -> BaseException:
    """The exception torch's wrappers wrap (``WRAPPERS``), at the bottom of them.

    Only a wrapper is looked through: an error raised ``from`` another that is not a
    wrapper (fx's "Expected positional argument" from a ``StopIteration``) is the
    error, and what it came from is its mechanism.
    """
    seen = set()
    while type(exc).__name__ in WRAPPERS and id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "inner_exception", None) or exc.__cause__ or exc.__context__
        if not isinstance(inner, BaseException):
            break
        exc = inner
    return exc


def _in(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def raising_frame(exc: BaseException):
    """The frame that raised ``exc`` as a bug class places it, with what it says:
    (the wrapped exception, its frame, whether it was raised below Python), or None
    where no frame of torch is in its traceback.

    The exception is the wrapped one (what an ``InductorError`` or a
    ``LoweringException`` wraps: ``unwrapped``); the frame is the innermost of torch
    outside ``RAISING_HELPERS`` and ``MACHINERY``.  It is raised below Python when the
    innermost frame is not torch's, or is machinery's (raised in C++, or in our ops).
    """
    inner = unwrapped(exc)
    frames = []
    tb = inner.__traceback__ or exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    modules = [str(f.f_globals.get("__name__", "")) for f in frames]
    ours = [m == "torch" or m.startswith("torch.") for m in modules]
    for frame, module, torch_code in zip(reversed(frames), reversed(modules), reversed(ours)):
        if not torch_code or module == "torch" or _in(module, RAISING_HELPERS) or _in(module, MACHINERY):
            continue
        below_python = not ours[-1] or _in(modules[-1], MACHINERY)
        return inner, frame, below_python
    return None


class BackwardNodes(warnings.catch_warnings):
    """The nodes whose backward formula failed during a run, as anomaly mode names them
    (AOTAutograd traces a joint graph's backward with anomaly detection on): a context
    that records the run's warnings; ``nodes`` the names, in order."""

    def __init__(self) -> None:
        super().__init__(record=True)
        self.log: list = []

    def __enter__(self):
        self.log = super().__enter__()
        warnings.simplefilter("always")
        return self

    @property
    def nodes(self) -> list[str]:
        return [m.group(1) for w in self.log if (m := _ANOMALY.search(str(w.message)))]


def _line(frame, tb) -> str:
    """The source line ``frame`` was running when ``tb`` left it."""
    return linecache.getline(frame.f_code.co_filename, tb.tb_lineno).strip() if tb is not None else ""


def _raiser(frame, line: str, nodes: list[str]) -> str:
    """What raised under a place that names no one thing (``ENGINE``, ``GENERATED``): the
    node whose backward failed, the kernel, op or check a generated line calls; "" where
    the place names it, or nothing says."""
    module, function = str(frame.f_globals.get("__name__", "")), frame.f_code.co_name
    if (module, function) == ENGINE:
        return f" (backward of {nodes[-1]})" if nodes else ""
    if module.startswith(GENERATED + "."):
        called = _CALLED.search(line)
        return f" (generated: {_DIGITS.sub('#', called.group(1))})" if called else " (generated)"
    return ""


def raised_at(exc: BaseException, nodes: list[str] = ()) -> tuple[str, str]:
    """Where ``exc`` was raised, as a bug class names it, and the message that must
    go with it: (``raised <Type> in <package>:<function>``, a message or ""), or
    ("", "") where no frame of torch is in its traceback.

    The type is the wrapped exception's and the place its raising frame's
    (``raising_frame``), as its top-level package and its function's qualified
    name: no file and no line, so a function moved inside
    its package, or lines added above it, leave the class as it was, while the same
    assertion in two passes, or one guard asked for by two callers, are two classes.
    An error raised in Python by torch's own code is known by its place alone (its
    message holds the program's sizes and names); one that surfaced in machinery
    (raised in C++, or in our ops) keeps its first message line too, since many
    different checks below Python surface at one place.

    Two places name no one thing, and say what raised after them (``_raiser``): autograd's
    engine (``ENGINE``), under which any node's backward formula runs, names the node
    anomaly mode reported (``nodes``: ``BackwardNodes``), or else keeps the message; and a
    function of Inductor's generated code (``GENERATED``), which runs a whole graph's
    kernels and checks, names what its raising line calls (or only that it is generated,
    where the line calls nothing) and keeps the message.  Before,
    a guard raised in ``cumsum``'s formula and one in ``masked_select``'s were one class,
    as were every error of every generated ``Runner.call``.
    """
    found = raising_frame(exc)
    if found is None:
        return "", ""
    inner, frame, below_python = found
    module = str(frame.f_globals.get("__name__", ""))
    package = ".".join(module.split(".")[:2])
    code = frame.f_code
    function = _DIGITS.sub("#", getattr(code, "co_qualname", code.co_name))
    raiser = _raiser(frame, _line(frame, _tb_of(inner, frame) or _tb_of(exc, frame)), list(nodes))
    # a generated line's words are its own checks' or C++'s, and the engine's, where no
    # node is named, are the formula's: they go with the place
    generated, engine = module.startswith(GENERATED + "."), (module, code.co_name) == ENGINE
    below_python = below_python or generated or (engine and not nodes)
    message = (str(inner).strip().splitlines() or [""])[0] if below_python else ""
    return f"{SITE_PREFIX}{type(inner).__name__} in {package}:{function}{raiser}", message


def _tb_of(exc: BaseException, frame):
    """The traceback entry of ``frame`` in ``exc``'s traceback (None: not there)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame is not frame:
        tb = tb.tb_next
    return tb
