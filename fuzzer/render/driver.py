"""The driver of every standalone repro script, carried into it as text.

A repro script is this module's text after the op library's snippets, the numeric
rule, the run record, the contract, how a verdict is read, how a process died and the
record of its spec (``fuzzer.judge.numeric``, ``observe``, ``contract``, ``reading``,
``death`` and ``fuzzer.render.spec``, also carried as text), and the program; its last
lines call :func:`main` with the entry's ``SPEC`` (a ``ReproSpec``).  It therefore imports only torch and the
standard library; its ``from fuzzer...`` lines are dropped when it is carried, as
the names they import are defined earlier in the script.

Exit status, as ``git bisect run`` reads it:

* 1  the recorded bug reproduces: the same kind with the same bug class, or, for a
  crash or timeout, the same death (signal, memory cap, hang), or one it dies so by (a
  heap corruption's), after eager finished;
* 0  it does not (fixed): the program ran, wholly compiled and judged, without the
  bug (for a crash or timeout: the child ran to completion, judged so);
* 125  the script cannot judge: the kind diverges with another bug class (the same
  failure worded anew by another torch, or another bug: neither this one nor fixed),
  a crash or timeout child died another way than the recorded one,
  the bug did not show but the compiled program raised another way (a compile or
  runtime error of another kind, which may come first and hide it),
  the bug did not show but the program was not wholly compiled (a graph break it did
  not ask for, a refusal, a skipped frame, an inlined region) or a binding could not
  be judged, eager fails or disagrees with itself, the device is
  missing, or the script cannot even define its ops on this torch (an import error,
  a torch too old for the program).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time

import torch

from fuzzer.judge.compiled_autograd import under_compiled_autograd
from fuzzer.judge.contract import Asks, judge_runs, needs_checks
from fuzzer.judge.death import death_name
from fuzzer.judge.identity import BugClass
from fuzzer.judge.exporting import LOWERINGS, Exported, export_dynamic_shapes, run_exported
from fuzzer.judge.observe import BindingRuns, Handover, caches_off, draw_inputs, reference_runs, run_once
from fuzzer.judge.reading import Reading, read_death, read_verdict
from fuzzer.render.spec import ReproSpec, Wanted

REPRODUCES_EXIT = 1
FIXED_EXIT = 0
CANNOT_JUDGE_EXIT = 125
#: how often the parent of a crash/timeout repro looks at its child
POLL_S = 0.25
#: the environment variable naming the file a crash/timeout child creates once its
#: eager runs are done (a death before that says nothing about the compiler)
EAGER_DONE_ENV = "DCEFUZZ_EAGER_DONE"
#: characters of a crash/timeout child's stderr kept to class its death by (glibc's
#: heap words come last, just before it dies)
SAID_KEPT = 64 * 1024
#: seconds the parent waits for the rest of a dead child's stderr (a compile worker
#: it started may hold the pipe open)
SAID_WAIT_S = 5.0


def make_inputs(spec: ReproSpec, i: int, device: str, reference: bool = False) -> list:
    """Inputs for binding i (float64 for the reference), drawn exactly as dcefuzz draws them."""
    binding = spec["bindings"][i]
    sizes = [[_size(d, binding) for d in dims] for dims in spec["input_dims"]]
    windows = tuple((k, j, dim, _size(start, binding), sizes[k][dim]) for k, j, dim, start in spec.get("windows", ())
                    if i in spec.get("window_at", range(i + 1)))
    handover = Handover(tuple(spec.get("strided", ())), tuple(tuple(a) for a in spec.get("aliases", ())),
                        tuple(tuple(f) for f in spec.get("fixed", ())),
                        tuple(tuple(x) for x in spec.get("layouts", ())), windows)
    return draw_inputs(sizes, spec["input_seed"] + i, device, getattr(torch, spec.get("dtype", "float32")), handover,
                       reference)


def _size(expr: str, binding: dict) -> int:
    """A dim such as ``s0``, ``s0 // 2`` or ``(s0 // 2) - 1`` for one binding (the
    expressions are dcefuzz's own, checked when the entry was read)."""
    return int(eval(expr, {"__builtins__": {}}, dict(binding)))  # noqa: S307


def _through(step, fn):
    """``fn`` as a run calls it: through the program's ``step`` (its mode) when it has one."""
    return fn if step is None else (lambda *inputs: step(fn, *inputs))


def _own(program):
    """The program the compiled runs call: a module (a program with state) is another
    instance of its class, so eager and compiled each keep their own buffers."""
    return type(program)() if isinstance(program, torch.nn.Module) else program


def _checks_fn(spec: ReproSpec, program, trace: dict, device: str, step, index: int):
    """The program as the check runs of binding ``index`` call it, and what makes their
    inputs: each check run of a module gets one of its own (one path through its step's
    loads); a state carried from call to call is rebuilt first, through bindings 0 to
    ``index - 1`` on inputs of the run's precision, drawn before it, their calls and
    effects then cleared from the trace."""
    earlier: list = []

    def make(reference: bool):
        earlier[:] = [make_inputs(spec, k, device, reference) for k in range(index)] if spec.get("carry") else []
        return make_inputs(spec, index, device, reference)

    if not isinstance(program, torch.nn.Module):
        return _through(step, program), make

    def run(*inputs):
        module = _own(program)
        for drawn in earlier:
            step(module, *drawn)
        trace["calls"].clear()
        trace["effects"].clear()
        return step(module, *inputs)
    return run, make


def spec_asks(spec: ReproSpec) -> Asks:
    """What the program asks of the compiler as the spec records it (``trial.asks_of``),
    and what its target declines (``Target.declines``, recorded in the spec)."""
    return Asks(frozenset(spec.get("marks", ())), frozenset(spec.get("hops", ())), frozenset(spec.get("limits", ())),
                carry=bool(spec.get("carry")), declines=frozenset(map(tuple, spec.get("declines", ()))),
                unbacked=frozenset(tuple(pair) for pair in spec.get("unbacked", ())),
                backward_logs=frozenset(tuple(pair) for pair in spec.get("backward_logs", ())))


def judge(spec: ReproSpec, program, trace: dict, device: str, step=None):
    """Run eager and compiled over the recorded bindings, with the on-disk compile
    caches off (no artifact of an earlier run may serve this one), then the check runs
    the contract asks for (``needs_checks``); the verdict."""
    eager_fn = _through(step, program)
    runs = [BindingRuns(binding=dict(binding), eager=run_once(eager_fn, make_inputs(spec, i, device), trace))
            for i, binding in enumerate(spec["bindings"])]
    done = os.environ.get(EAGER_DONE_ENV)
    if done and not any(br.eager.failure for br in runs):
        open(done, "w").close()
    exporting = "lowering" in spec  # an exported target's run (``exporting.Lowering``)
    if exporting:
        exported = Exported(_own(program), export_dynamic_shapes(spec["input_dims"]), LOWERINGS[spec["lowering"]])
        compiled = _through(step, exported)
    else:
        how = {"mode": spec["mode"]} if spec.get("mode") else {}  # ``reduce-overhead``'s
        compiled = _through(step, torch.compile(_own(program), dynamic=spec.get("dynamic", True),
                                                backend=spec["backend"], **how))
    backward = spec.get("compiled_autograd", False)  # the run under compiled autograd
    if backward:
        compiled = under_compiled_autograd(compiled, spec["backend"])
    if not any(br.eager.failure for br in runs):
        for i, br in enumerate(runs):
            with caches_off():
                inputs = make_inputs(spec, i, device)
                br.compiled = (run_exported(compiled, exported, inputs, trace) if exporting
                               else run_once(compiled, inputs, trace, compiled=True))
    asks = spec_asks(spec)
    dtype = getattr(torch, spec.get("dtype", "float32"))
    record = not {"cond", "while_loop", "scan", "map_impl"} & set(spec.get("hops", ()))
    for i in needs_checks(runs, asks):
        runs[i].checks = reference_runs(*_checks_fn(spec, program, trace, device, step, i), trace, dtype,
                                        spec["input_seed"] + i, record)
    causes = {int(s): c for s, c in spec.get("dead_site_causes", {}).items()}
    # export promises no DCE; compiled autograd's dead calls are compile's to judge
    dead = {} if exporting or backward else causes or set(spec["dead_pure_sites"])
    return judge_runs(spec["input_names"], dead, runs, asks)


def _device(spec: ReproSpec, argv: list) -> str | None:
    device = argv[0] if argv else spec["device"]
    if device.startswith("cuda") and not torch.cuda.is_available():
        print(f"device {device} is not available here")
        return None
    return device


def rehash(spec: ReproSpec) -> None:
    """Start this script again with the hash seed its finding was made under, when it
    runs with another: some bugs show only under some orders of torch's sets."""
    want = spec.get("hash_seed")
    if want is not None and os.environ.get("PYTHONHASHSEED") != want:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": want})


def main(spec: ReproSpec, program, trace: dict, argv: list | None = None, step=None) -> int:
    if argv is None:
        rehash(spec)
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
    if spec.get("threads"):  # some bugs show only with as many threads as the fuzzer's process had
        torch.set_num_threads(spec["threads"])
    print(f"torch {torch.__version__}, device {device}, looking for: {spec['bug_class']}", flush=True)
    verdict = judge(spec, program, trace, device, step)
    # a crash/timeout child that survives judges by the same ladder: no verdict shows a
    # death, so it says 0 only for a run judged whole and clean of errors (eager that
    # fails, a compile that raises, code not wholly compiled: 125, the death unjudged)
    return conclude(spec, verdict)


def conclude(spec: Wanted, verdict) -> int:
    """Print a verdict and say, as an exit status, whether it shows ``spec``'s bug
    (the ladder of ``fuzzer.judge.reading``, which a replay reads by too)."""
    said = read_verdict(spec["kind"], BugClass.parse(spec["bug_class"]), verdict)
    if said.reading is Reading.NOT_JUDGED:
        print(f"cannot judge: {said.reason}")
        return CANNOT_JUDGE_EXIT
    for d in verdict.divergences:
        print(d.line())
    for gap in verdict.untested:
        print(f"not wholly compiled ({gap.reason}): {gap.message.splitlines()[0] if gap.message else ''}")
    if said.reading is Reading.REPRODUCES:
        print("REPRODUCES")
        return REPRODUCES_EXIT
    if said.reading is Reading.ANOTHER_BUG:
        # the kind still diverges, another way (often the same failure, worded anew by a
        # later torch): neither this bug nor fixed
        print(f"cannot judge: another bug of this kind ({said.reason})")
        return CANNOT_JUDGE_EXIT
    if said.reading is Reading.RAISED:
        # the compiled run raised another way, which may hide this bug: not fixed
        print(f"cannot judge: the program fails another way ({said.reason}), and the bug did not show")
        return CANNOT_JUDGE_EXIT
    if said.reading is Reading.UNTESTED:
        # code that did not run compiled, or a binding the contract could not judge,
        # cannot show the bug: it is not fixed there, only not tested
        print(f"cannot judge: not wholly compiled or judged ({verdict.untested[0].reason}), "
              f"and the bug did not show")
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


def _relay(stream, said: list) -> None:
    """Pass a child's stderr on to ours as it comes, keeping its tail in ``said``."""
    for line in iter(stream.readline, b""):
        text = line.decode(errors="replace")
        sys.stderr.write(text)
        sys.stderr.flush()
        said.append(text)
        while len(said) > 1 and sum(map(len, said)) > SAID_KEPT:
            del said[0]


def run_isolated(spec: ReproSpec, argv: list) -> int:
    """Crash and timeout findings: run this script again in a child, judge how it ends.

    Only the recorded death reproduces: the same signal (or a heap corruption, by
    either of its signals: ``fuzzer.judge.death``, read from what the child writes on
    stderr, passed on as it comes), the memory cap, or a hang, or one it dies so by
    (``death.dies_so``: a heap corruption and a plain SIGSEGV or SIGABRT, either way
    round), and only once the child's eager runs are done.  Only a child that ran to completion and judged its
    run (exit 0) says fixed; another death, or a child that could not judge (125), is
    neither.
    """
    death = spec["death"]
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "eager-done")
        env = dict(os.environ, **{EAGER_DONE_ENV: marker})
        child = subprocess.Popen([sys.executable, sys.argv[0], *argv, "--child"], env=env,
                                 stderr=subprocess.PIPE)
        said: list = []
        relay = threading.Thread(target=_relay, args=(child.stderr, said), daemon=True)
        relay.start()
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
        relay.join(SAID_WAIT_S)
    code = child.returncode
    if how is None and code < 0:
        import signal
        # SIGABRT or SIGSEGV after glibc's heap words: one death, a heap corruption
        how = death_name(signal.Signals(-code).name, "".join(said))
    elif how is None and code not in (FIXED_EXIT, CANNOT_JUDGE_EXIT):
        how = f"exit code {code}"
    # the ladder of ``fuzzer.judge.reading``, which a replay reads its child's end by too
    read = read_death(death, how, eager_done, judged=code == FIXED_EXIT).reading
    if read is Reading.UNTESTED:  # the child could not judge its run, and said why
        return CANNOT_JUDGE_EXIT
    if read is Reading.NOT_JUDGED:
        print(f"the child died ({how}) before its eager runs were done: cannot judge")
        return CANNOT_JUDGE_EXIT
    if read is Reading.REPRODUCES:
        print(f"REPRODUCES: {how}")
        return REPRODUCES_EXIT
    if read is Reading.ANOTHER_BUG:
        # another death (another signal, the memory cap, a hang): neither this bug nor fixed
        print(f"cannot judge: looking for {death}, the child ended with {how}")
        return CANNOT_JUDGE_EXIT
    print(f"does not reproduce: looking for {death}, the child ran to completion")
    return FIXED_EXIT
