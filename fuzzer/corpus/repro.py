"""Standalone repro scripts: a finding a user can paste into a PyTorch issue.

The script needs torch only.  It carries, as text, the very code the fuzzer judged
with: the custom ops the program calls (the snippets ``custom_ops`` registered),
the numeric rule (``fuzzer.judge.numeric``), the run record (``observe``), the
contract (``contract``) and the driver (``fuzzer.corpus.driver``), then the
program and a ``SPEC`` of the entry (bindings, input seed, the bug class to look
for).  There is no second copy of the contract to drift.

Exit status: 1 when the recorded bug reproduces, 0 when it does not, 125 when the
script cannot judge, so that ``git bisect run python <id>.py`` works on a PyTorch
checkout (see ``fuzzer.corpus.driver``).
"""

from __future__ import annotations

import inspect
import pprint
import re

from fuzzer.cache import pair
from fuzzer.cache.trial import ALL_CACHES, spec_of
from fuzzer.cache.variants import Variant
from fuzzer.corpus import driver
from fuzzer.corpus.entry import Entry
from fuzzer.isolation import process
from fuzzer.judge import contract, numeric, observe
from fuzzer.judge.trial import asks_of
from fuzzer.limits import PoolLimits
from fuzzer.program import codegen, custom_ops
from fuzzer.user import tracing
from fuzzer.program.ir import dead_pure_sites

#: how long a crash/timeout repro lets its child run before calling it a hang
REPRO_TIME_LIMIT_S = 300

#: the modules a script carries, in the order their names are needed
CARRIED = (numeric, observe, contract, driver)

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
_PACKAGE_IMPORT = re.compile(r"^(from __future__ import .*|from fuzzer[.\w]* import .*)\n", re.M)


def carried_source(module) -> str:
    """A module's text as a script carries it: no docstring, no imports of the
    package (what they import is defined earlier in the script)."""
    text = _DOCSTRING.sub("", inspect.getsource(module), count=1)
    return _PACKAGE_IMPORT.sub("", text).strip() + "\n"


def spec(entry: Entry) -> dict:
    """What the driver needs to know of an entry."""
    program = entry.case.program
    death, cap = (process.death_of(entry.detail[0]) if entry.kind in contract.PROCESS_KINDS
                  else (None, None))
    return {
        "id": entry.id,
        "kind": entry.kind,
        "bug_class": entry.bug_class,
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
        "dead_pure_sites": sorted(dead_pure_sites(program)),
        **_asked(program),
        "death": death,
        "memory_cap_mb": cap or PoolLimits().memory_mb,
        "time_limit_s": REPRO_TIME_LIMIT_S,
        **({"threads": entry.threads} if entry.threads is not None else {}),
        **({"hash_seed": entry.hash_seed} if entry.hash_seed is not None else {}),
    }


def _asked(program) -> dict:
    """What the program asks of the compiler (``trial.asks_of``), where it asks anything."""
    asks = asks_of(program)
    return {**({"marks": sorted(asks.marks)} if asks.marks else {}),
            **({"hops": sorted(asks.hops)} if asks.hops else {})}


def render(entry: Entry) -> str:
    if entry.kind == contract.STALE_CACHE:
        return render_pair(entry)
    header = (
        f'"""dcefuzz finding {entry.id}: {entry.kind}\n\n'
        + "\n".join(entry.detail[:5]) + "\n\n"
        + f"Found with torch {entry.torch_version} on {entry.device}"
        + (f" with fault {entry.fault!r} planted" if entry.fault else "") + ".\n"
        + f"Run: python {entry.id}.py [cpu|cuda]   (default: {entry.device})\n"
        + "Exit 1: reproduces, 0: does not, 125: cannot judge (for git bisect run).\n"
        + '"""\n'
    )
    parts = [
        header + "\nfrom __future__ import annotations\n",
        PREAMBLE,
        custom_ops.source_for(entry.case.program.custom_ops()),
        tracing.script_source(entry.case.program),
        *[carried_source(m) for m in CARRIED],
        codegen.source(entry.case.program),
        "SPEC = " + pprint.pformat(spec(entry), sort_dicts=False, width=100) + "\n",
        'if __name__ == "__main__":\n    sys.exit(main(SPEC, program, TRACE'
        + (", step=step" if codegen.needs_step(entry.case.program) else "") + "))\n",
    ]
    return "\n\n".join(p.strip("\n") + "\n" for p in parts if p.strip())


#: the modules a stale-cache script carries (its pair too), in the order their names are needed
PAIR_CARRIED = (numeric, observe, contract, driver, pair)


def pair_spec(entry: Entry) -> dict:
    """What a stale-cache script's pair needs to know of its entry."""
    variant = Variant.from_json(entry.variant)
    program = entry.case.program
    return {
        "id": entry.id,
        "kind": entry.kind,
        "bug_class": entry.bug_class,
        "label": variant.label,
        "variant": variant.detail,
        "device": entry.device,
        **spec_of(entry.case, entry.backend),
        "input_names": [i.name for i in program.inputs],
        "grad": variant.grad,
        "config_old": dict(variant.config_old),
        "config_new": dict(variant.config_new),
        "caches": list(ALL_CACHES),
        "time_limit_s": REPRO_TIME_LIMIT_S,
        **({"hash_seed": entry.hash_seed} if entry.hash_seed is not None else {}),
    }


def render_pair(entry: Entry) -> str:
    """The script of a stale-cache finding: each side's op library as a string (a
    process registers an op once, so each side registers its own, in a process of
    its own), the program as a string too; run bare, it runs itself twice more with
    ``--side``, the old then the new side, on one new, empty cache folder."""
    variant = Variant.from_json(entry.variant)
    names = entry.case.program.custom_ops()
    header = (
        f'"""dcefuzz finding {entry.id}: {entry.kind}\n\n'
        f"The declaration changed between two runs: {variant.detail}.\n"
        "A compile of the new declaration, served by the on-disk cache that a compile of the\n"
        "old one filled, breaks the contract where a compile from empty caches does not:\n\n"
        + "\n".join(entry.detail[:5]) + "\n\n"
        + f"Found with torch {entry.torch_version} on {entry.device}"
        + (f" with fault {entry.fault!r} planted" if entry.fault else "") + ".\n"
        + f"Run: python {entry.id}.py [cpu|cuda]   (default: {entry.device})\n"
        + "It runs itself twice more (--side), as the old then the new declaration, in two\n"
        + "fresh processes sharing a new, empty cache folder.\n"
        + "Exit 1: reproduces, 0: does not, 125: cannot judge (for git bisect run).\n"
        + '"""\n'
    )
    parts = [
        header + "\nfrom __future__ import annotations\n",
        PREAMBLE,
        *[carried_source(m) for m in PAIR_CARRIED],
        f"LIBRARY_OLD = {variant.library(names, pair.OLD)!r}\n",
        f"LIBRARY_NEW = {variant.library(names, pair.NEW)!r}\n",
        f"PROGRAM = {codegen.source(entry.case.program)!r}\n",
        "SPEC = " + pprint.pformat(pair_spec(entry), sort_dicts=False, width=100) + "\n",
        'if __name__ == "__main__":\n    sys.exit(pair_main(SPEC, LIBRARY_OLD, LIBRARY_NEW, PROGRAM))\n',
    ]
    return "\n\n".join(p.strip("\n") + "\n" for p in parts)
