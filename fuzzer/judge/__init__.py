"""Judging: a case run eagerly and compiled, what each run records, the contract and
its numeric rule, one confirmed trial, and the registry of trial kinds."""
