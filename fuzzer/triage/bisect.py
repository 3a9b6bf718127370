"""Inside a stage: which subsystem and which application of it a bug needs.

torch's ``CompilerBisector`` (``torch._inductor.compiler_bisector``) keeps a table
of subsystems per backend (for Inductor: pre-grad, joint-graph and post-grad pass
applications, a few config changes, cudagraphs, lowerings) and, given a function
that says whether the bug is absent, turns each subsystem off, then bisects the
number of its applications down to the one the bug needs.  Its result names the
subsystem and, where it bisected, the application (a post-grad pass's name, the
aten op a lowering lowered).

Its limits, read from its source: it has no scheduler subsystem (fusion and the
scheduler's reorderings are probed by ``fuzzer.triage.switches``); it walks the
backends itself from ``eager`` on, which we already know from the stage walk, so
backends before the known stage answer "absent" without compiling; it keeps its
state in files of a temporary folder and prints as it goes (captured here); and
an application count that differs between compiles (our probes compile afresh,
so they do not) would mislead it.  Where the installed torch lacks it, the result
is None.

It also asks the same question again and again. When no subsystem's removal clears
the bug, ``do_bisect`` (2.11 to 2.14.1) advances from the subsystem it started the
walk at, not the one the walk ended at, and walks the rest of the list again from
there: with Inductor's nine subsystems that is 9 + 8 + ... + 1 = 45 compiles where
nine answer everything, most of the 60-call triage of an error the bisector pins on
nothing.  A compile with a subsystem turned off gives the same answer each time, so
each is asked once (:func:`bisect` remembers them), and the result is the one the
repeated walk reaches.  One of the nine changes nothing in the default mode (the
cudagraph wrapping, :func:`inert`): its answer is the stage walk's, without a compile.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from fuzzer.triage.probe import Probe

#: bisector subsystems whose application is a named pass (the rest name program ops,
#: or are a config change): theirs is part of every bug's blame (``Culprit.blame``)
PASS_SUBSYSTEMS = ("pre_grad_passes", "joint_graph_passes", "post_grad_passes")
#: the subsystem whose application is the program op it lowered: part of a wrong
#: value's blame (an error's is where it is raised)
LOWERINGS = "lowerings"


class _Named(Exception):
    """The subsystem phase named a subsystem whose application no key reads."""

    def __init__(self, subsystem: str):
        super().__init__(subsystem)
        self.subsystem = subsystem


@dataclass(frozen=True)
class Bisection:
    """The subsystem a bug needs, and the application that completes it (None when the
    bisector only got as far as the backend or a config change)."""

    subsystem: str | None
    application: str | None


def _bisector():
    try:
        from torch._inductor.compiler_bisector import BACKENDS, CompilerBisector
    except ImportError:
        return None, None
    if not hasattr(CompilerBisector, "do_bisect"):
        return None, None
    return CompilerBisector, BACKENDS


def available() -> bool:
    return _bisector()[0] is not None


#: how torch's bisector says the bug was gone where its own search expects it (the
#: subsystem turned back on to count its applications, after turning it off had
#: fixed the bug): a bug that is no function of that subsystem's count
INCONSISTENT = "Function succeeded with 'find_max_bounds' status"


def bisects(stage: str) -> bool:
    """Whether :func:`bisect` compiles anything on ``stage``: the installed torch has the
    bisector, and it has subsystems for that backend (``eager`` and ``aot_eager`` have
    none: their bisection is None without a compile)."""
    bisector, backends = _bisector()
    return bisector is not None and bool(backends.get(stage))


def inert(backend: str, subsystem: str | None) -> bool:
    """Whether turning ``subsystem`` off leaves the compile as it is, so its answer is the
    stage walk's (the bug shows) without a compile: the cudagraph wrapping where the
    compile wraps nothing in CUDA graphs (``config.triton.cudagraphs`` off, as in
    ``torch.compile``'s default mode: Inductor reads the bisector's switch for it only in
    ``output_code.cudagraph_post_compile`` and its partition twin, run only where
    cudagraphs are on)."""
    if (backend, subsystem) != ("inductor", "cudagraphs"):
        return False
    from torch._inductor import config

    return not config.triton.cudagraphs


def bisect(probe: Probe, stage: str, applications: bool = True,
           keyed: tuple[str, ...] = PASS_SUBSYSTEMS) -> Bisection | None:
    """Bisect the subsystems of ``stage`` (the first backend showing the bug).

    None: no bisector in this torch, or a stage it has no subsystems for.  Raises
    :class:`~fuzzer.triage.probe.BudgetSpent` when the probe's budget runs out.

    Unless ``applications``, a subsystem not in ``keyed`` (by default a pass's,
    ``PASS_SUBSYSTEMS``; a wrong value's key reads the lowering too) is not bisected
    down to its application, which the bug's key does not read: the subsystem phase
    alone names it (the application is None), one compile for its upper bound and the
    bisection's halvings less.
    """
    bisector, backends = _bisector()
    if bisector is None or not backends.get(stage):
        return None
    order = list(backends)
    before = set(order[:order.index(stage)]) if stage in order else set()
    # (backend, subsystem turned off or None) -> absent; the stage walk saw the bug at
    # the stage with nothing turned off
    answers: dict[tuple[str, str | None], bool] = {(stage, None): False}

    def absent() -> bool:
        backend = bisector.get_backend()
        if backend in before:
            return True  # the stage walk saw no bug there
        subsystem = bisector.get_subsystem()
        if subsystem is not None and bisector.get_run_state(backend, subsystem) != "test_disable":
            if not applications and subsystem not in keyed:
                raise _Named(subsystem)  # its disabling cleared the bug: that is all a key reads
            return not probe.shows(backend)  # a count being bisected: asked once anyway
        if (backend, subsystem) not in answers:
            answers[backend, subsystem] = False if inert(backend, subsystem) else not probe.shows(backend)
        return answers[backend, subsystem]

    enabled = bisector.bisection_enabled
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            result = bisector.do_bisect(absent)
        except _Named as named:
            return Bisection(named.subsystem, None)
        except RuntimeError as exc:
            if not str(exc).startswith(INCONSISTENT):
                raise
            return Bisection(None, None)  # the bug came back with the subsystem counted: nothing to name
        finally:
            bisector.bisection_enabled = enabled
            bisector.delete_bisect_status()
            bisector.in_process_cache = None
    if result is None or result.backend != stage:
        return Bisection(None, None)
    application = result.debug_info if result.debug_info != result.subsystem else None
    return Bisection(result.subsystem, application)
