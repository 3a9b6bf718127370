"""The :class:`Fault` record: one injectable compiler regression."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fuzzer.faults import _patching
from fuzzer.judge.targets import COMPILE, TARGETS

EFFECT_DROPPED = "effect-dropped"
MUTATION_LOST = "mutation-lost"
EFFECTS_REORDERED = "effects-reordered"
DEAD_PURE_KEPT = "dead-pure-kept"
COMPILE_ERROR = "compile-error"
CAST_DROPPED = "cast-dropped"
#: a vmap rule's batch dim put elsewhere than the rule says
BATCH_DIM_LOST = "batch-dim-lost"
#: a write and a read of one memory in the wrong order (an index write's values loaded
#: while it stores into them)
WRITE_ORDER = "write-order"
STALE_KEY = "stale-key"
STALE_GUARD = "stale-guard"
BUG_CLASSES = (EFFECT_DROPPED, MUTATION_LOST, EFFECTS_REORDERED, DEAD_PURE_KEPT, COMPILE_ERROR, CAST_DROPPED,
               BATCH_DIM_LOST, WRITE_ORDER, STALE_KEY, STALE_GUARD)
#: the classes whose faults come in a dynamic-shapes-only variant too: a cache key's
#: fault is the same whatever the shapes, and so is a guard on an opaque object
SHAPE_CLASSES = tuple(c for c in BUG_CLASSES if c not in (STALE_KEY, STALE_GUARD))

#: Builds the replacement of every target from the targets' current values.
Builder = Callable[[Callable[[str], Any]], dict[str, Any]]


class FaultUnavailable(RuntimeError):
    """The running torch lacks an internal the fault patches."""


@dataclass(frozen=True)
class Fault:
    """A small, documented monkeypatch of torch compiler internals.

    ``targets`` are the attributes the patch replaces (``"module:Attr.path"``);
    ``build`` receives a lookup of their current values and returns the
    replacements, so wrappers close over the originals they delegate to.
    """

    name: str
    bug_class: str
    expected_kind: str
    dynamic_only: bool
    description: str
    targets: tuple[str, ...]
    build: Builder
    #: (feature, weight) pairs a self-test draws its programs with: a fault confined to
    #: one feature's path (``fuzzer.faults.scoped``) is met only by such programs
    features: tuple = ()
    #: the campaign time the self-test gives it by default: some three times what its
    #: detection took on a 2-core machine (docs/faults.md), so a stock torch passes
    seconds: float = 60.0
    #: part of ``dcefuzz selftest --quick``: one fault per bug class, each found in
    #: seconds, for a check that fits in CI
    quick: bool = False
    #: the targets whose pipelines it plants a regression in (``fuzzer.judge.targets``'
    #: names, each registered), each shown to meet it: ``selftest --target NAME`` runs its
    #: campaign through NAME, and a plain self-test through the first
    pipelines: tuple[str, ...] = (COMPILE,)

    def __post_init__(self) -> None:
        unknown = [name for name in self.pipelines if name not in TARGETS]
        if unknown or not self.pipelines:
            raise ValueError(f"fault {self.name}: pipelines {unknown or '()'} name no target; known: "
                             f"{', '.join(TARGETS)}")

    @classmethod
    def twins(cls, build: Callable[[bool], Builder], scope: str, dynamic_targets: tuple[str, ...] = (),
              **fields: Any) -> tuple[Fault, Fault]:
        """A fault and its ``-dynamic`` twin (``dynamic_only``), built the same way.

        ``fields`` are the plain fault's (``name``, ``bug_class``, ``expected_kind``,
        ``targets``, and any of ``quick``, ``pipelines``, ...), its ``description`` with
        ``{scope}`` where the twin's says when it misbehaves (``scope``).  ``build(dynamic)``
        is each one's builder.  The twin patches ``dynamic_targets`` too and keeps the
        defaults of the fields that say how a self-test runs it (``quick``, ``pipelines``,
        ``features``, ``seconds``).
        """
        description = fields.pop("description")
        plain = cls(**fields, dynamic_only=False, description=description.format(scope=""), build=build(False))
        twin = cls(name=f"{plain.name}-dynamic", bug_class=plain.bug_class, expected_kind=plain.expected_kind,
                   dynamic_only=True, description=description.format(scope=scope),
                   targets=plain.targets + dynamic_targets, build=build(True))
        return plain, twin

    def unavailable(self) -> str | None:
        """None when every target exists in this torch; else a one-line reason."""
        return _patching.missing(self.targets)

    def install(self) -> Callable[[], None]:
        """Apply the patch (compile caches off, dynamo reset); return the undo."""
        import torch

        reason = self.unavailable()
        if reason is not None:
            raise FaultUnavailable(f"{self.name}: {reason}")
        replacements = self.build(_patching.current)
        unknown = set(replacements) - set(self.targets)
        if unknown:
            raise AssertionError(f"{self.name} replaces undeclared targets {sorted(unknown)}")
        restore_caches = _patching.caches_off()
        try:
            unpatch = _patching.apply(replacements)
        except BaseException:
            restore_caches()
            raise
        torch._dynamo.reset()
        done = False

        def undo() -> None:
            nonlocal done
            if done:
                return
            done = True
            unpatch()
            restore_caches()
            torch._dynamo.reset()

        return undo
