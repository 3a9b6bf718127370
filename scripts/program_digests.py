"""The digest of every program (with its bindings and input seed) of a range of seeds,
with every feature off and on: what a change that must not alter generation is held to.

    python scripts/program_digests.py [--seeds 200] > digests.txt
    diff digests-before.txt digests-after.txt

One line a program: ``<features> <seed> <digest>``.  The same seed, torch version and
features give the same program, so two versions of dcefuzz that generate alike print the
same lines.
"""

from __future__ import annotations

import argparse
import hashlib

from fuzzer.program import features
from fuzzer.program.generate import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="seeds 0..N-1 (default 200)")
    args = parser.parse_args()
    for name, table in (("none", features.NONE), ("all", features.ALL)):
        for seed in range(args.seeds):
            case = generate(seed, features=table)
            text = f"{case.program.digest()} {case.bindings!r} {case.input_seed}"
            print(name, seed, hashlib.sha256(text.encode()).hexdigest()[:16])


if __name__ == "__main__":
    main()
