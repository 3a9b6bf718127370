"""Reduction: a finding shrunk to a 1-minimal case with the same bug class (crashes and
timeouts too, in child processes), and the signature that names it."""
