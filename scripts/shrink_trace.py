"""The digest of every candidate the shrinker considers, in order, for generated
programs under stand-in oracles (pure rules of the program, no compile): what a change
that must not alter shrinking is held to.

    python scripts/shrink_trace.py [--seeds 10] > trace.txt
    diff trace-before.txt trace-after.txt

One line a program and oracle: ``<features> <seed> <oracle> <candidates> <oracle calls>
<statements> <digest>``, the digest over each candidate's content hash and whether it
was taken.  Two versions of dcefuzz that shrink alike print the same lines.
"""

from __future__ import annotations

import argparse
import hashlib

from fuzzer.judge import contract
from fuzzer.judge.contract import Divergence, Verdict
from fuzzer.program import features
from fuzzer.program.generate import generate
from fuzzer.program.ir import Case
from fuzzer.reduce import shrinker as shrinking


def _divergences(bindings) -> list:
    return [Divergence(contract.EFFECT_LOG, b, "sequence", "reordered (..)", ("reordered",)) for b in bindings]


def oracles(original: Case) -> dict:
    """Three stand-in bugs of ``original``, each a pure rule of the candidate."""
    body = original.program.body
    middle, first, last = body[len(body) // 2].form, body[0].form, body[-1].form
    mode = original.program.mode

    def form_stays(c: Case) -> Verdict:
        # while the middle statement's form is present, on the bindings of even sum
        if not any(s.form == middle for s in c.program.body):
            return Verdict(contract.OK, [])
        return Verdict(contract.OK, _divergences(
            b for b, binding in enumerate(c.bindings) if sum(binding.values()) % 2 == 0))

    def three_and_a_write(c: Case) -> Verdict:
        writes = any(s.form.startswith("m_") or s.form.endswith("_") for s in c.program.body)
        return Verdict(contract.OK, _divergences([0] if writes and len(c.program.body) >= 3 else []))

    def ends_and_mode(c: Case) -> Verdict:
        forms = {s.form for s in c.program.body}
        keeps = {first, last} <= forms and (c.program.mode.grad, c.program.mode.dtype) == (mode.grad, mode.dtype)
        return Verdict(contract.OK, _divergences(range(len(c.bindings)) if keeps else []))

    return {"form": form_stays, "write": three_and_a_write, "ends": ends_and_mode}


def trace(case: Case, judge) -> tuple[int, int, int, str]:
    """(candidates considered, oracle calls, statements left, digest of the sequence)."""
    seen: list[str] = []
    consider = shrinking.Shrinker.consider

    def recording(self, cand):
        taken = consider(self, cand)
        seen.append(f"{shrinking.case_key(cand)}:{int(taken)}")
        return taken

    shrinking.Shrinker.consider = recording
    try:
        result = shrinking.shrink(case, contract.EFFECT_LOG, judge(case).divergences, judge=judge)
    finally:
        shrinking.Shrinker.consider = consider
    seen.append(shrinking.case_key(result.case))
    return len(seen) - 1, result.oracle_calls, result.statements, hashlib.sha256(" ".join(seen).encode()).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    args = parser.parse_args()
    for name, table in (("none", features.NONE), ("all", features.ALL)):
        for seed in range(args.seeds):
            case = generate(seed, features=table)
            for oracle, judge in oracles(case).items():
                if not judge(case).divergences:
                    print(name, seed, oracle, "no bug at the start")
                    continue
                print(name, seed, oracle, *trace(case, judge))


if __name__ == "__main__":
    main()
