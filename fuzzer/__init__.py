"""dcefuzz: differential fuzzing of torch.compile's treatment of custom operators.

The folders are the pipeline:

    program -> judge -> reduce -> corpus -> campaign -> cli

``program`` holds the custom-op library (as source text, so that a repro script
carries exactly the code the fuzzer ran), the statement forms, the typed IR, its
seeded generation and its lowering to Python.  ``judge`` runs a case eagerly and
compiled (``execute``, ``observe``) and judges it under the contract (``contract``,
with the numeric rule in ``numeric``), confirming each finding on a fresh compile
(``trial``).  ``reduce`` shrinks a finding and names it (``signature``).
``corpus`` saves entries and their standalone repro scripts and replays them.
``cache`` runs a program as a cache pair, two processes sharing the on-disk compile
caches with one op's declaration changed between them, for stale-cache findings.
``campaign`` is the long-running driver (sessions, state, the worker pool).
Beside them, ``isolation`` runs work in child processes that may die (one protocol,
crashes and hangs, their stacks), ``faults`` plants compiler regressions that prove
the oracle sees (with ``selftest``), and ``cli`` is the command line.
"""

__version__ = "0.1.0"
