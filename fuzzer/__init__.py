"""dcefuzz: differential fuzzing of torch.compile's treatment of custom operators.

The package reads as the pipeline it implements:

    ops -> program -> execute -> oracle -> shrink -> corpus -> campaign -> cli

``oplib`` holds the custom-op definitions (as source text, so that a repro script
carries exactly the code the fuzzer ran), ``ops`` the statement forms the
generator draws from, ``program``/``generate``/``codegen`` the typed IR and its
lowering to Python, ``execute`` the eager and compiled runs, ``contract`` and
``oracle`` the judgement, ``corpus``/``repro``/``replay`` the saved findings, and
``campaign``/``cli`` the long-running driver.
"""

__version__ = "0.1.0"
