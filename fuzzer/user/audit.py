"""The declaration check: is each of a user's ops what it says it is?

The contract judges the compiler by what an op declares.  An op that writes an
argument it does not declare, or returns an alias of an input, gives the compiler
leave to break it, and a campaign would blame the compiler for the op's own lie.  So
every user op is audited before a campaign, and one that fails is a ``declaration``
finding and left out.

``torch.library.opcheck`` runs first-hand tests of schema, fake impl, autograd
registration and AOT dispatch with dynamic shapes; it is run on inputs with every
named size 0, 1 and 2.  What it does not look for is checked by running the op
eagerly on clones and comparing: an argument written but not declared, a declared
write that never happens (a warning: an op may write only sometimes), an output
that shares storage with an input.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.user.declared import UserOp

#: every named size of the opcheck inputs takes each of these in turn
SIZES = (0, 1, 2)
#: the eager checks also run with the named sizes all different (2, 3, 4, ...), so
#: an op that mixes up two dims shows
DISTINCT_FROM = 2
#: the dims of a same-shape op's tensors, per size
SAME_SHAPE_TAIL = 3

FINDING = "finding"
WARNING = "warning"


@dataclass(frozen=True)
class Problem:
    """One way an op is not what it declares."""

    op: str
    check: str
    message: str
    argument: str | None = None
    severity: str = FINDING

    def to_json(self) -> dict:
        return {"op": self.op, "check": self.check, "argument": self.argument,
                "severity": self.severity, "message": self.message}

    @property
    def line(self) -> str:
        return f"{self.severity} {self.op}" + (f" ({self.argument})" if self.argument else "") + f": {self.message}"


def input_sets(op: UserOp) -> list[tuple[str, list[tuple[int, ...]]]]:
    """(label, shapes of the tensor arguments) of every input set the check uses."""
    n = len(op.tensors)
    out = []
    for size in SIZES:
        shapes = op.gufunc.shapes(lambda letter, s=size: s)
        out.append((f"sizes {size}", shapes or [(size, SAME_SHAPE_TAIL)] * n))
    letters = op.gufunc.letters
    distinct = op.gufunc.shapes(lambda letter: DISTINCT_FROM + letters.index(letter))
    out.append(("distinct sizes", distinct or [(DISTINCT_FROM + 1, DISTINCT_FROM)] * n))
    return out


def _arguments(op: UserOp, shapes, device: str, seed: int):
    import torch

    gen = torch.Generator().manual_seed(seed)
    tensors = iter(torch.randn(s, generator=gen).to(device) for s in shapes)
    args, kwargs = [], {}
    for arg in op.arguments:
        if arg.is_tensor:
            value = next(tensors)
        elif arg.values:
            value = arg.values[0]
        else:
            continue
        if arg.keyword:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return args, kwargs


def _same(a, b) -> bool:
    import torch

    return a.shape == b.shape and bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def _tensors_of(args, kwargs):
    import torch

    return [v for v in list(args) + list(kwargs.values()) if isinstance(v, torch.Tensor)]


def _results(out) -> list:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    return [o for o in (out or ()) if isinstance(o, torch.Tensor)]


def audit(op: UserOp, device: str = "cpu", opcheck: bool = True) -> list[Problem]:
    """Every problem of ``op``: findings (it is left out of a campaign) and warnings."""
    problems: list[Problem] = []
    names = [a.name for a in op.tensors]
    never_written = {names[i] for i in op.mutates}
    for n, (label, shapes) in enumerate(input_sets(op)):
        args, kwargs = _arguments(op, shapes, device, seed=n)
        before = [t.clone() for t in _tensors_of(args, kwargs)]
        try:
            out = op.overload()(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure of the op is what is reported
            problems.append(Problem(op.qualname, "eager", f"fails on {label} {shapes}: "
                                    f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
            return problems
        after = _tensors_of(args, kwargs)
        for i, (old, new) in enumerate(zip(before, after)):
            if _same(old, new):
                continue
            if i in op.mutates:
                never_written.discard(names[i])
            elif not any(p.argument == names[i] and p.check == "undeclared-write" for p in problems):
                problems.append(Problem(op.qualname, "undeclared-write",
                                        f"writes argument {names[i]!r} (on {label} {shapes}) but does not "
                                        "declare it: add it to mutates_args (schema Tensor(a!))", names[i]))
        for r, result in enumerate(_results(out)):
            for i, arg in enumerate(after):
                if result.numel() and arg.numel() and \
                        result.untyped_storage().data_ptr() == arg.untyped_storage().data_ptr():
                    problems.append(Problem(op.qualname, "aliased-output",
                                            f"result {r} shares storage with argument {names[i]!r} "
                                            f"(on {label} {shapes}): a custom op's results must be fresh "
                                            "tensors", names[i]))
    for name in sorted(never_written):
        problems.append(Problem(op.qualname, "unused-declaration",
                                f"declares it writes {name!r} but no call wrote it", name, WARNING))
    if opcheck and not any(p.severity == FINDING for p in problems):
        problems += _opcheck(op, device)
    return problems


def _opcheck(op: UserOp, device: str) -> list[Problem]:
    import torch

    problems = []
    for n, (label, shapes) in enumerate(input_sets(op)[:len(SIZES)]):
        args, kwargs = _arguments(op, shapes, device, seed=100 + n)
        try:
            results = torch.library.opcheck(op.overload(), args, kwargs, raise_exception=False)
        except Exception as exc:  # noqa: BLE001 - opcheck itself failed: say so, as a finding
            results = {"opcheck": exc}
        for test, outcome in results.items():
            if outcome == "SUCCESS" or any(p.check == test for p in problems):
                continue
            text = str(outcome).strip().splitlines()
            problems.append(Problem(op.qualname, test, f"torch.library.opcheck {test} fails on {label} "
                                    f"{shapes}: {text[0] if text else type(outcome).__name__}"))
    return problems
