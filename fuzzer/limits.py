"""Named limits: every size, count and tolerance the pipeline uses, in one place.

Each group is a frozen dataclass so a limit is read as ``GEN.max_rank`` rather than
a bare number in the middle of the code, and so tests can build variants.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GenLimits:
    max_symbols: int = 3
    max_inputs: int = 3
    max_rank: int = 3
    min_statements: int = 3
    max_statements: int = 12
    max_outputs: int = 3
    #: each symbol's least admissible size; 0 lets a binding use empty tensors.
    symbol_minimums: tuple[int, ...] = (0, 1, 1, 2)
    typical_sizes: tuple[int, ...] = (4, 6, 8, 9)
    min_bindings: int = 3
    binding_draws: int = 20
    attempts_per_statement: int = 8


@dataclass(frozen=True)
class CampaignLimits:
    #: seconds between progress lines.
    progress_every_s: float = 10.0


GEN = GenLimits()
CAMPAIGN = CampaignLimits()
