"""The user's ops a campaign may call: loaded, audited, chosen.

``--ops`` loads each module (``fuzzer.user.library``), audits each op
(``fuzzer.user.audit``) and keeps those without a finding; ``--only-user-ops`` leaves
dcefuzz's own custom ops out (the ordinary tensor ops stay: they are what a user's
ops are combined with).  The result is the generator's ``OpSet``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzzer.program.generate import BUILTIN, OpSet
from fuzzer.user import audit, library


@dataclass
class Selection:
    libraries: list[library.Library] = field(default_factory=list)
    problems: list[audit.Problem] = field(default_factory=list)
    ops: OpSet = BUILTIN

    @property
    def findings(self) -> list[audit.Problem]:
        return [p for p in self.problems if p.severity == audit.FINDING]

    @property
    def skipped(self) -> list[audit.Problem]:
        return [p for p in self.problems if p.severity == audit.SKIP]

    @property
    def left_out(self) -> list[str]:
        """Ops a campaign does not call: a declaration finding, or a reason to skip it."""
        return sorted({p.op for p in self.findings + self.skipped})

    def table(self) -> list[dict]:
        """One row per op of the libraries: its kind, whether it is used, and why not."""
        rows = []
        finding = {p.op for p in self.findings}
        for lib in self.libraries:
            for op in lib.ops:
                mine = [p for p in self.problems if p.op == op.qualname]
                status = ("finding" if op.qualname in finding else
                          "skipped" if any(p.severity == audit.SKIP for p in mine) else "used")
                shown = [p for p in mine if p.severity != audit.WARNING] if status != "used" else mine
                rows.append({"op": op.qualname, "module": lib.ref.name, "kind": op.kind, "kinds": list(op.kinds),
                             "signature": op.gufunc.text or None, "status": status,
                             "why": "; ".join(p.message for p in shown)})
            for qualname, why in lib.skipped:
                rows.append({"op": qualname, "module": lib.ref.name, "kind": None, "kinds": [], "signature": None,
                             "status": "skipped", "why": why})
        return rows

    def lines(self) -> list[str]:
        """What a user reads before the campaign: what was loaded, what was wrong."""
        out = []
        for lib in self.libraries:
            out.append(f"ops {lib.ref.name} ({lib.ref.root}): " + ", ".join(
                f"{op.qualname} [{op.kind}{', ' + op.gufunc.text if op.gufunc.text else ''}{_rules(op)}]"
                for op in lib.ops))
            out += [f"skipped {q}: {why}" for q, why in lib.skipped]
        out += [f"declaration {p.line}" for p in self.problems]
        if self.left_out:
            out.append("left out of the campaign: " + ", ".join(self.left_out))
        return out

    def to_json(self) -> list[dict]:
        return [p.to_json() for p in self.problems]


def _rules(op) -> str:
    """The transforms' rules its library registered, as ``lines`` names them."""
    said = [name for name, has in (("vmap rule", op.vmap_rule), ("autocast rule", op.autocast_rule)) if has]
    return "".join(", " + name for name in said)


def select(specs, only: bool = False, device: str = "cpu", check: bool = True,
           log=None) -> Selection:
    """Load and audit the modules ``specs`` (``--ops``); ``only``: no built-in custom ops."""
    if not specs:
        if only:
            raise library.LoadError("--only-user-ops needs --ops")
        return Selection()
    libraries = [library.load(spec) for spec in specs]
    problems: list[audit.Problem] = []
    adjusted = []
    for lib in libraries:
        for op in list(lib.ops):
            if not check:
                continue
            if log is not None:
                log(f"checking the declaration of {op.qualname}")
            checked = audit.audit(op, device)
            problems += checked.problems
            if checked.op != op:
                library.adjust(checked.op)
                adjusted.append(library.adjustment(checked.op))
    selection = Selection(libraries, problems)
    kept = tuple(q for lib in libraries for q in lib.qualnames if q not in selection.left_out)
    if not kept and only:
        raise library.LoadError(f"no user op is left to fuzz: {len({p.op for p in selection.findings})} with a "
                                f"declaration finding, {len({p.op for p in selection.skipped})} skipped "
                                "(dcefuzz check-ops says why)")
    imports = tuple(lib.ref.imported for lib in libraries)
    nonempty = tuple(q for q in kept if library.op(q).nonempty)
    selection.ops = OpSet(builtin=not only, user=kept, imports=imports, adjusted=tuple(adjusted), nonempty=nonempty)
    return selection
