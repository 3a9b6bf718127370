"""The signal (``fuzzer.judge.compiler_signal``): what the compiler did with a program, read off
its graphs, passes, counters and metrics, only while a recording is open."""

import pytest
from helpers import case, prog

from fuzzer.judge.compiler_signal import RECORDER, bucket
from fuzzer.judge.trial import run_trial


def test_counts_fall_in_afl_buckets():
    assert [bucket(n) for n in (0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 127, 128, 999)] == \
        ["0", "1", "2", "3", "4", "4", "8", "8", "16", "16", "32", "32", "128", "128"]


def test_edges_join_the_ops_that_feed_each_other_through_a_tuple_result():
    import operator

    from torch import fx

    from fuzzer.judge.compiler_signal import _edges
    g = fx.Graph()
    x = g.placeholder("x")
    pair = g.call_function(torch_max, (x, 0))
    values = g.call_function(operator.getitem, (pair, 0))
    g.output(g.call_function(torch_sin, (values,)))
    assert _edges(g) == {"edge:max>sin"}


def torch_max(x, dim):  # stand-ins with the names the edges carry
    return x.max(dim)


def torch_sin(x):
    return x.sin()


torch_max.__name__, torch_sin.__name__ = "max", "sin"


WRITE = prog({"x0": ("s0",)}, [("clone", ["x0"], "v0", {}), ("m_scale", ["v0"], None, {"site": 0}),
                               ("p_sin", ["v0"], "v1", {"site": 1})], outputs=["v1"])


@pytest.mark.compile
def test_a_trial_records_the_passes_that_changed_its_graphs_and_nothing_outside():
    plain = run_trial(case(WRITE), "cpu")
    assert plain.signal == ()
    result = run_trial(case(WRITE), "cpu", signal=True)
    tokens = set(result.signal)
    # Dynamo's graph holds the ops the program calls
    assert {"dynamo:m_scale", "dynamo:p_sin"} <= tokens
    # the functionalized write is decomposed back into the op by a post-grad pass
    assert "pass:decompose_auto_functionalized" in tokens
    assert any(t.startswith("pass:decompose_auto_functionalized:-auto_functionalized") for t in tokens)
    assert "graph:dcefuzz::m_scale" in tokens
    # and which op feeds which there: the clone's buffer reaches the write and the sine
    assert any(t.startswith("edge:") and t.endswith(">dcefuzz::m_scale") for t in tokens)
    assert any(t.startswith("edge:") and t.endswith(">dcefuzz::p_sin") for t in tokens)
    assert any(t.startswith("metric:generated_kernel_count:") for t in tokens)
    assert RECORDER.current is None
    # the same program again records the same behaviour: the signal is a function of it
    assert run_trial(case(WRITE), "cpu", signal=True).signal == result.signal
