"""dcefuzz: differential fuzzing of torch.compile's treatment of custom operators.

The folders are the pipeline, and its layers: each imports only the ones below it
(``pyproject.toml``'s import-linter contracts check it; docs/layers.md), from the
bottom up:

    program -> judge -> faults -> isolation -> reduce | triage -> corpus -> render
            -> replay -> trials | cache | user -> campaign -> site -> cli

``program`` holds the custom-op library (as source text, so that a repro script
carries exactly the code the fuzzer ran), the statement forms, the typed IR, its
seeded generation and its lowering to Python, and the registry of op sources.
``judge`` runs a case eagerly and compiled and judges it under the contract
(``contract``, with the numeric rule in ``numeric``), confirming each finding on a
fresh compile (``trial``); it holds the registry of trial kinds.  ``faults``
plants compiler regressions that prove the oracle sees; ``isolation`` runs work in
child processes that may die.  ``reduce`` shrinks a finding and names it;
``triage`` finds its culprit.  ``corpus`` keeps entries and groups them into bugs;
``render`` writes their repro scripts, briefs and issues; ``replay`` runs saved
entries again (here, under another torch, or to shrink them again).  ``trials``
(a program compiled once), ``cache`` (a cache pair) and ``user`` (a user's op
library) plug into the registries below them without being named there.
``campaign`` is the long-running driver (sessions, state, the worker pool, the
self-test), ``site`` renders a campaign's results as HTML, and ``cli`` is the
command line.
"""

__version__ = "0.1.0"
