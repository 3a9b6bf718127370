"""Running a case (``fuzzer.judge.execute``): the inputs of each binding, eager runs,
and nothing compiled where eager fails; no Inductor compile."""

import dataclasses

import torch
from helpers import case, prog

from fuzzer.judge import execute
from fuzzer.program.ir import Mode

P = prog({"x0": ("s0", "s1"), "x1": ("s1",)}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                              ("p_sin", ["x1"], "v1", {"site": 1}),
                                              ("m_addto", ["x1", "v1"], None, {"site": 2})], outputs=["v0"])


def test_each_binding_gets_its_own_seeded_inputs_in_the_programs_dtype_and_layout():
    c = case(P, [{"s0": 2, "s1": 3}, {"s0": 4, "s1": 5}])
    first, second = execute.make_inputs(c, 0, "cpu"), execute.make_inputs(c, 1, "cpu")
    assert [t.shape for t in first] == [(2, 3), (3,)] and [t.shape for t in second] == [(4, 5), (5,)]
    assert all(torch.equal(a, b) for a, b in zip(first, execute.make_inputs(c, 0, "cpu")))
    half = case(dataclasses.replace(P, mode=Mode(dtype="float16", strided=("x0",))), c.bindings)
    x0 = execute.make_inputs(half, 0, "cpu")[0]
    assert x0.dtype == torch.float16 and not x0.is_contiguous()
    assert execute.make_inputs(half, 0, "cpu", reference=True)[0].dtype == torch.float64


def test_eager_runs_every_binding_and_records_its_calls():
    c = case(P, [{"s0": 2, "s1": 3}, {"s0": 1, "s1": 1}])
    runs = execute.run_eager(c, "cpu")
    assert [r.binding for r in runs] == list(c.bindings)
    assert all(r.eager.failure is None for r in runs)
    assert [site for _, site in runs[0].eager.calls] == [0, 1, 2]


def test_nothing_is_compiled_where_eager_fails():
    p = prog({"x0": ("s0",)}, [("narrow", ["x0"], "v0", {"dim": 0})], outputs=["v0"], sym_min={"s0": 1})
    bad = case(p, [{"s0": 0}])  # below narrow's minimum: eager raises

    def never(*a):
        raise AssertionError("compiled although eager failed")

    runs = execute.execute(bad, "cpu", compiled=never)
    assert runs[0].eager.failure is not None and runs[0].compiled is None


def test_threads_and_devices():
    before = torch.get_num_threads()
    with execute.intra_op_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    assert execute.device_unavailable("cpu") is None
    assert "unsupported device type" in execute.device_unavailable("meta")
    assert execute.device_unavailable("not a device")
    if not torch.cuda.is_available():
        assert execute.device_unavailable("cuda") == "CUDA is not available on this machine"
