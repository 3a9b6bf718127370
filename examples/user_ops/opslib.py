"""A small custom-op library, as a user of dcefuzz would write one.

Honest ops of each kind (pure, mutating, ORDERED-effectful), one with a gufunc
signature, and one that lies: ``clamp_into`` writes its ``out`` argument without
declaring it in ``mutates_args``.  ``dcefuzz run --ops examples/user_ops/opslib.py``
reports that lie as a ``declaration`` finding and fuzzes the rest.
"""

import torch

#: what each op's tensors look like (default: one shape for all)
DCEFUZZ_SIGNATURES = {"opslib::matmul": "(m,n),(n,p)->(m,p)"}
#: the values a scalar argument takes (default: dcefuzz's, by type)
DCEFUZZ_SCALARS = {"opslib::scaled_tanh": {"alpha": (0.5, 2.0)}}

#: what ``log_sum`` saw, call by call: its side effect
LOG: list[float] = []


@torch.library.custom_op("opslib::scaled_tanh", mutates_args=())
def scaled_tanh(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return torch.tanh(x * alpha)


@scaled_tanh.register_fake
def _(x, alpha):
    return torch.empty_like(x)


@torch.library.custom_op("opslib::matmul", mutates_args=())
def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


@matmul.register_fake
def _(a, b):
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.custom_op("opslib::accumulate", mutates_args=("acc",))
def accumulate(acc: torch.Tensor, x: torch.Tensor) -> None:
    acc.add_(x * 0.5)


@accumulate.register_fake
def _(acc, x):
    return None


@torch.library.custom_op("opslib::log_sum", mutates_args=())
def log_sum(x: torch.Tensor) -> None:
    LOG.append(float(x.sum()))


@log_sum.register_fake
def _(x):
    return None


def _ordered(opdef):
    """Register an ORDERED effect on any torch from 2.11 on."""
    if hasattr(opdef, "register_effect"):
        from torch._library.effects import EffectType
        opdef.register_effect(EffectType.ORDERED)
    else:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _register_effectful_op(opdef._opoverload, _EffectType.ORDERED)


_ordered(log_sum)


@torch.library.custom_op("opslib::clamp_into", mutates_args=())
def clamp_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Dishonest: writes ``out`` but declares no mutation."""
    out.copy_(x.clamp(-1, 1))
    return x.clamp(-1, 1)


@clamp_into.register_fake
def _(x, out):
    return torch.empty_like(x)
