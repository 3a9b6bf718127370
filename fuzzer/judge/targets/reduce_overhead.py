"""``reduce-overhead``: ``torch.compile(mode="reduce-overhead")``, Inductor's code
replayed through CUDA graphs."""

from __future__ import annotations

from fuzzer.judge.targets.brief import Through, compile_call
from fuzzer.judge.targets.compile import CompileTarget

NAME = "reduce-overhead"


class ReduceOverheadTarget(CompileTarget):
    """``torch.compile(mode="reduce-overhead")``: Inductor's code replayed through CUDA
    graphs (cudagraph trees), where a buffer the graph wrote is replayed, not
    recomputed.  CUDA only: a campaign on another device is refused before it starts."""

    name = NAME
    api = "torch.compile(mode='reduce-overhead')"
    help = "torch.compile with mode='reduce-overhead', CUDA graphs; CUDA only"
    mode = "reduce-overhead"
    through = Through("with `torch.compile({args}, mode='reduce-overhead')` (backend `{backend}`, {device}; CUDA "
                      "graphs)", "compiled", "torch.compile",
                      lambda own, args, backend: compile_call(own, args, backend, "reduce-overhead"))

    def unavailable(self, device: str) -> str | None:
        if not device.startswith("cuda"):
            return f"mode='reduce-overhead' captures CUDA graphs, and the device is {device}, not CUDA"
        return None


#: the target, as the registry holds it, and the pieces of its pipeline only triage runs (none)
TARGET = ReduceOverheadTarget()
PIECES: tuple = ()
