"""Compile seconds and programs per minute of the same programs on two devices.

    python scripts/device_figures.py --devices cuda,cpu [--programs 6] [--seed 0] [--json FILE]

For each device, in turn, on programs 0..N-1 of one seed (drawn with every feature off,
so both devices run the very same code): the first compiled call of binding 0 (the
compile, with its run) and a second call on the same inputs (the run alone): their
difference is the compile's seconds; then the whole trial a campaign runs on a
program (``run_trial``: every binding, eager and compiled, confirmation), whose rate is
the device's programs per minute.  One warm-up program per device is not counted (the
first compile of a process loads Inductor and, on CUDA, initialises the device).  The
devices share the process, so the figures are side by side: the ratio is what to read.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _compile_seconds(case, device: str) -> float:
    from fuzzer.judge import execute

    execute.fresh_compile_state()
    compiled = execute.compile_fn(case)
    inputs = execute.make_inputs(case, 0, device)
    start = time.perf_counter()
    compiled(*[t.clone() for t in inputs])
    _sync(device)
    first = time.perf_counter() - start
    start = time.perf_counter()
    compiled(*[t.clone() for t in inputs])
    _sync(device)
    return max(0.0, first - (time.perf_counter() - start))


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def figures(device: str, programs: int, seed: int) -> dict:
    from fuzzer.judge.trial import run_trial
    from fuzzer.program.generate import generate, program_seed

    cases = [generate(program_seed(seed, i)) for i in range(programs + 1)]
    _compile_seconds(cases[0], device)  # warm-up, not counted
    compiles, failures = [], 0
    for case in cases[1:]:
        try:
            compiles.append(_compile_seconds(case, device))
        except Exception:  # noqa: BLE001 - a program the compiler rejects is a finding elsewhere
            failures += 1
    start = time.perf_counter()
    statuses = [run_trial(case, device).status for case in cases[1:]]
    seconds = time.perf_counter() - start
    return {"device": device, "programs": programs, "compile_s_median": statistics.median(compiles) if compiles else None,
            "compile_s_mean": statistics.mean(compiles) if compiles else None, "compile_failures": failures,
            "trial_programs_per_min": programs / seconds * 60, "statuses": statuses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", default="cuda,cpu")
    parser.add_argument("--programs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None)
    a = parser.parse_args()
    rows = []
    for d in a.devices.split(","):  # each device's line as it ends: a run cut short keeps the first
        r = figures(d, a.programs, a.seed)
        rows.append(r)
        compile_s = (f"{r['compile_s_median']:.2f}s median ({r['compile_s_mean']:.2f}s mean)"
                     if r["compile_s_median"] is not None else "n/a")
        print(f"{r['device']:5s} compile {compile_s} over {r['programs']} programs "
              f"({r['compile_failures']} failed), {r['trial_programs_per_min']:.1f} programs/min in trials",
              flush=True)
    if len(rows) == 2 and rows[1]["compile_s_median"]:
        a0, b0 = rows
        print(f"{a0['device']}/{b0['device']}: compile seconds x{a0['compile_s_median'] / b0['compile_s_median']:.2f}, "
              f"programs/min x{a0['trial_programs_per_min'] / b0['trial_programs_per_min']:.2f}")
    if a.json_path:
        Path(a.json_path).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
