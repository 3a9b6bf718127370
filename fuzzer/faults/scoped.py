"""Faults confined to one feature's path: a regression that only programs of that
feature (``fuzzer.program.features``) can meet.

Each is an existing mechanism (``effect_dropped``, ``mutation_lost``) narrowed by a
*scope*, the way real regressions hide in one path: a check that only the training
graph consults, a resume function after a graph break, a size only the data knows,
a list-of-tensors argument, a half-precision or non-contiguous buffer.  A fault's
``features`` are the weights a self-test draws its programs with, so its campaign
meets the path at all.

* ``effect-dce-training`` (autograd): an effectful call whose tensor argument
  requires grad is treated as pure, so in a training graph a call with an unused
  result is deleted.  Functionalization sees the argument's ``requires_grad``; FX
  DCE, later in the same compile, is told through the compile id.
* ``effect-dce-after-break`` (graph-break): the same, only while Dynamo compiles a
  resume function (``torch_dynamo_resume_in_*``): the graph after a break loses its
  effects.
* ``effect-dce-unbacked`` (dynamic-mode, data-dependent): an effectful call whose
  argument has an unbacked size (``mark_unbacked``, a size from data) is treated as
  pure.  (A lost write confined to unbacked bases was tried first: Inductor's clone
  of such a base, which the lost-write mechanism forces, makes the compiled kernel
  read out of bounds and the process die, so it tested the crash path instead.)
* ``mutation-lost-list`` (signatures): a mutating custom op's write never reaches the
  program input when its written argument is a list of tensors (``Tensor(a!)[]``).
* ``mutation-lost-half`` (dtypes) and ``mutation-lost-strided`` (strided): the same
  for float16 or bfloat16 bases, and for non-contiguous ones.

Patched: the targets of the mechanism each narrows, and for the graph-break scope
``torch._dynamo.convert_frame._compile``, which marks the compile of a resume
function.
"""

from __future__ import annotations

import contextvars

from fuzzer.faults import _patching, effect_dropped, mutation_lost
from fuzzer.faults._fault import EFFECT_DROPPED, MUTATION_LOST, Fault

COMPILE_FRAME = "torch._dynamo.convert_frame:_compile"
RESUME_PREFIX = "torch_dynamo_resume_in"

_resuming: contextvars.ContextVar[bool] = contextvars.ContextVar("dcefuzz_resuming", default=False)


def _compile_id():
    from torch._guards import CompileContext

    return CompileContext.current_compile_id()


def _training_effects():
    """Effects dropped when an argument requires grad, remembered per compile."""
    dropped: set = set()

    def affected(op, args, kwargs) -> bool:
        import torch

        hit = any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        if hit:
            dropped.add((str(_compile_id()), op))
        return hit

    def forget(op, args, kwargs) -> bool:
        return (str(_compile_id()), op) in dropped

    return effect_dropped.build_with(affected, forget)


def _build_training(current):
    return _training_effects()(current)


def _build_after_break(current):
    original_compile = current(COMPILE_FRAME)

    def _compile(code, *args, **kwargs):
        token = _resuming.set(code.co_name.startswith(RESUME_PREFIX))
        try:
            return original_compile(code, *args, **kwargs)
        finally:
            _resuming.reset(token)

    in_resume = effect_dropped.build_with(lambda op, args, kwargs: _resuming.get())(current)
    return {**in_resume, COMPILE_FRAME: _compile}


def _writes_a_list(op, bases) -> bool:
    import torch

    return any(a.alias_info is not None and a.alias_info.is_write and isinstance(a.type, torch.ListType)
               for a in op._schema.arguments)


def _half(op, bases) -> bool:
    import torch

    return any(b.dtype in (torch.float16, torch.bfloat16) for b in bases)


def _strided(op, bases) -> bool:
    return any(not b.is_contiguous() for b in bases)


_EFFECTS = (effect_dropped.HANDLE_EFFECTS, effect_dropped.IS_IMPURE)
_MUTATIONS = (mutation_lost.DECOMPOSE, mutation_lost.DENSE)


def _mutation_fault(name: str, scope, what: str, features: tuple) -> Fault:
    return Fault(
        name=name, bug_class=MUTATION_LOST, expected_kind="wrong-mutation", dynamic_only=False,
        description=("Inductor's decompose_auto_functionalized clones the mutated bases of a custom op "
                     f"but returns the unwritten originals when {what}"),
        targets=_MUTATIONS, build=mutation_lost.build_with(scope), features=features)


FAULTS = (
    Fault(name="effect-dce-training", bug_class=EFFECT_DROPPED, expected_kind="effect-log", dynamic_only=False,
          description=("handle_effects and is_impure treat an effectful custom op as pure when an argument "
                       "requires grad, so a training graph deletes calls whose result is unused"),
          targets=_EFFECTS, build=_build_training, features=(("autograd", 1.0),)),
    Fault(name="effect-dce-after-break", bug_class=EFFECT_DROPPED, expected_kind="effect-log", dynamic_only=False,
          description=("handle_effects and is_impure treat an effectful custom op as pure while Dynamo "
                       "compiles a resume function, so the graph after a break deletes unused effectful calls"),
          targets=_EFFECTS + (COMPILE_FRAME,), build=_build_after_break, features=(("graph-break", 1.0),)),
    Fault(name="effect-dce-unbacked", bug_class=EFFECT_DROPPED, expected_kind="effect-log", dynamic_only=False,
          description=("handle_effects and is_impure treat an effectful custom op as pure when an argument has "
                       "an unbacked size, so such a call whose result is unused is deleted"),
          targets=_EFFECTS,
          build=effect_dropped.build_with(lambda op, args, kwargs: _patching.has_free_unbacked_symbols((args, kwargs))),
          features=(("dynamic-mode", 1.0), ("data-dependent", 1.0))),
    _mutation_fault("mutation-lost-list", _writes_a_list, "the op writes a list of tensors",
                    (("signatures", 1.0),)),
    _mutation_fault("mutation-lost-half", _half, "a base is float16 or bfloat16", (("dtypes", 1.0),)),
    _mutation_fault("mutation-lost-strided", _strided, "a base is not contiguous", (("strided", 1.0),)),
)

assert all(f.features for f in FAULTS), "a scoped fault needs the features that reach its path"

