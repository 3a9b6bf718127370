"""The contract as an assertion, for a user's own tests.

``assert_contract(case)`` runs a case eagerly and through ``torch.compile`` as a
campaign does (every binding, each divergence confirmed on a fresh compile) and
raises :class:`ContractViolation`, an ``AssertionError``, when the compiler broke
the contract: its message holds what diverged and the standalone repro script,
so a failing Hypothesis example reads as a bug report.  With
``fuzzer.strategies.cases`` it makes a property test of a user's op library::

    @settings(max_examples=20, deadline=None)
    @given(cases(ops=[mylib]))
    def test_compile_keeps_my_ops(case):
        assert_contract(case)
"""

from __future__ import annotations

from fuzzer.program.ir import Case

#: trial statuses that say nothing either way: eager cannot run the case or
#: disagrees with itself, a divergence did not recur on a fresh compile, or the
#: program was not wholly compiled; a property test must not count them as passed
UNJUDGED = ("invalid", "nondeterministic", "flaky", "untested")


class CannotJudge(Exception):
    """The case says nothing of the compiler either way (:data:`UNJUDGED`: ``status``
    says which, ``reason`` why).  Not an ``AssertionError``: nothing was shown broken,
    and nothing was shown to hold either."""

    def __init__(self, status: str, reason: str):
        super().__init__(f"cannot judge this case ({status}): {reason}")
        self.status, self.reason = status, reason


class ContractViolation(AssertionError):
    """The compiled program broke the contract.  Its message holds the divergences
    and the brief repro (``fuzzer.render.brief``); ``entry`` is the unshrunk finding
    (``fuzzer.corpus.entry.Entry``: ``fuzzer.corpus.store.save`` adds it to a corpus),
    ``repro`` its full standalone script (the contract carried, every binding)."""

    def __init__(self, message: str, entry, repro: str, brief: str):
        super().__init__(message)
        self.entry, self.repro, self.brief = entry, repro, brief


def assert_contract(case: Case, device: str = "cpu", backend: str = "inductor",
                    performance: bool = False) -> None:
    """Raise :class:`ContractViolation` when ``torch.compile`` breaks the contract on
    ``case``.  ``missed-dce`` (a performance finding) counts only with ``performance``.
    A case that cannot be judged (:data:`UNJUDGED`) is rejected through Hypothesis's
    ``reject`` when Hypothesis runs it (it is not an example that passed), and raises
    :class:`CannotJudge` anywhere else."""
    from fuzzer.corpus.entry import Entry, Origin
    from fuzzer.judge import contract, kinds
    from fuzzer.judge.trial import run_trial

    result = run_trial(case, device, backend)
    findings = [f for f in result.findings if performance or f.kind != contract.MISSED_DCE]
    if not findings:
        if result.status in UNJUDGED:
            _reject()
            raise CannotJudge(result.status, _why(result))
        return
    finding = findings[0]
    entry = Entry.build(finding.kind, finding.case, finding.divergences,
                        Origin(seed=None, device=finding.device, backend=finding.backend))
    short = kinds.brief(entry)
    lines = [(f"torch.compile broke the contract: {finding.kind} "
              f"({', '.join(f.kind for f in findings)} in all)")]
    lines += [f"  {d.line()}" for d in finding.divergences[:5]]
    lines += ["", "repro (torch only; it fails while the bug is there):", "", short]
    raise ContractViolation("\n".join(lines), entry, kinds.script(entry), short)


def _why(result) -> str:
    if result.verdict.reason:
        return result.verdict.reason
    if result.verdict.untested:
        gap = result.verdict.untested[0]
        return f"{gap.reason}: {gap.message.splitlines()[0] if gap.message else ''}"
    return f"{', '.join(result.flaky_kinds)} did not recur on a fresh compile" if result.flaky_kinds else ""


def _reject() -> None:
    try:
        from hypothesis import reject
        from hypothesis.control import currently_in_test_context
    except ImportError:  # pragma: no cover - hypothesis is a dependency
        return
    if currently_in_test_context():
        reject()
