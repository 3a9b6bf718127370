"""A side process of a cache pair, as the package starts it:
``python -m fuzzer.cache <job.json> <record.pickle>``.

Around ``fuzzer.cache.pair.run_side`` (what a repro script's side runs too) the
package adds what a campaign needs of every child: it dies with its parent, shares
the cores (the job's ``threads``) and carries the campaign's planted fault.
"""

from __future__ import annotations

import json
import sys


def main(argv: list) -> int:
    from fuzzer.isolation.child import die_with_parent

    die_with_parent()
    with open(argv[0]) as fh:
        job = json.load(fh)
    import torch

    from fuzzer import faults
    from fuzzer.cache import pair

    if job.get("threads"):
        torch.set_num_threads(job["threads"])
        torch._inductor.config.compile_threads = job["threads"]
    with faults.planted(job.get("fault")):
        return pair.side_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
