"""Campaigns: the long-running driver that tries program after program within a
budget, saves and shrinks what it finds, and survives what kills its workers; the
self-test, which runs campaigns with a fault planted."""
