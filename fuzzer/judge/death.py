"""How a process died, in the words a crash's bug class is made of.

A signal names how the process ended, not always why.  A write out of bounds that
corrupts the heap kills the process where the allocator next trips on it: glibc
aborts with its own words on stderr (``free(): invalid size``, ``corrupted size vs.
prev_size``, ``double free or corruption``; SIGABRT), or a later access faults
(SIGSEGV), which run depends on what was allocated since.  Classed by the signal, one
bug would be two, and a replay that died the other way would say "another death".
So a SIGABRT or SIGSEGV whose process wrote glibc's heap words is one death,
``heap corruption``; a plain SIGSEGV or SIGABRT (no such words: a null pointer, a
failed C++ assertion) stays its signal.

A repro script carries this module as text (``fuzzer.render.repro``): it imports only
the standard library.
"""

from __future__ import annotations

import re

#: the death of a process whose heap glibc found corrupted
HEAP_CORRUPTION = "heap corruption"
#: the signals a corrupted heap kills by: glibc's abort, or a fault in what it left
HEAP_SIGNALS = ("SIGABRT", "SIGSEGV")
#: glibc's words when its allocator finds the heap corrupted (``malloc_printerr``)
HEAP_WORDS = re.compile(r"corrupted size vs\. prev_size|corrupted double-linked list|double free"
                        r"|\b(?:free|malloc|realloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): ")


def death_name(how: str, said: str = "") -> str:
    """The death class of a process that ended ``how`` (a signal's name, ``exit code
    N``) after writing ``said`` on stderr."""
    return HEAP_CORRUPTION if how in HEAP_SIGNALS and HEAP_WORDS.search(said) else how
