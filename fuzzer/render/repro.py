"""Standalone repro scripts: a finding a user can paste into a PyTorch issue.

The script needs torch only.  It carries, as text, the very code the fuzzer judged
with: the custom ops the program calls (the snippets ``custom_ops`` registered),
the numeric rule (``fuzzer.judge.numeric``), the run record (``observe``), a run
through ``torch.export`` (``exporting``, for an entry found through it), a run under
compiled autograd (``compiled_autograd``, likewise), the
contract (``contract``), how a verdict is read for a bug (``reading``), how a
process died (``death``), the record of its spec (``fuzzer.render.spec``) and the driver
(``fuzzer.render.driver``), then the program and a ``SPEC`` of the entry
(bindings, input seed, the bug class to look for: a ``ReproSpec``).  There is no second copy of the contract to drift.

Exit status: 1 when the recorded bug reproduces, 0 when it does not, 125 when the
script cannot judge, so that ``git bisect run python <id>.py`` works on a PyTorch
checkout (see ``fuzzer.render.driver``).
"""

from __future__ import annotations

import inspect
import pprint
import re

from fuzzer.corpus.entry import Entry
from fuzzer.isolation import process
from fuzzer.judge import (
    artifacts,
    compiled_autograd,
    contract,
    death,
    exporting,
    graphs,
    guarded,
    identity,
    numeric,
    observe,
    paths,
    raised,
    reading,
    targets,
)
from fuzzer.judge.trial import asks_of
from fuzzer.limits import REPORT, PoolLimits
from fuzzer.program import codegen, sources, windows
from fuzzer.program.liveness import dead_pure_sites, dead_site_causes
from fuzzer.render import driver
from fuzzer.render import spec as repro_spec
from fuzzer.render.spec import ReproSpec


#: the modules a script carries, in the order their names are needed
CARRIED = (numeric, paths, raised, guarded, graphs, artifacts, observe, exporting, compiled_autograd, identity,
           contract, death, reading, repro_spec, driver)

#: first lines of every script: an uncaught exception (no torch, a torch too old
#: for the program's ops) means "cannot judge", never Python's exit status 1
PREAMBLE = '''\
import sys

sys.excepthook = lambda kind, value, tb: (
    __import__("traceback").print_exception(kind, value, tb),
    print(f"cannot judge: {kind.__name__} (exit 125)", flush=True),
    __import__("os")._exit(125))
'''

_DOCSTRING = re.compile(r'^""".*?"""\n', re.S)
_PACKAGE_IMPORT = re.compile(r"^(from __future__ import .*|from fuzzer[.\w]* import \([^)]*\)|from fuzzer[.\w]* import .*)\n",
                             re.M)


def carried_source(module) -> str:
    """A module's text as a script carries it: no docstring, no imports of the
    package (what they import is defined earlier in the script)."""
    text = _DOCSTRING.sub("", inspect.getsource(module), count=1)
    return _PACKAGE_IMPORT.sub("", text).strip() + "\n"


def spec(entry: Entry) -> ReproSpec:
    """What the driver needs to know of an entry."""
    program = entry.case.program
    how, cap = (process.death_of(entry.detail[0]) if entry.kind in contract.PROCESS_KINDS
                else (None, None))
    return {
        "id": entry.id,
        "kind": entry.kind,
        "bug_class": entry.bug_class.text,
        "device": entry.device,
        "backend": entry.backend,
        "bindings": [dict(b) for b in entry.case.bindings],
        "input_seed": entry.case.input_seed,
        "input_names": [i.name for i in program.inputs],
        "input_dims": [list(i.dims) for i in program.inputs],
        "dynamic": codegen.dynamic_arg(program),
        "dtype": program.mode.dtype,
        "strided": [[i.name for i in program.inputs].index(n) for n in program.mode.strided],
        "aliases": [[[i.name for i in program.inputs].index(x) for x in pair] for pair in program.mode.aliases],
        **({"fixed": [[k, i.dtype] for k, i in enumerate(program.inputs) if i.dtype]}
           if any(i.dtype for i in program.inputs) else {}),
        **({"layouts": [[[i.name for i in program.inputs].index(n), how] for n, how in program.mode.layouts]}
           if program.mode.layouts else {}),
        **({"windows": _windows(program)} if program.mode.windows else {}),
        **({"carry": True} if program.mode.carry else {}),  # a module's state, carried from call to call
        **({"window_at": [i for i in range(len(entry.case.bindings)) if windows.shared(program.mode, i)]}
           if program.mode.window_calls else {}),
        "dead_pure_sites": sorted(dead_pure_sites(program)),
        "dead_site_causes": {str(s): c for s, c in sorted(dead_site_causes(program).items())},
        **_asked(program),
        "death": how,
        "memory_cap_mb": cap or PoolLimits().memory_mb,
        "time_limit_s": REPORT.script_child_seconds,
        **({"threads": entry.threads} if entry.threads is not None else {}),
        **({"hash_seed": entry.hash_seed} if entry.hash_seed is not None else {}),
        **({"target": entry.target} if entry.target != targets.DEFAULT else {}),
        **_run_through(targets.get(entry.target)),
    }


def _run_through(target: targets.Target) -> dict:
    """How the script runs the program through ``target``, as the target says: what it
    declines (the script refuses what the trial refused), ``torch.compile``'s mode, how its
    exported program is lowered, whether its runs go under compiled autograd."""
    return {**({"declines": sorted(map(list, target.declines))} if target.declines else {}),
            **({"mode": target.mode} if target.mode else {}),
            **({"lowering": target.lowering.name} if target.lowering is not None else {}),
            **({"compiled_autograd": True} if target.under_compiled_autograd else {})}


def _windows(program) -> list:
    """``[k, j, dim, start]`` for each window: input k is input j narrowed along ``dim``
    from ``start`` (a dim expression) to its own size (``fuzzer.program.windows``)."""
    names = [i.name for i in program.inputs]
    dims = {i.name: i.dims for i in program.inputs}
    return [[names.index(n), names.index(b), d, windows.span(kind, dims[b][d])[0]]
            for n, b, d, kind in program.mode.windows]


def _asked(program) -> dict:
    """What the program asks of the compiler (``trial.asks_of``), where it asks anything."""
    asks = asks_of(program)
    return {**({"marks": sorted(asks.marks)} if asks.marks else {}),
            **({"hops": sorted(asks.hops)} if asks.hops else {}),
            **({"limits": sorted(asks.limits)} if asks.limits else {}),
            **({"unbacked": [list(pair) for pair in sorted(asks.unbacked)]} if asks.unbacked else {}),
            **({"backward_logs": [list(pair) for pair in sorted(asks.backward_logs)]} if asks.backward_logs else {})}


def render(entry: Entry) -> str:
    """The standalone script of ``entry``, a program compiled once in one process."""
    header = (
        f'"""dcefuzz finding {entry.id}: {entry.kind}\n\n'
        + "\n".join(entry.detail[:5]) + "\n\n"
        + f"Found with torch {entry.torch_version} on {entry.device}"
        + (f" with fault {entry.fault!r} planted" if entry.fault else "")
        + (f", through the {entry.target} target ({targets.get(entry.target).api})"
           if entry.target != targets.DEFAULT else "")
        + ".\n"
        + f"Run: python {entry.id}.py [cpu|cuda]   (default: {entry.device})\n"
        + "Exit 1: reproduces, 0: does not, 125: cannot judge (for git bisect run).\n"
        + '"""\n'
    )
    parts = [
        header + "\nfrom __future__ import annotations\n",
        PREAMBLE,
        sources.script(entry.case.program),
        *[carried_source(m) for m in CARRIED],
        codegen.source(entry.case.program),
        "SPEC = " + pprint.pformat(spec(entry), sort_dicts=False, width=100) + "\n",
        f'if __name__ == "__main__":\n    sys.exit(main(SPEC, {codegen.entry_name(entry.case.program)}, TRACE'
        + (", step=step" if codegen.needs_step(entry.case.program) else "") + "))\n",
    ]
    return "\n\n".join(p.strip("\n") + "\n" for p in parts if p.strip())
