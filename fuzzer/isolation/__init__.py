"""Isolation: work in child processes that may die, one protocol for all of them, and
how a death is named and where it happened."""
