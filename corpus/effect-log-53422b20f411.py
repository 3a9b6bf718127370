"""dcefuzz finding effect-log-53422b20f411: effect-log

[effect-log] binding 0, event 0 (e_log@1) input 0: saw different data: values differ: max error 1.17 vs eager's 5.96e-08 (allowed 0.00018); at flat index 3 compiled 0.831903 eager -0.336193 fp64 -0.336193

Found with torch 2.13.0+cpu on cpu.
Run: python effect-log-53422b20f411.py [cpu|cuda]   exit 1: reproduces, 0: does not
"""


import sys


import torch

TRACE = {"calls": [], "effects": []}


def _hit(op, site, *tensors, effect=False):
    """Record that call site `site` of `op` ran; effects keep a copy of their inputs."""
    TRACE["calls"].append((op, site))
    if effect:
        TRACE["effects"].append((op, site, tuple(t.detach().to("cpu", copy=True) for t in tensors)))


def _register_ordered(opdef):
    """Mark a custom op as an ORDERED side effect on any torch from 2.11 on."""
    if hasattr(opdef, "register_effect"):
        from torch._library.effects import EffectType
        opdef.register_effect(EffectType.ORDERED)
    else:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _register_effectful_op(opdef._opoverload, _EffectType.ORDERED)


@torch.library.custom_op("dcefuzz::m_scale", mutates_args=("a",))
def m_scale(a: torch.Tensor, site: int) -> None:
    _hit("m_scale", site)
    a.mul_(0.5).add_(1.0)


@m_scale.register_fake
def _(a, site):
    return None


@torch.library.custom_op("dcefuzz::e_log", mutates_args=())
def e_log(x: torch.Tensor, site: int) -> None:
    _hit("e_log", site, x, effect=True)


@e_log.register_fake
def _(x, site):
    return None


_register_ordered(e_log)


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


def program(x0):
    s0 = x0.shape[0]
    v0 = x0.narrow(0, 1, s0 - 1)
    v1 = v0.narrow(1, 1, s0 - 1)
    torch.ops.dcefuzz.m_scale(v1, 0)
    torch.ops.dcefuzz.e_log(x0, 1)
    return ()


KIND = 'effect-log'
BINDINGS = [{"s0": 3}]
INPUT_DIMS = [["s0", "s0"]]
INPUT_SEED = 2615027987049043279
DEAD_PURE_SITES = set()


def make_inputs(i, device, dtype):
    """Inputs for binding i, drawn exactly as dcefuzz draws them."""
    g = torch.Generator().manual_seed(INPUT_SEED + i)
    sizes = [[eval(d, {}, dict(BINDINGS[i])) for d in dims] for dims in INPUT_DIMS]
    return [torch.randn(s, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)
            for s in sizes]


def run(fn, i, device, dtype=torch.float32):
    TRACE["calls"].clear()
    TRACE["effects"].clear()
    xs = make_inputs(i, device, dtype)
    try:
        out = [t.detach().clone() for t in fn(*xs)]
        error = None
    except Exception as exc:  # the compiled function may raise
        out, error = None, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    return dict(out=out, inputs=xs, effects=list(TRACE["effects"]), calls=list(TRACE["calls"]),
                error=error)


def check(i, eager, ref, comp):
    """Every clause of the dcefuzz contract, for binding i: (kind, message) pairs."""
    if comp["error"]:
        return [("compile-error/runtime-error", comp["error"])]
    found = []
    if len(comp["out"]) != len(eager["out"]):
        found.append(("wrong-output", "number of returned values differs"))
    for k, (r, e, c) in enumerate(zip(ref["out"], eager["out"], comp["out"])):
        why = tensor_difference(r, e, c)
        if why:
            found.append(("wrong-output", f"output {k}: {why}"))
    for k, (r, e, c) in enumerate(zip(ref["inputs"], eager["inputs"], comp["inputs"])):
        why = tensor_difference(r, e, c)
        if why:
            found.append(("wrong-mutation", f"input x{k}: {why}"))
    seq_e = [(op, site) for op, site, _ in eager["effects"]]
    seq_c = [(op, site) for op, site, _ in comp["effects"]]
    if seq_e != seq_c:
        found.append(("effect-log", f"effect events eager {seq_e} vs compiled {seq_c}"))
    else:
        for n, (r, e, c) in enumerate(zip(ref["effects"], eager["effects"], comp["effects"])):
            for rt, et, ct in zip(r[2], e[2], c[2]):
                why = tensor_difference(rt, et, ct)
                if why:
                    found.append(("effect-log", f"event {n} {e[0]}@{e[1]} saw other data: {why}"))
    ran_dead = sorted({site for op, site in comp["calls"] if site in DEAD_PURE_SITES})
    if ran_dead:
        found.append(("missed-dce", f"dead pure call sites executed: {ran_dead}"))
    return found


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else ("cuda" if torch.cuda.is_available() else "cpu")
    print(f"torch {torch.__version__}, device {device}, looking for: {KIND}")
    compiled = torch.compile(program, dynamic=True)
    reproduced = False
    for i, binding in enumerate(BINDINGS):
        eager = run(program, i, device)
        if eager["error"]:
            print(f"binding {i} {binding}: eager raised ({eager['error']}); not a valid repro")
            return 2
        ref = run(program, i, device, torch.float64)
        comp = run(compiled, i, device)
        for kind, message in check(i, eager, ref, comp):
            print(f"binding {i} {binding}: [{kind}] {message}")
            reproduced |= KIND in kind.split("/")
    print("REPRODUCES" if reproduced else "does not reproduce")
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
