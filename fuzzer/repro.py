"""Standalone repro scripts: a finding a user can paste into a PyTorch issue.

The script needs torch only.  It carries the custom ops the program calls (the
very snippets ``oplib`` registered), the numeric judgement (``compare``'s text),
the program, its bindings and input seed, and a short driver that runs eager and
``torch.compile(dynamic=True)`` and prints what differs.  Exit status: 1 when the
recorded kind of divergence reproduces, 0 when it does not, so that
``git bisect run python <id>.py`` works on a PyTorch checkout.
"""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING

from fuzzer import codegen, compare, oplib
from fuzzer.program import dead_pure_sites

if TYPE_CHECKING:  # pragma: no cover
    from fuzzer.corpus import Entry

#: how long a crash/timeout repro lets its child run before calling it a hang
REPRO_TIME_LIMIT_S = 300

DRIVER = '''
KIND = {kind!r}
BINDINGS = {bindings}
INPUT_DIMS = {input_dims}
INPUT_SEED = {input_seed}
DEAD_PURE_SITES = {dead_sites}
TIME_LIMIT_S = {time_limit}


def make_inputs(i, device, dtype):
    """Inputs for binding i, drawn exactly as dcefuzz draws them."""
    g = torch.Generator().manual_seed(INPUT_SEED + i)
    sizes = [[eval(d, {{}}, dict(BINDINGS[i])) for d in dims] for dims in INPUT_DIMS]
    return [torch.randn(s, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)
            for s in sizes]


def run(fn, i, device, dtype=torch.float32):
    TRACE["calls"].clear()
    TRACE["effects"].clear()
    xs = make_inputs(i, device, dtype)
    try:
        out = [t.detach().clone() for t in fn(*xs)]
        error = None
    except Exception as exc:  # the compiled function may raise
        out, error = None, f"{{type(exc).__name__}}: {{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}}"
    return dict(out=out, inputs=xs, effects=list(TRACE["effects"]), calls=list(TRACE["calls"]),
                error=error)


def check(i, eager, ref, comp):
    """Every clause of the dcefuzz contract, for binding i: (kind, message) pairs."""
    if comp["error"]:
        return [("compile-error/runtime-error", comp["error"])]
    found = []
    if len(comp["out"]) != len(eager["out"]):
        found.append(("wrong-output", "number of returned values differs"))
    for k, (r, e, c) in enumerate(zip(ref["out"], eager["out"], comp["out"])):
        why = tensor_difference(r, e, c)
        if why:
            found.append(("wrong-output", f"output {{k}}: {{why}}"))
    for k, (r, e, c) in enumerate(zip(ref["inputs"], eager["inputs"], comp["inputs"])):
        why = tensor_difference(r, e, c)
        if why:
            found.append(("wrong-mutation", f"input x{{k}}: {{why}}"))
    seq_e = [(op, site) for op, site, _ in eager["effects"]]
    seq_c = [(op, site) for op, site, _ in comp["effects"]]
    if seq_e != seq_c:
        found.append(("effect-log", f"effect events eager {{seq_e}} vs compiled {{seq_c}}"))
    else:
        for n, (r, e, c) in enumerate(zip(ref["effects"], eager["effects"], comp["effects"])):
            for rt, et, ct in zip(r[2], e[2], c[2]):
                why = tensor_difference(rt, et, ct)
                if why:
                    found.append(("effect-log", f"event {{n}} {{e[0]}}@{{e[1]}} saw other data: {{why}}"))
    ran_dead = sorted({{site for op, site in comp["calls"] if site in DEAD_PURE_SITES}})
    if ran_dead:
        found.append(("missed-dce", f"dead pure call sites executed: {{ran_dead}}"))
    return found


def run_isolated():
    """Crash and timeout findings: run this script again in a child, judge how it ends."""
    import subprocess
    try:
        done = subprocess.run([sys.executable, __file__] + sys.argv[1:] + ["--child"],
                              timeout=TIME_LIMIT_S)
    except subprocess.TimeoutExpired:
        print(f"REPRODUCES: still running after {{TIME_LIMIT_S}}s")
        return 1
    if done.returncode != 0:
        print(f"REPRODUCES: the compiling process ended with status {{done.returncode}}")
        return 1
    print("does not reproduce")
    return 0


def main():
    if KIND in ("crash", "timeout") and "--child" not in sys.argv:
        return run_isolated()
    if "--child" in sys.argv:
        import faulthandler  # where it dies or hangs: the Python stack, on stderr
        faulthandler.enable(all_threads=True)
        faulthandler.dump_traceback_later(TIME_LIMIT_S - 1)
    args = [a for a in sys.argv[1:] if a != "--child"]
    device = args[0] if args else ("cuda" if torch.cuda.is_available() else "cpu")
    print(f"torch {{torch.__version__}}, device {{device}}, looking for: {{KIND}}")
    compiled = torch.compile(program, dynamic=True)
    reproduced = False
    for i, binding in enumerate(BINDINGS):
        eager = run(program, i, device)
        if eager["error"]:
            print(f"binding {{i}} {{binding}}: eager raised ({{eager['error']}}); not a valid repro")
            return 2
        ref = run(program, i, device, torch.float64)
        comp = run(compiled, i, device)
        for kind, message in check(i, eager, ref, comp):
            print(f"binding {{i}} {{binding}}: [{{kind}}] {{message}}")
            reproduced |= KIND in kind.split("/")
    print("REPRODUCES" if reproduced else "does not reproduce")
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _compare_source() -> str:
    text = inspect.getsource(compare)
    # drop the module docstring and import: the script has its own header
    body = text.split("import torch\n", 1)[1]
    return body.strip() + "\n"


def render(entry: Entry) -> str:
    case = entry.case
    program = case.program
    header = (
        f'"""dcefuzz finding {entry.id}: {entry.kind}\n\n'
        + "\n".join(entry.detail[:5]) + "\n\n"
        + f"Found with torch {entry.torch_version} on {entry.device}"
        + (f" with fault {entry.fault!r} planted" if entry.fault else "") + ".\n"
        + f"Run: python {entry.id}.py [cpu|cuda]   exit 1: reproduces, 0: does not\n"
        + '"""\n'
    )
    driver = DRIVER.format(
        kind=entry.kind,
        bindings=json.dumps([dict(b) for b in case.bindings]),
        input_dims=json.dumps([list(i.dims) for i in program.inputs]),
        input_seed=case.input_seed,
        dead_sites=repr(set(sorted(dead_pure_sites(program)))) if dead_pure_sites(program) else "set()",
        time_limit=REPRO_TIME_LIMIT_S,
    )
    parts = [
        header,
        "import sys\n",
        oplib.source_for(program.custom_ops()),
        _compare_source(),
        codegen.source(program),
        driver.lstrip("\n"),
    ]
    return "\n\n".join(p.rstrip("\n") + "\n" for p in parts).replace("\n\n\n\n", "\n\n\n")
