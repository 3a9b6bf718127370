"""A cache pair: one program compiled in two fresh processes that share one on-disk
compile cache, the first with the old declaration of an op, the second with the new.

Carried as text into every ``stale-cache`` repro script (like the contract), so it
imports only torch, the standard library and the carried modules; a script runs its
two sides by running itself with ``--side`` (:func:`pair_main`), the package by
``python -m fuzzer.cache``.

Each side is a *job* (a dict, written as JSON) and leaves its record in a pickle:

* the **old** side compiles and runs the program on every binding, which fills the
  cache; what it computes is not judged (its declaration may be dishonest);
* the **new** side runs the program eagerly (float32 twice, float64 once), then
  compiled from the warm cache, then, after ``torch._dynamo.reset()``, compiled
  again with the on-disk caches off: the *cold* compile.

:func:`judge_pair` applies the contract to the warm runs and to the cold runs, and
the stale-cache clause (``contract.check_stale``) keeps what only the warm compile
did wrong.  Both processes start with an empty cache folder of their own, never the
campaign's, and it is deleted with the pair.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import torch

from fuzzer.judge.contract import OK, Verdict, check_stale, judge_runs
from fuzzer.judge.observe import BindingRuns, Checks, Gap, caches_off, run_once
from fuzzer.render.driver import CANNOT_JUDGE_EXIT, conclude, make_inputs, rehash

OLD, NEW = "old", "new"
#: the on-disk caches a side can turn on: the setting of each, and the Dynamo counter
#: (group, name) that says it served a compile
CACHES = {
    "fx_graph": ("torch._inductor.config", "fx_graph_cache", "inductor", "fxgraph_cache_hit"),
    "aot_autograd": ("torch._functorch.config", "enable_autograd_cache", "aot_autograd", "autograd_cache_hit"),
}
#: why a pair says nothing about stale caches: the new side compiled afresh
CACHE_MISS = "cache-miss"
#: the environment variables that point torch's on-disk caches at a folder
CACHE_ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


class SideFailed(RuntimeError):
    """A side process ended without its record (it died, hung or could not start)."""


def _naive_dce():
    """A user's post-grad pass that deletes every call whose result nothing uses, the
    in-place writes to the program's inputs too, which is wrong (the pass a
    ``config-changed`` variant's old side runs, and its new side has dropped)."""
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class NaiveDCE(CustomGraphPass):
        def __call__(self, graph) -> None:
            for node in reversed(list(graph.nodes)):
                if node.op == "call_function" and not node.users:
                    graph.erase_node(node)

        def uuid(self) -> str:
            return "dcefuzz-naive-dce-1"

    return NaiveDCE()


#: custom graph passes a config variant can set, by name (a job is JSON, a pass is not)
CUSTOM_PASSES = {"naive-dce": _naive_dce}


def _setting(path: str, value) -> None:
    """Set one config value; ``{"custom_pass": name}`` stands for one of ``CUSTOM_PASSES``."""
    if isinstance(value, dict) and "custom_pass" in value:
        value = CUSTOM_PASSES[value["custom_pass"]]()
    module, attr = path.rsplit(".", 1)
    setattr(importlib.import_module(module), attr, value)


def _hits() -> dict:
    from torch._dynamo.utils import counters
    return {name: int(counters[group][counter]) for name, (_, _, group, counter) in CACHES.items()}


def with_grads(fn, twice: bool = False):
    """``fn`` followed by the gradients of the sum of its outputs with respect to its
    inputs (zeros where none flows), appended to what it returns: a changed backward
    formula shows as a returned value.  The inputs become leaves that require grad.
    ``twice``: the gradients are taken twice, the first time retaining the graph, and
    the second time's are returned: a backward that overwrote what it was given to keep
    shows there."""
    def graded(*inputs):
        leaves = [x.detach().requires_grad_(True) for x in inputs]
        outs = tuple(fn(*leaves))
        live = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        grads = [None] * len(leaves)
        if live:
            loss = sum(o.sum() for o in live)
            if twice:
                torch.autograd.grad(loss, leaves, allow_unused=True, retain_graph=True)
            grads = torch.autograd.grad(loss, leaves, allow_unused=True)
        return tuple(o.detach() for o in outs) + tuple(
            torch.zeros_like(x) if g is None else g for x, g in zip(leaves, grads))
    return graded


def run_side(job: dict) -> dict:
    """One side, in this process (which must be fresh: the ops are registered here)."""
    for name, (module, attr, _, _) in CACHES.items():
        _setting(f"{module}.{attr}", name in job["caches"])
    for path, value in job["config"].items():
        _setting(path, value)
    namespace: dict = {}
    exec(compile(job["library"], "<dcefuzz oplib>", "exec"), namespace)
    exec(compile(job["program"], "<dcefuzz program>", "exec"), namespace)
    program, trace, spec, device = namespace["program"], namespace["TRACE"], job["spec"], job["device"]

    def graded(fn):
        return with_grads(fn, job.get("twice", False)) if job["grad"] else fn

    def runs(fn, compiled: bool, reference: bool = False) -> list:
        return [run_once(fn, make_inputs(spec, i, device, reference), trace, compiled=compiled)
                for i in range(len(spec["bindings"]))]

    record: dict = {"torch": torch.__version__}
    if job["side"] == NEW:
        eager = graded(program)
        record["eager"] = [runs(eager, False), runs(eager, False), runs(eager, False, reference=True)]
    before = _hits()
    record["warm"] = runs(graded(torch.compile(program, dynamic=True, backend=spec["backend"])), True)
    record["hits"] = {name: n - before[name] for name, n in _hits().items()}
    if job["side"] == NEW:
        torch._dynamo.reset()
        with caches_off():
            record["cold"] = runs(graded(torch.compile(program, dynamic=True, backend=spec["backend"])), True)
    return record


def side_main(argv: list) -> int:
    """``<job.json> <record.pickle>``: run one side, write its record."""
    with open(argv[0]) as fh:
        job = json.load(fh)
    record = run_side(job)
    with open(argv[1], "wb") as fh:
        pickle.dump(record, fh)
    return 0


def run_pair(jobs: dict, command: list, timeout: float, env: dict | None = None) -> dict:
    """Run the old side, then the new, each in a fresh process started with
    ``command + [job, record]``, sharing one new cache folder; the new side's record
    (with the old side's cache hits as ``old_hits``)."""
    folder = tempfile.mkdtemp(prefix="dcefuzz-pair-")
    try:
        base = dict(os.environ if env is None else env)
        for var in CACHE_ENV:
            base[var] = os.path.join(folder, "cache", var.lower())
        records = {}
        for side in (OLD, NEW):
            job_path, record_path = os.path.join(folder, f"{side}.json"), os.path.join(folder, f"{side}.pickle")
            with open(job_path, "w") as fh:
                json.dump(dict(jobs[side], side=side), fh)
            try:
                done = subprocess.run(command + [job_path, record_path], env=base, timeout=timeout,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            except subprocess.TimeoutExpired as exc:
                raise SideFailed(f"the {side} side outlived its time limit ({timeout:.0f} s)") from exc
            if done.returncode != 0 or not os.path.exists(record_path):
                tail = (done.stderr or "").strip().splitlines()[-3:]
                raise SideFailed(f"the {side} side ended with status {done.returncode}: " + " | ".join(tail))
            with open(record_path, "rb") as fh:
                records[side] = pickle.load(fh)
        record = records[NEW]
        record["old_hits"] = records[OLD]["hits"]
        record["old_failures"] = [r.failure.line() for r in records[OLD]["warm"] if r.failure is not None]
        return record
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def judge_pair(input_names: list, bindings: list, record: dict, label: str) -> Verdict:
    """The stale-cache verdict of a new side's record: the contract applied to its warm
    and to its cold compiled runs, and what only the warm one broke."""
    def binding_runs(compiled: list) -> list:
        eager, again, reference = record["eager"]
        return [BindingRuns(binding=dict(binding), eager=eager[i], compiled=compiled[i],
                            checks=Checks(eager_again=again[i], reference=reference[i]))
                for i, binding in enumerate(bindings)]

    warm = judge_runs(input_names, set(), binding_runs(record["warm"]))
    if warm.status != OK:
        return warm
    cold = judge_runs(input_names, set(), binding_runs(record["cold"]))
    if cold.status != OK:
        return cold
    untested = list(warm.untested)
    if not any(record["hits"].values()):
        untested.append(Gap(CACHE_MISS, "no on-disk cache served the new side's compile"))
    return Verdict(OK, check_stale(warm, cold, label), untested=untested)


@dataclass(frozen=True)
class Sides:
    """What a pair's two sides register and set (a variant's op library and settings on
    each side), and how both take the gradients."""

    library_old: str
    library_new: str
    config_old: dict = field(default_factory=dict)
    config_new: dict = field(default_factory=dict)
    #: the program's gradients are computed and judged
    grad: bool = False
    #: the new side takes the gradients twice (the old side once, as its settings may forbid more)
    twice: bool = False


def pair_jobs(sides: Sides, program: str, spec: dict, device: str, caches: list) -> dict:
    """The two sides' jobs."""
    common = {"program": program, "spec": spec, "device": device, "grad": sides.grad, "caches": list(caches)}
    return {OLD: dict(common, library=sides.library_old, config=dict(sides.config_old), twice=False),
            NEW: dict(common, library=sides.library_new, config=dict(sides.config_new), twice=sides.twice)}


def pair_main(spec: dict, library_old: str, library_new: str, program: str, argv: list | None = None) -> int:
    """A stale-cache repro script's entry point: ``--side JOB RECORD`` runs one side;
    otherwise run the pair on ``[cpu|cuda]`` and exit as ``driver.conclude`` says."""
    if argv is None:
        rehash(spec)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--side"]:
        return side_main(argv[1:])
    device = argv[0] if argv else spec["device"]
    if device.startswith("cuda") and not torch.cuda.is_available():
        print(f"device {device} is not available here")
        return CANNOT_JUDGE_EXIT
    print(f"torch {torch.__version__}, device {device}, looking for: {spec['bug_class']}", flush=True)
    sides = Sides(library_old, library_new, spec["config_old"], spec["config_new"], spec["grad"],
                  spec.get("twice", False))
    jobs = pair_jobs(sides, program, spec, device, spec["caches"])
    try:
        record = run_pair(jobs, [sys.executable, os.path.abspath(sys.argv[0]), "--side"], spec["time_limit_s"])
    except SideFailed as exc:
        print(f"cannot judge: {exc}")
        return CANNOT_JUDGE_EXIT
    print(f"cache hits of the new side: {record['hits']}")
    return conclude(spec, judge_pair(spec["input_names"], spec["bindings"], record, spec["label"]))
