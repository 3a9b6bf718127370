"""How a process died, in the words a crash's bug class is made of, and which deaths
are one.

A signal names how the process ended, not always why.  A write out of bounds that
corrupts the heap kills the process where the allocator next trips on it: glibc
aborts with its own words on stderr (``free(): invalid size``, ``corrupted size vs.
prev_size``, ``invalid fastbin entry (free)``; SIGABRT), or a later access faults
(SIGSEGV), which run depends on what was allocated since.  Classed by the signal, one
bug would be two, and a replay that died the other way would say "another death".
So a SIGABRT or SIGSEGV whose process wrote any of glibc's heap words
(:data:`GLIBC_HEAP_WORDS`) is one death, ``heap corruption``; a plain SIGSEGV or
SIGABRT (no such words: a null pointer, a failed C++ assertion) stays its signal.

Confirming or replaying a death asks whether a fresh process dies *so* again
(:func:`dies_so`): the same death, or, where one of the two is a heap corruption, any
death a corrupted heap is met by (:data:`HEAP_DEATHS`).

A repro script carries this module as text (``fuzzer.render.repro``): it imports only
the standard library.
"""

from __future__ import annotations

import re

#: the death of a process whose heap glibc found corrupted
HEAP_CORRUPTION = "heap corruption"
#: the signals a corrupted heap kills by: glibc's abort, or a fault in what it left
HEAP_SIGNALS = ("SIGABRT", "SIGSEGV")

#: every message glibc 2.36's allocator prints on a heap it finds corrupted, before it
#: aborts: the strings ``malloc_printerr`` is called with in ``malloc/malloc.c``, and in
#: ``malloc/malloc-check.c`` (``MALLOC_CHECK_``, in ``libc_malloc_debug.so``), read
#: out of this machine's ``libc.so.6`` and ``libc_malloc_debug.so.0`` (Debian 2.36-9)
#: and checked against the source.  Older releases word the same checks alike (2.26
#: to 2.35 add or drop a few; before 2.26 each line is wrapped in ``*** Error in ...``)
GLIBC_HEAP_WORDS: tuple[str, ...] = (
    # free and _int_free
    "free(): invalid pointer", "free(): invalid size", "free(): too many chunks detected in tcache",
    "free(): unaligned chunk detected in tcache 2", "free(): double free detected in tcache 2",
    "free(): invalid next size (fast)", "free(): invalid next size (normal)", "free(): corrupted unsorted chunks",
    "invalid fastbin entry (free)", "double free or corruption (fasttop)", "double free or corruption (top)",
    "double free or corruption (out)", "double free or corruption (!prev)",
    "corrupted size vs. prev_size while consolidating", "munmap_chunk(): invalid pointer",
    # malloc and _int_malloc
    "malloc(): unaligned tcache chunk detected", "malloc(): unaligned fastbin chunk detected",
    "malloc(): unaligned fastbin chunk detected 2", "malloc(): unaligned fastbin chunk detected 3",
    "malloc(): memory corruption (fast)", "malloc(): smallbin double linked list corrupted",
    "malloc(): invalid size (unsorted)", "malloc(): invalid next size (unsorted)",
    "malloc(): mismatching next->prev_size (unsorted)", "malloc(): invalid next->prev_inuse (unsorted)",
    "malloc(): unsorted double linked list corrupted", "malloc(): largebin double linked list corrupted (nextsize)",
    "malloc(): largebin double linked list corrupted (bk)", "malloc(): corrupted unsorted chunks",
    "malloc(): corrupted unsorted chunks 2", "malloc(): corrupted top size",
    # unlink_chunk, malloc_consolidate
    "corrupted size vs. prev_size", "corrupted double-linked list", "corrupted double-linked list (not small)",
    "corrupted size vs. prev_size in fastbins", "malloc_consolidate(): invalid chunk size",
    "malloc_consolidate(): unaligned fastbin chunk detected",
    # realloc, mremap, the tcache at a thread's end, mallinfo and malloc_info
    "realloc(): invalid pointer", "realloc(): invalid old size", "realloc(): invalid next size",
    "mremap_chunk(): invalid pointer", "tcache_thread_shutdown(): unaligned tcache chunk detected",
    "int_mallinfo(): unaligned fastbin chunk detected", "__malloc_info(): unaligned fastbin chunk detected",
    # malloc-check.c (MALLOC_CHECK_)
    "malloc_check_get_size: memory corruption", "malloc: top chunk is corrupt",
    # an assertion of the allocator's (2.35 on; earlier, ``malloc.c:N: sysmalloc: Assertion``)
    "Fatal glibc error: malloc assertion failure",
)
#: glibc's words when its allocator finds the heap corrupted: the messages above, an
#: allocator assertion of a release before 2.35, and any other words beginning with
#: the name of one of the allocator's functions (another release's wording)
HEAP_WORDS = re.compile(
    "|".join(re.escape(words) for words in sorted(GLIBC_HEAP_WORDS, key=len, reverse=True))
    + r"|malloc\.c:\d+: \w+: Assertion"
    + r"|\b(?:free|malloc|calloc|realloc|memalign|munmap_chunk|mremap_chunk|malloc_consolidate|_int_free"
      r"|_int_malloc|_int_realloc|tcache_thread_shutdown|int_mallinfo|__malloc_info)\(\): ")

#: the deaths a corrupted heap is met by: glibc's abort with its words; a plain abort
#: (the words lost, or an allocator other than glibc's that aborts without them); a
#: plain fault, in a pointer the corruption overwrote.  Not SIGBUS (a page of a mapped
#: file past its end, or a misaligned access where the hardware refuses one), nor SIGILL
#: or SIGFPE: on x86-64 a wild pointer faults with SIGSEGV, and taking those for a
#: corruption would confirm one bug by another's death
HEAP_DEATHS = (HEAP_CORRUPTION,) + HEAP_SIGNALS
#: what a death's detail (``fuzzer.isolation.process.died_detail``) says before its name
DIED = "process died: "


def death_name(how: str, said: str = "") -> str:
    """The death class of a process that ended ``how`` (a signal's name, ``exit code
    N``) after writing ``said`` on stderr."""
    return HEAP_CORRUPTION if how in HEAP_SIGNALS and HEAP_WORDS.search(said) else how


def dies_so(recorded: str, seen: str) -> bool:
    """Whether a process that died ``seen`` died the death ``recorded``: each a death's
    name (``death_name``) or a text that ends in one after ``process died: `` (a bug
    class, a detail), the texts otherwise alike.

    The same death, or, where one of the two is a heap corruption, any of
    :data:`HEAP_DEATHS`: a corrupted heap dies when, and how, the allocator or a later
    access notices, so glibc's words in one process and a plain SIGSEGV in another are
    one corruption, either way round.  Two plain signals are not: nothing says either
    was a corrupted heap.  The bug class keeps how the finding died first."""
    if recorded == seen:
        return True
    before, _, name = recorded.rpartition(DIED)
    seen_before, _, seen_name = seen.rpartition(DIED)
    return (before == seen_before and HEAP_CORRUPTION in (name, seen_name)
            and name in HEAP_DEATHS and seen_name in HEAP_DEATHS)
