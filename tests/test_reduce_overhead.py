"""The ``reduce-overhead`` target (``fuzzer.judge.targets.reduce_overhead``): compile's
build with ``mode='reduce-overhead'``, CUDA only."""

from fuzzer.judge.targets import reduce_overhead


def test_it_is_compile_with_cuda_graphs_and_refuses_any_other_device():
    target = reduce_overhead.TARGET
    assert target.mode == "reduce-overhead"
    assert target.unavailable("cuda") is None and target.unavailable("cuda:1") is None
    assert "CUDA" in target.unavailable("cpu")
