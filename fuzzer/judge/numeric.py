"""Numeric judgement of one tensor: is the compiled value clearly worse than eager's?

Depends on torch and the standard library only, because ``repro`` pastes this
module's text into every standalone script: a repro judges numbers exactly as the
fuzzer did.

Eager and compiled float32 results are both measured against the same program run
in float64 (the fp64 reference), and every element is judged on its own: an element
is wrong only when compiled is neither close to eager (``assert_close``'s float32
defaults) nor within a few times eager's own error at that element.  Non-finite
values are judged by pattern: compiled may not turn a finite value NaN/inf (or back)
where eager agrees with the fp64 reference.

Compared with PyTorch's accuracy minifier (``torch._dynamo.utils.same`` with
``fp64_ref``), which passes a tensor that is allclose to eager at tol 1e-4 or whose
whole-tensor RMSE against fp64 is within 2-3x eager's RMSE plus 1e-5, this rule is
per element: one wrong element is neither diluted by the tensor's size nor excused
by a large eager error elsewhere.  On an element that is wrong while the rest are
fine it is at least as strict as ``same``, except that the ``SCALE_SLACK`` floor
can be looser on elements much smaller than the tensor's largest value.

A tensor of a fixed dtype (integers, bool, float8: a quantiser's codes) is compared
exactly (:func:`fixed_difference`): programs make one only from values eager and
compiled share bit for bit (``fuzzer.program.exact``), so there is no rounding to
allow for.
"""

from dataclasses import dataclass, replace

import torch

#: Compiled may carry this many times eager's own error against fp64 at the same
#: element.  ``same`` uses 3.0 for tensors under 1000 elements (2.0 for larger
#: float32 ones, whose RMSE averages noise away); per element nothing is averaged,
#: so the larger factor.
ERROR_MULTIPLIER = 3.0
#: Relative slack on the element's fp64 value: ``same``'s default ``tol`` (1e-4),
#: about 800 float32 ulps, room for a different but legitimate float32 formula.
RELATIVE_SLACK = 1e-4
#: Absolute slack: ``same``'s ``tol / 10`` (1e-5), for elements at or near zero.
ABSOLUTE_SLACK = 1e-5
#: Floor proportional to the tensor's magnitude (max |fp64| over judged elements):
#: reassociating a float32 reduction moves its result by some ulps of its
#: *summands*, which for a cancelling element (result much smaller than its terms)
#: is far beyond RELATIVE_SLACK of the result; the tensor's largest value stands in
#: for the summands' scale.  64 * float32 eps (~7.6e-6) is the worst-case bound for
#: reordering a sum of ~64 such terms and the typical (random-walk, ~sqrt(n) ulps)
#: error for thousands, yet stays ~1300x below a 1% error at the tensor's scale.
SCALE_SLACK = 64 * torch.finfo(torch.float32).eps
#: ``torch.testing.assert_close``'s float32 default rtol: compiled this close to
#: eager at an element (about 10 ulps) is acceptable whatever the reference says.
RTOL_CLOSE = 1.3e-6
#: ``torch.testing.assert_close``'s float32 default atol, the same test's floor near 0.
ATOL_CLOSE = 1e-5


#: The float16 and bfloat16 counterparts of (RTOL_CLOSE, ATOL_CLOSE, RELATIVE_SLACK,
#: SCALE_SLACK): ``assert_close``'s defaults for the dtype (about two ulps), two ulps
#: of slack on the fp64 value, and, only where no noisy reference could be made, 4
#: ulps of the tensor's magnitude for a cancelling element.  With noisy references
#: (``noisy``) the allowance of each element is scaled by what rounding carries to
#: it instead: a compiled kernel keeps float32 between ops where eager rounds after
#: each one, so compiled is mostly nearer the reference than eager, and a cancelling
#: element (small, made of large terms) gets the room its terms' rounding needs,
#: while a small element made of small terms gets little.
LOW_PRECISION = {
    torch.float16: (1e-3, 1e-5, 2 * torch.finfo(torch.float16).eps, 4 * torch.finfo(torch.float16).eps),
    torch.bfloat16: (1.6e-2, 1e-5, 2 * torch.finfo(torch.bfloat16).eps, 4 * torch.finfo(torch.bfloat16).eps),
}


@dataclass(frozen=True)
class Tolerance:
    """The room the rule gives a compiled element (each the constant above of its name):
    it is acceptable where ``|c-e| <= atol_close + rtol_close*|e|`` or
    ``|c-r| <= multiplier*|e-r| + rel*|r| + scale_slack*max|r| + abs_``."""

    multiplier: float = ERROR_MULTIPLIER
    rel: float = RELATIVE_SLACK
    abs_: float = ABSOLUTE_SLACK
    scale_slack: float = SCALE_SLACK
    rtol_close: float = RTOL_CLOSE
    atol_close: float = ATOL_CLOSE


def is_fixed(dtype) -> bool:
    """A dtype no program computes in: integers, bool, float8 (its values are exact)."""
    return not dtype.is_floating_point or dtype.itemsize == 1


def fixed_difference(eager, compiled):
    """None when a fixed-dtype ``compiled`` equals ``eager`` element for element (NaN
    equal to NaN), else a one-line reason."""
    e = eager.detach().to("cpu").flatten()
    c = compiled.detach().to("cpu").flatten()
    if e.dtype.is_floating_point:
        e, c = e.to(torch.float32), c.to(torch.float32)
        differ = ~((e == c) | (torch.isnan(e) & torch.isnan(c)))
    else:
        differ = e != c
    if not bool(differ.any()):
        return None
    i = int(differ.nonzero()[0])
    return (f"values differ at {int(differ.sum())} of {e.numel()} elements of a {str(eager.dtype).removeprefix('torch.')} "
            f"tensor (compared exactly); first at flat index {i}: compiled {c[i].item()} eager {e[i].item()}")


def close_tolerances(dtype) -> tuple[float, float]:
    """(rtol, atol) of ``torch.testing.assert_close`` for ``dtype``: this close is close."""
    if dtype in LOW_PRECISION:
        return LOW_PRECISION[dtype][:2]
    return RTOL_CLOSE, ATOL_CLOSE


def tensor_difference(ref64, eager, compiled, tolerance: Tolerance = Tolerance(), noisy=()):
    """None when ``compiled`` is acceptable, else a one-line reason.

    Element k (finite in ref, eager and compiled) is acceptable as ``tolerance`` says
    (:class:`Tolerance`; float16's and bfloat16's own rtol_close, atol_close, rel and
    scale_slack in those dtypes).  In float16 and bfloat16, given ``noisy`` references
    (the float64 program with the dtype's rounding made up after every op,
    ``observe.NoisyReference``), the second rule reads
    ``|c-r| <= multiplier*max(|e-r|, |n-r| for each n) + rel*|r| + abs_``: the room at
    each element is what rounding can carry there, not a share of the tensor's largest
    value.
    """
    if tuple(compiled.shape) != tuple(eager.shape):
        return f"shape {tuple(compiled.shape)} != eager {tuple(eager.shape)}"
    if compiled.dtype != eager.dtype:
        return f"dtype {compiled.dtype} != eager {eager.dtype}"
    if eager.numel() == 0:
        return None
    if is_fixed(eager.dtype):
        return fixed_difference(eager, compiled)
    tolerance, spread = _for_dtype(tolerance, ref64, eager, noisy)
    r = ref64.detach().to("cpu", torch.float64).flatten()
    e = eager.detach().to("cpu", torch.float64).flatten()
    c = compiled.detach().to("cpu", torch.float64).flatten()
    fe, fc, fr = torch.isfinite(e), torch.isfinite(c), torch.isfinite(r)
    why = _nonfinite_difference(e, c, fe, fc, fr)
    if why is not None:
        return why
    both = fe & fc & fr
    if not bool(both.any()):
        return None
    return _value_difference(r, e, c, both, tolerance, spread)


def _for_dtype(tolerance: Tolerance, ref64, eager, noisy):
    """(the room of ``eager``'s dtype, what rounding carries to each element or None):
    in float16 and bfloat16 their own room, and with noisy references of its shape the
    largest distance of one from the reference at each element, in place of the
    tensor-wide floor."""
    if eager.dtype not in LOW_PRECISION:
        return tolerance, None
    rtol_close, atol_close, rel, scale_slack = LOW_PRECISION[eager.dtype]
    tolerance = replace(tolerance, rtol_close=rtol_close, atol_close=atol_close, rel=rel, scale_slack=scale_slack)
    usable = [n for n in noisy if tuple(n.shape) == tuple(eager.shape)]
    if not usable:
        return tolerance, None
    r64 = ref64.detach().to("cpu", torch.float64).flatten()
    spread = torch.stack([(n.detach().to("cpu", torch.float64).flatten() - r64).abs() for n in usable]).amax(0)
    return replace(tolerance, scale_slack=0.0), spread


def _nonfinite_difference(e, c, fe, fc, fr):
    """Where compiled turns a value non-finite (or back, or to another non-finite one)
    and eager matches the fp64 reference's finiteness there: the reason, else None."""
    same_nonfinite = (torch.isnan(e) & torch.isnan(c)) | (~fe & ~fc & (e == c))
    odd = (fe != fc) | (~fe & ~same_nonfinite)
    # only where eager itself matches the fp64 reference's finiteness is eager trusted
    trusted = odd & (fe == fr)
    if bool(trusted.any()):
        i = int(trusted.nonzero()[0])
        return (f"non-finite mismatch at flat index {i}: compiled {c[i].item()} "
                f"vs eager {e[i].item()}")
    return None


def _value_difference(r, e, c, both, tolerance: Tolerance, spread):
    """The reason the elements finite in all three (``both``) break the rule, naming
    the worst, or None."""
    idx = both.nonzero().flatten()
    r, e, c = r[idx], e[idx], c[idx]
    close = (c - e).abs() <= tolerance.atol_close + tolerance.rtol_close * e.abs()
    err = (c - r).abs()
    own = (e - r).abs()
    if spread is not None:
        own = torch.maximum(own, torch.nan_to_num(spread[idx], nan=0.0, posinf=0.0))
    allowed = (tolerance.multiplier * own + tolerance.rel * r.abs()
               + tolerance.scale_slack * r.abs().max() + tolerance.abs_)
    bad = ~close & (err > allowed)
    if not bool(bad.any()):
        return None
    n = int(bad.sum())
    worst = int(torch.where(bad, err / allowed, torch.zeros_like(err)).argmax())
    i = int(idx[worst])
    return (f"values differ at {n} of {int(both.sum())} elements; worst at flat index {i}: "
            f"compiled {c[worst].item():.9g} eager {e[worst].item():.9g} "
            f"fp64 {r[worst].item():.9g} (error {err[worst].item():.3g}, "
            f"allowed {allowed[worst].item():.3g})")


def bitwise_equal(a, b):
    """Exact equality, NaN equal to NaN: how eager is checked against itself."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a, b) or torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))


def agrees(expected, got) -> bool:
    """``got`` is ``expected`` up to ``assert_close``'s tolerances for its dtype: the
    same shape and dtype, the same non-finite pattern, and every finite element within
    ``atol + rtol * |expected|``.  This is all that can be asked where the float64
    reference took another path and so says nothing of the error one may expect."""
    if tuple(got.shape) != tuple(expected.shape) or got.dtype != expected.dtype:
        return False
    if got.numel() == 0:
        return True
    if is_fixed(got.dtype):
        return fixed_difference(expected, got) is None
    rtol, atol = close_tolerances(got.dtype)
    a = expected.detach().to("cpu", torch.float64).flatten()
    b = got.detach().to("cpu", torch.float64).flatten()
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    if bool((fa != fb).any()) or not bool(((a == b) | torch.isnan(a) & torch.isnan(b) | fa).all()):
        return False
    return bool(((b - a).abs()[fa] <= atol + rtol * a.abs()[fa]).all())
