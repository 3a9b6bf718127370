"""A failed lookup: which of the raising frame's locals name the key it missed.

An error's bug class is where torch raised it (``fuzzer.judge.raised``), and the
bisector names the pass that raises it; two causes that fail the same lookup at the
same place share both.  Inductor keys its tables by name (``name_to_buf``,
``name_to_ancestors``), so a ``KeyError`` there says a node was looked up before it
was recorded, and *which* node it was is the cause: in ``Scheduler.compute_ancestors``
a node that depends on its own buffer (a self-edge, pytorch/pytorch#189271) misses
its own name, held by the loop's ``node`` as well as by ``dep_node_name``, while a
node placed before the one it reads (a dependency cycle) misses a later node's name,
held by ``dep_node_name`` alone.  Both raise ``KeyError`` in ``compute_ancestors``
after ``decompose_auto_functionalized``, and both show with static shapes; only the
frame tells them apart.

So for a ``KeyError`` triage compiles the case once more, catches the error itself
and reads its raising frame: the names of the locals that hold the missing key (the
key itself, or an object whose ``get_name()`` or ``name`` is the key).  The names
join the key (:attr:`fuzzer.triage.culprit.Culprit.key`).  A coincidence (some other
local that happens to name the key) can only split a cause in two, the side triage
prefers to two causes in one.
"""

from __future__ import annotations

from fuzzer.judge import execute
from fuzzer.judge.contract import BugClass
from fuzzer.judge.observe import caches_off
from fuzzer.judge.raised import SITE_PREFIX, raised_at, raising_frame
from fuzzer.triage.probe import Probe

#: the errors whose missing key is read: a lookup's (``KeyError``)
LOOKUP_ERRORS = ("KeyError",)


def _site(bug_class: BugClass) -> str:
    """Where torch raised an error, as its bug class says (without its kind, and
    without the message that goes with an error raised below Python)."""
    symptoms = bug_class.symptoms
    return symptoms[0].split(": ")[0] if symptoms else ""


def missed(bug_class: BugClass) -> bool:
    """Whether ``bug_class`` is an error of a failed lookup raised by torch."""
    return any(_site(bug_class).startswith(f"{SITE_PREFIX}{name} in ") for name in LOOKUP_ERRORS)


def named_by(exc: BaseException) -> tuple[str, ...]:
    """The locals of ``exc``'s raising frame that hold its missing key, sorted (none:
    not a lookup, no frame of torch, or no local names it)."""
    found = raising_frame(exc)
    if found is None:
        return ()
    inner, frame, _ = found
    if type(inner).__name__ not in LOOKUP_ERRORS or len(inner.args) != 1:
        return ()
    key = inner.args[0]
    return tuple(sorted(name for name, value in frame.f_locals.items() if _names(value, key)))


def _names(value, key) -> bool:
    """Whether ``value`` is ``key``, or an IR node or buffer whose name it is."""
    try:
        if isinstance(value, (str, int)):
            return type(value) is type(key) and value == key
        get_name = getattr(type(value), "get_name", None)
        if callable(get_name) and get_name(value) == key:
            return True
        return isinstance(getattr(value, "name", None), str) and value.name == key
    except Exception:  # a half-built node asked its name: it names nothing
        return False


def probe_lookup(probe: Probe, backend: str) -> tuple[str, ...]:
    """One more compile of ``probe``'s case on ``backend`` (the dynamic mode the
    finding was judged in, the on-disk caches off), its bindings run in order until
    one raises; the locals that name the missing key, if the error raised is the
    probe's bug class.  Counted against the probe's budget."""
    probe.check()
    probe.calls += 1
    case = probe.case
    execute.fresh_compile_state()
    with caches_off():
        compiled = execute.compile_fn(case, backend)
        for index in range(len(case.bindings)):
            try:
                compiled(*execute.make_inputs(case, index, probe.device))
            except Exception as exc:  # the compile error the finding showed, or another
                return named_by(exc) if raised_at(exc)[0] == _site(probe.bug_class) else ()
    return ()
