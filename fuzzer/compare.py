"""Numeric judgement of one tensor: is the compiled value clearly worse than eager's?

Depends on torch only, because ``repro`` pastes this module's text into every
standalone script: a repro judges numbers exactly as the fuzzer did.

The rule follows PyTorch's accuracy minifier (``torch._dynamo.utils.same`` with an
fp64 reference): both eager and compiled float32 results are measured against the
same program run in float64; compiled is wrong only when its error clearly exceeds
eager's own.  Non-finite values are judged by pattern: compiled may not turn a
finite value NaN/inf (or back) where eager agrees with the fp64 reference.
"""

import torch

ERROR_MULTIPLIER = 3.0
RELATIVE_SLACK = 1e-4
ABSOLUTE_SLACK = 1e-5


def tensor_difference(ref64, eager, compiled,
                      multiplier=ERROR_MULTIPLIER, rel=RELATIVE_SLACK, abs_=ABSOLUTE_SLACK):
    """None when ``compiled`` is acceptable, else a one-line reason."""
    if tuple(compiled.shape) != tuple(eager.shape):
        return f"shape {tuple(compiled.shape)} != eager {tuple(eager.shape)}"
    if compiled.dtype != eager.dtype:
        return f"dtype {compiled.dtype} != eager {eager.dtype}"
    if eager.numel() == 0:
        return None
    r = ref64.detach().to("cpu", torch.float64)
    e = eager.detach().to("cpu", torch.float64)
    c = compiled.detach().to("cpu", torch.float64)
    fe, fc, fr = torch.isfinite(e), torch.isfinite(c), torch.isfinite(r)
    same_nonfinite = (torch.isnan(e) & torch.isnan(c)) | (~fe & ~fc & (e == c))
    odd = (fe != fc) | (~fe & ~same_nonfinite)
    # only where eager itself matches the fp64 reference's finiteness is eager trusted
    trusted = odd & (fe == fr)
    if bool(trusted.any()):
        i = int(trusted.flatten().nonzero()[0])
        return (f"non-finite mismatch at flat index {i}: compiled {c.flatten()[i].item()} "
                f"vs eager {e.flatten()[i].item()}")
    both = fe & fc & fr
    if not bool(both.any()):
        return None
    ref_err = (e - r)[both].abs().max().item()
    res_err = (c - r)[both].abs().max().item()
    scale = r[both].abs().max().item()
    allowed = multiplier * ref_err + rel * scale + abs_
    if res_err > allowed:
        i = int(((c - r).abs() * both).flatten().argmax())
        return (f"values differ: max error {res_err:.3g} vs eager's {ref_err:.3g} "
                f"(allowed {allowed:.3g}); at flat index {i} compiled {c.flatten()[i].item():.6g} "
                f"eager {e.flatten()[i].item():.6g} fp64 {r.flatten()[i].item():.6g}")
    return None


def bitwise_equal(a, b):
    """Exact equality, NaN equal to NaN: how eager is checked against itself."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a, b) or torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))
