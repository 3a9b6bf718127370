"""dcefuzz: differential fuzzing of torch.compile's treatment of custom operators.

The package reads as the pipeline it implements:

    ops -> program -> execute -> oracle -> shrink -> corpus -> campaign -> cli

``oplib`` holds the custom-op definitions (as source text, so that a repro script
carries exactly the code the fuzzer ran), ``ops`` the statement forms the
generator draws from, ``program``/``generate``/``codegen`` the typed IR and its
lowering to Python, ``execute`` the eager and compiled runs, ``compare`` and
``oracle`` the judgement (the contract), ``trial`` the confirmation of a finding,
``shrink``/``signature`` its reduction and naming, ``corpus``/``repro``/``replay``
the saved findings, ``campaign``/``state``/``pool``/``worker`` the long-running
driver, ``isolate``/``stacks`` the runs in processes that may die (crashes and
hangs: replay, shrinking, where they died), ``faults``/``selftest`` the planted regressions that prove the oracle
sees, and ``cli`` the command line.
"""

__version__ = "0.1.0"
