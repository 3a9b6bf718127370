"""Does the fast path ever count a finding as a bug it does not show?

A campaign classifies a finding of a family it holds bugs of cheaply
(``fuzzer.campaign.entries.counted_only``: recognition, a short shrink with hints, a
key-only triage) and shrinks only what it cannot place.  Each shortcut must keep the
finding's own divergence: a new bug counted as a held one is lost.  This checks that
property the slow way, finding by finding, on programs the generator draws and on the
hand-written shapes of ``SHAPES`` (built through dcefuzz's own API):

- **fast**: the finding as a campaign holding the corpus ``--held`` classifies it: the
  held bug's key where it is only counted, else "shrunk" (it goes on to a full shrink);
- **truth**: the finding shrunk in full without hints and triaged in full
  (``entry_for`` with nothing held): its own key.

A finding the fast path counted under a key its truth does not have is a **loss**.  A
finding shrunk with hints whose key differs from the one shrunk without is a **slide**
(the hint took it to another bug).  Both should be zero.

    python benchmarks/fastpath.py --held corpus --seeds 0:400 --findings 25 --out fast.jsonl
    python benchmarks/fastpath.py --held corpus --shapes

Each finding costs a full shrink and triage (minutes on the CPU): run it in the
background.  Each line of ``--out`` is one finding: seed, kind, class, what each path
said.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from fuzzer.campaign.config import Config
from fuzzer.campaign.entries import case_of, counted_only, entry_for, trial_of
from fuzzer.corpus.bugs import key_of
from fuzzer.corpus.examples import Examples
from fuzzer.judge import contract
from fuzzer.judge.trial import Finding
from fuzzer.program.ir import Case, Input, Mode, Program, Stmt


def _program(inputs: dict, body: list, outputs=(), mode: Mode = Mode()) -> Case:
    symbols = sorted({d for dims in inputs.values() for d in dims if d.startswith("s")})
    program = Program(symbols=tuple(symbols), sym_min={s: 1 for s in symbols},
                      inputs=tuple(Input(n, tuple(d)) for n, d in inputs.items()),
                      body=tuple(Stmt(f, tuple(a), o, dict(at)) for f, a, o, at in body), outputs=tuple(outputs),
                      mode=mode)
    return Case(program=program, bindings=tuple({s: n for s in symbols} for n in (4, 7, 2)), input_seed=1234)


#: hand-written programs of the shapes that once left the fast path as another bug:
#: a write lost through a gapped unfold beside a tagged op's write; a tagged op's write
#: beside a pure call it does not need; the dropped effect edge beside an effect in a
#: cond branch
SHAPES: dict[str, Case] = {
    "unfold-beside-tagged": _program({"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 0}),
        ("unfold_gap", ["x2"], "v1", {"dim": 0, "size_w": 1, "step": 2}), ("mul_", ["v1"], None, {"c": 0.5}),
        ("t_scale", ["x1"], "v2", {"site": 1}), ("mul_", ["v2"], None, {"c": 0.5})], outputs=["v0"]),
    "tagged-beside-pure": _program({"x0": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 0}), ("t_scale", ["x0"], "v1", {"site": 1}),
        ("mul_", ["v1"], None, {"c": 0.5})]),
    "edge-beside-cond": _program({"x0": ("s0",), "x1": ("s0",)}, [
        ("clone", ["x0"], "v0", {}), ("e_log", ["v0"], None, {"site": 0}), ("e_tap", ["x0"], "v1", {"site": 1}),
        ("cond_log", ["x1"], "v2", {"site": 2, "site2": 3})], outputs=["v0", "v2"]),
}


def _findings(config: Config, seeds: range, shapes: bool):
    """(label, seed, finding) for each finding of a plain trial, the shapes' first."""
    if shapes:
        from fuzzer.judge.trial import run_trial

        for label, case in SHAPES.items():
            for finding in run_trial(case, config.device).findings:
                yield label, None, finding
    for seed in seeds:
        result = trial_of(seed, config, case_of(seed, config))
        for finding in result.findings:
            yield f"seed {seed}", seed, finding


def check(finding: Finding, seed: int | None, config: Config, held: dict) -> dict:
    """What the fast path and the slow one say of ``finding``."""
    start = time.monotonic()
    fast = counted_only(finding, seed, config, dict(held))
    fast_key = key_of(fast).text if fast is not None else None
    truth = entry_for(finding, seed, config, held={})
    hinted = entry_for(finding, seed, config, held=dict(held))
    truth_key, hinted_key = key_of(truth).text, key_of(hinted).text
    return {"kind": finding.kind, "class": contract.bug_class(finding.kind, finding.divergences).text,
            "fast": fast_key or "shrunk", "truth": truth_key, "hinted": hinted_key,
            "loss": fast_key is not None and fast_key != truth_key, "slide": hinted_key != truth_key,
            "statements": [len(finding.case.program.body), truth.statements, hinted.statements],
            "seconds": round(time.monotonic() - start, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held", required=True, help="the corpus folder whose bugs a campaign holds")
    parser.add_argument("--seeds", default="0:0", help="program indices FIRST:LAST of seed --seed")
    parser.add_argument("--seed", type=int, default=610)
    parser.add_argument("--findings", type=int, default=25, help="stop after this many findings")
    parser.add_argument("--shapes", action="store_true", help="check the hand-written SHAPES too")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    first, _, last = args.seeds.partition(":")
    config = Config(seed=args.seed, device="cpu", corpus_dir=str(args.held))
    held = Examples(args.held).held()
    rows, out = [], args.out.open("a") if args.out else None
    for label, seed, finding in _findings(config, range(int(first), int(last or first)), args.shapes):
        if len(rows) >= args.findings:
            break
        row = {"program": label, **check(finding, seed, config, held)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()
    losses, slides = sum(r["loss"] for r in rows), sum(r["slide"] for r in rows)
    counted = sum(r["fast"] != "shrunk" for r in rows)
    print(f"findings {len(rows)}  counted by the fast path {counted}  losses {losses}  slides {slides}")
    return 1 if losses or slides else 0


if __name__ == "__main__":
    sys.exit(main())
