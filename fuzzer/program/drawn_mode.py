"""The mode a program is drawn with: its dynamic mode and marks, gradients, dtype,
strided inputs and layouts, from a stream of its own, so that the body's draws stay
as they were whatever the mode draws (``fuzzer.program.generate``)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from fuzzer import __version__
from fuzzer.limits import GEN
from fuzzer.program import features as feats
from fuzzer.program import layouts, windows
from fuzzer.program.ir import DTYPES, MARKS, Input, Mode


@dataclass(frozen=True)
class Refused:
    """What eager cannot run the body with, read off the body before its mode is drawn."""

    #: each mark eager cannot run the body with, to its substitute (``forms.mark_substitutes``)
    marks: dict[str, str] = field(default_factory=dict)
    #: the dtypes eager's kernels refuse the body in (``dtypes.refused_by``)
    dtypes: frozenset[str] = frozenset()


def draw(seed: int, on: frozenset, inputs: list[Input], aliases=(), refused: Refused = Refused(),
         dense=frozenset(), written=frozenset(), wins=()) -> Mode:
    """The program's mode, from a stream of its own (the body's draws stay as they were).

    A mark eager cannot run the body with (``forms.mark_substitutes``: a ``scan``
    compiles its combine function, which a ``mark_dynamic`` reaches; Dynamo traces an
    eager ``torch.cond``'s branches and refuses ``mark_unbacked``; a user's plain-int
    size must be specialised) is drawn as its substitute, from the same draws, so
    every other program is what it was.  So is a dtype eager's kernels refuse the body in
    (``dtypes.refused_by``): float32 in its place."""
    if not on:
        return Mode()
    rng = random.Random(f"dcefuzz-mode-{__version__}-{seed}")
    kept = set(dense) | windows.held(wins)  # contiguous: under an as_strided, a window or its base

    def mark() -> str:
        how = rng.choice(MARKS)
        return refused.marks.get(how, how)

    dynamic, marks = "true", []
    if feats.DYNAMIC_MODE in on:
        dynamic = rng.choice(("true", "auto"))
        dims = [(i.name, k) for i in inputs for k in range(len(i.dims))]
        marks = [(n, k, mark()) for n, k in dims if rng.random() < GEN.mark_share]
        if dynamic == "true" and not marks and dims:  # none where every input is a pair's
            marks = [(*rng.choice(dims), mark())]
    strided: list[str] = []
    if feats.STRIDED in on:
        # an alias takes its base's layout; a fixed-dtype input (a quantiser's codes) keeps its own
        own = [i for i in inputs if i.name not in dict(aliases) and i.dtype is None and i.name not in kept]
        strided = [i.name for i in own if rng.random() < GEN.strided_share] or ([rng.choice(own).name] if own else [])
    dtype = rng.choice(DTYPES[1:]) if feats.DTYPES in on else "float32"
    dtype = "float32" if dtype in refused.dtypes else dtype
    drawn = layouts.draw(rng, inputs, strided, aliases, kept, written, feats.AUTOGRAD in on, feats.LAYOUTS in on)
    return Mode(dynamic=dynamic, marks=tuple(marks), grad=feats.AUTOGRAD in on, dtype=dtype, strided=tuple(strided),
                aliases=aliases, layouts=drawn, windows=tuple(wins), window_calls=windows.calls(rng, wins, dense),
                func_grad=feats.FUNC_GRAD in on)

