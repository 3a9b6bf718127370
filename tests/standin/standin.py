"""A stand-in for a library dcefuzz's user does not own: registered through
``torch.library`` the way kernel libraries do, with no hints of dcefuzz's in it.

- ``scale_to`` takes a ``ScalarType`` with a default (stored as ``int`` in the schema);
- ``blocksum`` takes a ``List[int]`` block size that must fit the input's shape;
- ``cuda_only`` has a CUDA kernel only;
- ``rowdot`` fails on inputs of the wrong shape (it is a matrix-vector product);
- ``exclude_me`` is honest, and left out by the hints file;
- ``quant8`` quantises rows to ``int8`` codes and a scale, and ``dequant8`` takes them
  back (an ``int8`` argument: a dtype the schema does not say, the hints do);
- ``f32_only`` refuses float64 inputs, as many kernels do;
- ``rowmax`` refuses empty tensors (a reduction with no identity), as many do.
"""

import torch

LIB = torch.library.Library("standin", "DEF")
LIB.define("scale_to(Tensor x, ScalarType dtype=6) -> Tensor")
LIB.define("blocksum(Tensor x, int[] block) -> Tensor")
LIB.define("cuda_only(Tensor x) -> Tensor")
LIB.define("rowdot(Tensor a, Tensor v) -> Tensor")
LIB.define("exclude_me(Tensor x) -> Tensor")
LIB.define("quant8(Tensor x) -> (Tensor, Tensor)")
LIB.define("dequant8(Tensor codes, Tensor scale) -> Tensor")
LIB.define("f32_only(Tensor x) -> Tensor")
LIB.define("rowmax(Tensor x) -> Tensor")


def _scale_to(x, dtype=torch.float32):
    return x * torch.finfo(dtype).eps * 1e6  # torch.finfo refuses an integer dtype


def _blocksum(x, block):
    rows, cols = block
    if cols == 0:
        return x.clone()
    if rows != 1 or x.shape[-1] % cols:
        raise ValueError(f"block {block} does not tile a {tuple(x.shape)} input")
    return x.reshape(-1, cols).sum(-1, keepdim=True).expand(-1, cols).reshape(x.shape).clone()


def _rowdot(a, v):
    if a.dim() != 2 or v.dim() != 1:
        raise ValueError(f"rowdot takes a matrix and a vector, not {tuple(a.shape)} and {tuple(v.shape)}")
    return a @ v


def _quant8(x):
    scale = torch.cat([x.abs(), x.new_zeros(x.shape[:-1] + (1,))], -1).amax(-1, keepdim=True).clamp_min(1e-6) / 127
    return (x / scale).round().clamp(-127, 127).to(torch.int8), scale.to(x.dtype)


def _dequant8(codes, scale):
    if codes.dtype != torch.int8:
        raise ValueError(f"codes must be int8, got {codes.dtype}")
    return codes.to(scale.dtype) * scale


def _f32_only(x):
    if x.dtype == torch.float64:
        raise TypeError("f32_only has no float64 kernel")
    return x * 2


for name, fn in (("scale_to", _scale_to), ("blocksum", _blocksum), ("rowdot", _rowdot),
                 ("exclude_me", lambda x: x.sin()), ("quant8", _quant8), ("dequant8", _dequant8),
                 ("f32_only", _f32_only), ("rowmax", lambda x: x.amax(0, keepdim=True).expand_as(x).clone())):
    LIB.impl(name, fn, "CPU")
LIB.impl("cuda_only", lambda x: x.cos(), "CUDA")

torch.library.register_fake("standin::scale_to", lambda x, dtype=torch.float32: torch.empty_like(x), lib=LIB)
torch.library.register_fake("standin::blocksum", lambda x, block: x.new_empty(x.shape), lib=LIB)  # contiguous
torch.library.register_fake("standin::cuda_only", lambda x: torch.empty_like(x), lib=LIB)
torch.library.register_fake("standin::rowdot", lambda a, v: a.new_empty(a.shape[:1]), lib=LIB)
torch.library.register_fake("standin::exclude_me", lambda x: torch.empty_like(x), lib=LIB)
torch.library.register_fake("standin::quant8", lambda x: (torch.empty_like(x, dtype=torch.int8),
                                                          x.new_empty(x.shape[:-1] + (1,))), lib=LIB)
torch.library.register_fake("standin::dequant8", lambda codes, scale: torch.empty_like(codes, dtype=scale.dtype),
                            lib=LIB)
torch.library.register_fake("standin::f32_only", lambda x: torch.empty_like(x), lib=LIB)
torch.library.register_fake("standin::rowmax", lambda x: x.new_empty(x.shape), lib=LIB)  # as the kernel
