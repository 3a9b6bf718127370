"""The declaration check: is each of a user's ops what it says it is?

The contract judges the compiler by what an op declares.  An op that writes an
argument it does not declare, or returns an alias of an input it does not declare (a
tagged op declares the written argument it returns), gives the compiler
leave to break it, and a campaign would blame the compiler for the op's own lie.  So
every user op is audited before a campaign, and one that fails is a ``declaration``
finding and left out.

``torch.library.opcheck`` runs first-hand tests of schema, fake impl, autograd
registration and AOT dispatch with dynamic shapes; it is run on inputs with every
named size 0, 1 and 2.  What it does not look for is checked by running the op
eagerly on clones and comparing: an argument written but not declared, a declared
write that never happens (a warning: an op may write only sometimes), an output
that shares storage with an input.

An op may lie only for some values of its scalars (it writes its input when
``flag=True``, returns its input itself when ``k == 3``), and programs draw every
value, so every check runs on every *variant*: the scalars at their first values,
and each other value of each scalar with the rest at their first.  A value on which
the op fails eagerly is dropped from what programs draw (a warning); the op is left
out only when no value works.  An op that registers a backward formula is run
backward once, so programs only differentiate through a backward that runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fuzzer.user.declared import UserOp
from fuzzer.user.inputs import SIZES, arguments, describe, input_sets, variants
from fuzzer.user.strides import fake_strides_differ

FINDING = "finding"
WARNING = "warning"
#: the op is left out, and it is no lie: no kernel here, or dcefuzz's inputs or types
#: do not suit it (the advice says what to give)
SKIP = "skip"
#: dispatch keys whose kernel runs an op on each device type
KERNEL_KEYS = {"cpu": ("CPU",), "cuda": ("CUDA",)}
COMPOSITE_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd",
                  "CompositeExplicitAutogradNonFunctional")
#: opcheck tests whose failure is evidence the declaration is false
LIES = ("test_schema", "test_autograd_registration", "test_faketensor")
#: opcheck tests that also fail on torch's own bugs: a lie only when eager or the fake
#: impl disagrees with the declaration too
AOT_TESTS = ("test_aot_dispatch_static", "test_aot_dispatch_dynamic")


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


@dataclass(frozen=True)
class Audited:
    """What the check found of one op, and the op as programs may call it: with the
    scalar values it failed on dropped, and no backward where its backward fails."""

    op: UserOp
    problems: tuple[Problem, ...] = ()

    @property
    def findings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == FINDING]

    @property
    def skipped(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == SKIP]


def _same(a, b) -> bool:
    import torch

    return a.shape == b.shape and bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def _tensors_of(args, kwargs):
    import torch

    values = list(args) + list(kwargs.values())
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]  # a Tensor[]'s elements, in order
    return [v for v in flat if isinstance(v, torch.Tensor)]


def _results(out) -> list:
    """The op's tensor results (a None in a ``Tensor?`` result's place is left out)."""
    return [o for o in _positions(out) if o is not None]


def _positions(out) -> list:
    """Each result in its place: a tensor, or None where a ``Tensor?`` result was None."""
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    return [o if isinstance(o, torch.Tensor) else None for o in (out or ())]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _eager(op: UserOp, values: dict, device: str, problems: list[Problem], never_written: set) -> str | None:
    """The eager checks of one variant, their problems added to ``problems``; why the
    op failed on it (None: it ran on every input set)."""
    names = [a.name for a in op.tensors]
    where = f" with {describe(values)}" if values else ""
    for n, (label, shapes) in enumerate(input_sets(op)):
        args, kwargs = arguments(op, shapes, device, seed=n, values=values)
        before = [t.clone() for t in _tensors_of(args, kwargs)]
        try:
            out = op.overload()(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any failure of the op is what is reported
            return f"fails on {label} {shapes}{where}: {_first_line(exc)}"
        after = _tensors_of(args, kwargs)
        for i, (old, new) in enumerate(zip(before, after)):
            if _same(old, new):
                continue
            if i in op.mutates:
                never_written.discard(names[i])
            elif not any(p.argument == names[i] and p.check == "undeclared-write" for p in problems):
                problems.append(Problem(op.qualname, "undeclared-write",
                                        f"writes argument {names[i]!r} (on {label} {shapes}{where}) but does not "
                                        "declare it: add it to mutates_args (schema Tensor(a!))", names[i]))
        for r, result in enumerate(_results(out)):
            for i, arg in enumerate(after):
                if op.aliases and op.aliases[r] == i:
                    continue  # the written argument its schema says it returns (a tagged op)
                if result.numel() and arg.numel() and \
                        result.untyped_storage().data_ptr() == arg.untyped_storage().data_ptr() and \
                        not any(p.check == "aliased-output" and p.argument == names[i] for p in problems):
                    problems.append(Problem(op.qualname, "aliased-output",
                                            f"result {r} shares storage with argument {names[i]!r} "
                                            f"(on {label} {shapes}{where}): a custom op's results must be fresh "
                                            "tensors", names[i]))
    return None


#: how the eager checks' reason for a failure on empty tensors begins
EMPTY_FAILURE = f"fails on sizes {SIZES[0]} "


def _failures(op: UserOp, every: list[dict], device: str, problems: list, never_written: set) -> dict[int, str]:
    """Why the op fails on each variant it fails on (by index in ``every``)."""
    failed = {}
    for k, values in enumerate(every):
        why = _eager(op, values, device, problems, never_written)
        if why is not None:
            failed[k] = why
    return failed


def _kept_values(op: UserOp, failed: dict[int, str]) -> dict[str, tuple] | None:
    """Each scalar's values that work, given the variants that failed (by index in
    ``variants``); None when none works.  A value fails when its variant does; when the
    first values' variant fails, the scalar whose other values work holds the bad one."""
    every = variants(op)
    if not failed:
        return {a.name: a.values for a in op.scalars}
    if len(failed) == len(every):
        return None
    kept, k = {}, 1
    base_failed = 0 in failed
    for arg in op.scalars:
        own = range(k, k + len(arg.values) - 1)
        k += len(arg.values) - 1
        values = [v for j, v in zip(own, arg.values[1:]) if j not in failed]
        # the first value works unless the base failed and this scalar's others rescue it
        first_bad = base_failed and bool(values)
        kept[arg.name] = tuple(([] if first_bad else [arg.values[0]]) + values)
    if any(not v for v in kept.values()):
        return None
    return kept


def audit(op: UserOp, device: str = "cpu", opcheck: bool = True) -> Audited:
    """Every problem of ``op``: findings (it is left out of a campaign) and warnings,
    and the op as programs may call it."""
    problems: list[Problem] = []
    if not has_kernel(op.qualname, device):
        return Audited(op, (Problem(op.qualname, "no-kernel", f"no kernel for {device} (registered for "
                                    f"{', '.join(kernels(op.qualname)) or 'nothing'}): fuzz it where it runs "
                                    "(--device)", severity=SKIP),))
    names = [a.name for a in op.tensors]
    never_written = {names[i] for i in op.mutates}
    every = variants(op)
    failed = _failures(op, every, device, problems, never_written)
    if any(why.startswith(EMPTY_FAILURE) for why in failed.values()):
        # where it refuses empty tensors and runs on the rest, programs calling it keep their sizes >= 1
        nonempty = dataclasses.replace(op, nonempty=True)
        again = _failures(nonempty, every, device, problems, never_written)
        if len(again) < len(failed):
            problems.append(Problem(op.qualname, "nonempty", f"{next(iter(failed.values()))}: programs calling "
                                    "it keep every size at 1 or more", severity=WARNING))
            op, failed = nonempty, again
    kept = _kept_values(op, failed)
    if kept is None:
        advice = ("give its signature" if op.gufunc.same_shape else "check its signature") + \
            " or its scalars' values (DCEFUZZ_SIGNATURES, DCEFUZZ_SCALARS or a hints file)"
        problems.append(Problem(op.qualname, "eager", f"{next(iter(failed.values()))}: the op refuses dcefuzz's "
                                f"inputs, which is no lie: {advice}", severity=SKIP))
        return Audited(op, tuple(problems))
    for arg in op.scalars:
        for v in arg.values:
            if v not in kept[arg.name]:
                why = next((w for k, w in failed.items() if every[k].get(arg.name) == v), "")
                problems.append(Problem(op.qualname, "value-dropped",
                                        f"programs will not pass {arg.name}={v!r}: the op {why}", arg.name, WARNING))
    op = _with_values(op, kept)
    refused = _refuses_float64(op, device)
    if refused is not None:
        problems.append(Problem(op.qualname, "no-reference", f"refuses float64 inputs ({refused}), so a program "
                                "calling it has no float64 reference to judge its values by (docs/contract.md): "
                                "it is left out", severity=SKIP))
        return Audited(op, tuple(problems))
    taken = _results_taken(op, device, problems)
    if taken is None:
        return Audited(op, tuple(problems))
    op = taken
    lied = fake_strides_differ(op, device)
    if lied is not None:
        problems.append(Problem(op.qualname, "fake-strides", lied))
    for name in sorted(never_written):
        problems.append(Problem(op.qualname, "unused-declaration",
                                f"declares it writes {name!r} but no call wrote it", name, WARNING))
    if op.backward:
        broken = _backward_fails(op, device)
        if broken is not None:
            problems.append(Problem(op.qualname, "backward", f"its backward fails ({broken}): programs will not "
                                    "take gradients through it", severity=WARNING))
            op = dataclasses.replace(op, backward=False)
    if opcheck and not any(p.severity == FINDING for p in problems):
        problems += _opcheck(op, device)
    return Audited(op, tuple(problems))


def _results_taken(op: UserOp, device: str, problems: list[Problem]) -> UserOp | None:
    """``op`` with the results a program can take (of its own dtype or a fixed one) and
    their dtypes, a result left out said; None where it has results and none can be
    taken (or its base variant failed: the eager checks said why)."""
    dtypes, wrong = _result_dtypes(op, device)
    if op.results and dtypes is None:
        return None
    takes = tuple(i for i in range(op.results) if i not in wrong and (op.takes is None or i in op.takes))
    if op.results and not takes:
        problems.append(Problem(op.qualname, "result-dtype", f"no result a program can take (each is "
                                f"{'; '.join(sorted(set(wrong.values())))}): programs carry tensors of their own "
                                "dtype or a fixed one (integers, float8), shaped as the signature gives",
                                severity=SKIP))
        return None
    if wrong:
        problems.append(Problem(op.qualname, "result-dtype", f"programs take only results {list(takes)}: the others "
                                f"are {', '.join(sorted(set(wrong.values())))}", severity=WARNING))
    if op.results:
        op = dataclasses.replace(op, takes=takes if takes != tuple(range(op.results)) else None,
                                 result_dtypes=dtypes if any(d is not None for d in dtypes) else None)
    return op


def _with_values(op: UserOp, kept: dict[str, tuple]) -> UserOp:
    arguments = tuple(dataclasses.replace(a, values=kept[a.name]) if a.name in kept and a.values else a
                      for a in op.arguments)
    return dataclasses.replace(op, arguments=arguments)


def _result_dtypes(op: UserOp, device: str) -> tuple[tuple[str | None, ...] | None, dict[int, str]]:
    """Each result's dtype as programs type it (None: the inputs', float32; else a
    fixed dtype), and the results, by index, that programs cannot take, with why:
    float64, another shape than the signature gives
    (typing would be wrong about it), or None.  (None, {}) when the op fails here."""
    from fuzzer.program.dtypes import FIXED_DTYPES, is_exact

    label, shapes = input_sets(op)[-1]
    args, kwargs = arguments(op, shapes, device, seed=300)
    try:
        results = _positions(op.overload()(*args, **kwargs))
    except Exception:  # noqa: BLE001 - the eager checks already ran this op on these inputs
        return None, {}
    want = [tuple(int(d) for d in dims) for dims in
            op.gufunc.results([tuple(str(n) for n in s) for s in shapes], len(results))]
    dtypes: list[str | None] = []
    wrong = {}
    for i, r in enumerate(results):
        name = str(r.dtype).removeprefix("torch.") if r is not None else None
        dtypes.append(name if name in FIXED_DTYPES and name != "float32" else None)
        if r is None:
            wrong[i] = "None"
        elif is_exact(name) and not op.opaque:
            wrong[i] = (f"{name}, made by an op the compiler computes itself ({op.compiled.value}), so it "
                        "cannot be compared exactly (docs/contract.md)")
        elif name not in FIXED_DTYPES:
            wrong[i] = name
        elif tuple(r.shape) != want[i]:
            wrong[i] = f"shaped {tuple(r.shape)} where the signature gives {want[i]} (give its signature)"
    return tuple(dtypes), wrong


def _refuses_float64(op: UserOp, device: str) -> str | None:
    """Why the op fails on float64 tensors where it runs on float32 ones (None: it runs):
    the float64 reference hands it float64 (its fixed-dtype tensors stay as they are)."""
    if all(a.dtype is not None for a in op.tensors):
        return None
    _, shapes = input_sets(op)[-1]
    args, kwargs = arguments(op, shapes, device, seed=500, dtype="float64")
    try:
        op.overload()(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the refusal is what is reported
        return _first_line(exc)
    return None


def _backward_fails(op: UserOp, device: str) -> str | None:
    """Why running the op's backward once fails (None: it runs)."""
    import torch

    label, shapes = input_sets(op)[-1]
    args, kwargs = arguments(op, shapes, device, seed=200, grad=True)
    try:
        results = [r for r in _results(op.overload()(*args, **kwargs)) if r.is_floating_point()]
        loss = sum(r.sum() for r in results if r.requires_grad)
        if not isinstance(loss, torch.Tensor):
            return "no result requires grad"
        loss.backward()
    except Exception as exc:  # noqa: BLE001 - the op's own failure is what is reported
        return _first_line(exc)
    return None


def kernels(qualname: str) -> list[str]:
    """The dispatch keys of the kernels the op has, of those that run it somewhere."""
    import torch

    keys = [k for keys in KERNEL_KEYS.values() for k in keys] + list(COMPOSITE_KEYS) + ["Meta"]
    return [k for k in keys if torch._C._dispatch_has_kernel_for_dispatch_key(qualname, k)]


def has_kernel(qualname: str, device: str) -> bool:
    """Whether the op runs on ``device``'s type: a kernel for it, or a composite one."""
    import torch

    wanted = KERNEL_KEYS.get(torch.device(device).type, ()) + COMPOSITE_KEYS
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(qualname, k) for k in wanted)


def _opcheck(op: UserOp, device: str) -> list[Problem]:
    """opcheck's failures: a lie where the test is about the declaration (schema,
    autograd registration, fake impl); an AOT dispatch failure with those passing
    and the eager checks clean may be torch's own, so it leaves the op out as a skip
    that says so; opcheck itself failing to run is a skip too."""
    problems = opcheck_problems(op, device)
    refused = _fake_refuses(op, device)
    if refused is not None:
        problems = [p for p in problems if p.check != "test_faketensor"] + [Problem(
            op.qualname, "test_faketensor", f"its fake impl refuses dcefuzz's inputs ({refused}), which is no lie: "
            "give the dtypes or shapes it wants (a hints file)", severity=SKIP)]
    lied = any(p.check in LIES and p.severity == FINDING for p in problems)
    out = []
    for p in problems:
        if p.check in AOT_TESTS and refused is not None:
            p = Problem(p.op, p.check, p.message + ": the fake impl refuses these inputs too", p.argument, SKIP)
        elif p.check in AOT_TESTS and not lied:
            p = Problem(p.op, p.check, p.message + ": the schema and the fake impl pass, so this may be torch's "
                        "bug rather than a false declaration", p.argument, SKIP)
        elif p.check == "opcheck":
            p = Problem(p.op, p.check, p.message, p.argument, SKIP)
        out.append(p)
    return out


def _fake_refuses(op: UserOp, device: str) -> str | None:
    """Why the op's fake impl raises on dcefuzz's inputs (None: it runs).  A fake impl
    that checks its inputs (``torch._check(A.dtype == torch.uint8)``) and refuses ours
    says what it wants, not something false: metadata it gets wrong is the lie, and
    opcheck's fake test reports that."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    label, shapes = input_sets(op)[1]
    args, kwargs = arguments(op, shapes, device, seed=400)
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake_args = [mode.from_tensor(a) if hasattr(a, "dtype") and hasattr(a, "shape") else a for a in args]
        fake_kwargs = {k: mode.from_tensor(v) if hasattr(v, "dtype") and hasattr(v, "shape") else v
                       for k, v in kwargs.items()}
        try:
            op.overload()(*fake_args, **fake_kwargs)
        except Exception as exc:  # noqa: BLE001 - the refusal is what is reported
            return _first_line(exc)
    return None


def opcheck_problems(op: UserOp, device: str) -> list[Problem]:
    import torch

    problems = []
    for values in variants(op):
        where = f" with {describe(values)}" if values else ""
        for n, (label, shapes) in enumerate(input_sets(op)[:len(SIZES)]):
            args, kwargs = arguments(op, shapes, device, seed=100 + n, values=values)
            try:
                results = torch.library.opcheck(op.overload(), args, kwargs, raise_exception=False)
            except Exception as exc:  # noqa: BLE001 - opcheck itself failed: say so, as a finding
                results = {"opcheck": exc}
            for test, outcome in results.items():
                if outcome == "SUCCESS" or any(p.check == test for p in problems):
                    continue
                text = str(outcome).strip().splitlines()
                message = (f"torch.library.opcheck {test} fails on {label} {shapes}{where}: "
                           f"{text[0] if text else type(outcome).__name__}")
                if _unsupported_dtype(outcome) and test == "test_schema":
                    # the eager checks (undeclared writes, aliased results) stand in for it
                    problems.append(Problem(op.qualname, test, message + ": a kernel the check itself runs has no "
                                            "version for this dtype, which says nothing of the declaration; the "
                                            "eager checks of its writes and results stand in", severity=WARNING))
                elif _unsupported_dtype(outcome):
                    problems.append(Problem(op.qualname, test, message + ": a kernel the check itself runs has no "
                                            "version for this dtype, which says nothing of the declaration",
                                            severity=SKIP))
                else:
                    problems.append(Problem(op.qualname, test, message))
    return problems


def _unsupported_dtype(outcome) -> bool:
    """Whether opcheck failed because a kernel has no version for a dtype (a float8
    tensor compared by a test's own ``mul``): its limit, not evidence of a lie."""
    seen = 0
    while isinstance(outcome, BaseException) and seen < 8:
        if isinstance(outcome, NotImplementedError) and "not implemented for" in str(outcome):
            return True
        outcome, seen = outcome.__cause__ or outcome.__context__, seen + 1
    return False

