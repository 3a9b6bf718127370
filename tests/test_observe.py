"""What a run leaves behind (``fuzzer.judge.observe``): the inputs drawn, the caches
turned off, what Dynamo's counters say was compiled, and one run recorded; plain eager
functions and hand-built counters, no compile."""

import pytest
import torch

from fuzzer.judge import observe
from fuzzer.judge.observe import COMPILE, GRAPH_BREAK, REQUESTED_BREAK, RUNTIME, SKIPPED_FRAME, Counts, Handover


def test_the_caches_are_off_inside_and_as_they_were_after():
    from torch._functorch import config as functorch
    from torch._inductor import config as inductor

    before = (inductor.fx_graph_cache, functorch.enable_autograd_cache)
    with observe.caches_off():
        assert (inductor.fx_graph_cache, functorch.enable_autograd_cache) == (False, False)
    assert (inductor.fx_graph_cache, functorch.enable_autograd_cache) == before


def test_inputs_are_one_draw_whatever_the_dtype_strided_aliased_windowed_or_fixed():
    plain = observe.draw_inputs([(3, 4), (3, 4)], 7, "cpu")
    ref = observe.draw_inputs([(3, 4), (3, 4)], 7, "cpu", reference=True)
    assert ref[0].dtype == torch.float64 and torch.equal(ref[0].float(), plain[0])
    strided = observe.draw_inputs([(3, 4), (3, 4)], 7, "cpu", handover=Handover(strided=(1,)))
    assert strided[1].stride() == (8, 2) and torch.equal(strided[1], plain[1])
    aliased = observe.draw_inputs([(3, 4), (3, 4)], 7, "cpu", handover=Handover(aliases=((1, 0),)))
    assert aliased[1].data_ptr() == aliased[0].data_ptr()
    window = observe.draw_inputs([(3, 4), (2, 4)], 7, "cpu", handover=Handover(windows=((1, 0, 0, 1, 2),)))
    assert torch.equal(window[1], window[0][1:3]) and window[1].data_ptr() != window[0].data_ptr()
    laid = observe.draw_inputs([(3, 4)], 7, "cpu", handover=Handover(layouts=((0, "transposed"),)))
    assert laid[0].stride() == (1, 3) and torch.equal(laid[0], plain[0])
    codes = observe.draw_inputs([(50,)], 7, "cpu", handover=Handover(fixed=((0, "int8"),)), reference=True)[0]
    assert codes.dtype == torch.int8 and codes.min() >= -128


def test_a_failures_line_takes_the_error_a_wrapper_introduces():
    f = observe.Failure("BackendCompilerFailed", "backend='inductor' raised:\nKeyError: 'op3'\nmore", COMPILE)
    assert f.line() == "BackendCompilerFailed: backend='inductor' raised: KeyError: 'op3'"
    assert observe.Failure("E", "", RUNTIME).line() == "E: "


def test_coverage_counts_each_break_skipped_frame_and_uncounted_resume():
    before = Counts(frames_total=1, frames_ok=1, graphs=1, graph_breaks=(("a", 1),))
    after = Counts(frames_total=3, frames_ok=2, graphs=3, resumes=3,
                   graph_breaks=(("a", 2), (observe.REQUESTED_BREAK_MESSAGE + " here", 1)),
                   unimplemented=(("Hit the recompile limit", 1), ("Skipped x", 1)))
    cov = observe.Coverage.between(before, after, raised=False)
    reasons = [g.reason for g in cov.gaps]
    assert reasons == [GRAPH_BREAK, REQUESTED_BREAK, GRAPH_BREAK, observe.RECOMPILE_LIMIT, SKIPPED_FRAME]
    assert "1 graph break(s) Dynamo resumed after without counting" in cov.gaps[2].message
    assert (cov.frames, cov.graphs) == (1, 2)
    quiet = observe.Coverage.between(Counts(frames_total=1), Counts(frames_total=2), raised=False)
    assert [g.reason for g in quiet.gaps] == [SKIPPED_FRAME]


def test_an_exception_is_a_compile_one_while_a_frame_is_being_converted():
    assert observe.stage_of(ValueError(), Counts(1, 1), Counts(2, 1)) == COMPILE
    assert observe.stage_of(ValueError(), Counts(1, 1), Counts(2, 2)) == RUNTIME


@pytest.fixture
def trace():
    return {"calls": [("stale", 0)], "effects": []}


def test_a_run_records_its_outputs_the_inputs_after_and_its_effects(trace):
    def fn(x):
        trace["calls"].append(("p", 1))
        trace["effects"].append(("e", 2, (x.clone(),)))
        x.mul_(2)
        return (x + 1,)

    run = observe.run_once(fn, [torch.ones(2)], trace)
    assert run.failure is None and torch.equal(run.outputs[0], torch.full((2,), 3.0))
    assert torch.equal(run.inputs_after[0], torch.full((2,), 2.0))
    assert run.calls == [("p", 1)] and run.effects[0].call == ("e", 2)
    assert trace == {"calls": [], "effects": []}


def test_a_failing_run_is_an_observation(trace):
    def fn(x):
        raise KeyError("k")

    run = observe.run_once(fn, [torch.ones(2)], trace)
    assert run.outputs is None and run.failure.type == "KeyError" and run.failure.stage == RUNTIME
