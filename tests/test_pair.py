"""A cache pair's two sides (``fuzzer.cache.pair``): the jobs, gradients as returned values,
settings and the naive pass a variant sets, a pair of stand-in side processes, and the
verdict of a new side's record; no compile."""

import sys

import pytest
import torch

from fuzzer.cache import pair
from fuzzer.judge import contract
from fuzzer.judge.observe import Run

SIDE = """
import json, os, pickle, sys
job = json.load(open(sys.argv[1]))
if job["side"] == "new" and job.get("fail"):
    sys.exit(3)
assert os.environ["TORCHINDUCTOR_CACHE_DIR"].endswith("torchinductor_cache_dir")  # the shared folder
pickle.dump({"hits": {"fx_graph": 1 if job["side"] == "new" else 0}, "warm": []}, open(sys.argv[2], "wb"))
"""


def test_the_sides_share_the_program_and_differ_in_library_settings_and_how_often_they_take_gradients():
    sides = pair.Sides("OLD LIB", "NEW LIB", {"a": 1}, {}, grad=True, twice=True)
    jobs = pair.pair_jobs(sides, "PROGRAM", {"s": 1}, "cpu", ["fx_graph"])
    assert (jobs[pair.OLD]["library"], jobs[pair.NEW]["library"]) == ("OLD LIB", "NEW LIB")
    assert jobs[pair.OLD]["program"] == jobs[pair.NEW]["program"] == "PROGRAM"
    assert (jobs[pair.OLD]["twice"], jobs[pair.NEW]["twice"]) == (False, True) and jobs[pair.OLD]["grad"]
    assert (jobs[pair.OLD]["config"], jobs[pair.NEW]["config"]) == ({"a": 1}, {})


def test_gradients_are_returned_after_the_values_and_twice_as_once():
    def fn(x, y):
        return (x * y, x.sin())

    x, y = torch.rand(3), torch.rand(3)
    once = pair.with_grads(fn)(x, y)
    assert len(once) == 4 and torch.allclose(once[2], y + x.cos()) and torch.allclose(once[3], x)
    assert all(torch.equal(a, b) for a, b in zip(once, pair.with_grads(fn, twice=True)(x, y)))
    assert torch.equal(pair.with_grads(lambda x: (x.detach(),))(x)[1], torch.zeros(3))


def test_a_setting_is_set_and_the_naive_pass_erases_every_unread_call():
    from torch._inductor import config

    # config.patch, not monkeypatch: monkeypatch's undo deletes a setting of torch's
    # config module (it hides it), and every later test of the process would miss it
    with config.patch(post_grad_custom_post_pass=None):
        pair._setting("torch._inductor.config.post_grad_custom_post_pass", {"custom_pass": "naive-dce"})
        naive = config.post_grad_custom_post_pass
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_function(torch.ops.aten.add_.Tensor, (x, x))   # a write nothing reads: erased too, wrongly
    kept = g.call_function(torch.ops.aten.sin.default, (x,))
    g.output((kept,))
    naive(g)
    assert [n.target for n in g.nodes if n.op == "call_function"] == [torch.ops.aten.sin.default]
    assert naive.uuid() == "dcefuzz-naive-dce-1"


def test_the_pair_runs_old_then_new_in_one_cache_folder_and_a_failed_side_is_said(tmp_path):
    jobs = {side: {"x": 1} for side in (pair.OLD, pair.NEW)}
    record = pair.run_pair(jobs, [sys.executable, "-c", SIDE], timeout=60)
    assert record["hits"] == {"fx_graph": 1} and record["old_hits"] == {"fx_graph": 0}
    jobs[pair.NEW]["fail"] = True
    with pytest.raises(pair.SideFailed, match="the new side ended with status 3"):
        pair.run_pair(jobs, [sys.executable, "-c", SIDE], timeout=60)


def _run(value):
    return Run(outputs=[torch.tensor([value])], inputs_after=[torch.tensor([1.0])])


def test_only_what_the_warm_run_broke_and_the_cold_did_not_is_stale():
    record = {"eager": [[_run(1.0)], [_run(1.0)], [_run(1.0)]], "warm": [_run(5.0)], "cold": [_run(1.0)],
              "hits": {"fx_graph": 1, "aot_autograd": 0}}
    verdict = pair.judge_pair(["x0"], [{"s0": 1}], record, "mutates-fixed")
    (stale,) = verdict.of_kind(contract.STALE_CACHE)
    assert "mutates-fixed" in stale.symptoms and verdict.untested == []
    both = dict(record, cold=[_run(5.0)])
    assert pair.judge_pair(["x0"], [{"s0": 1}], both, "x").of_kind(contract.STALE_CACHE) == []
    missed = dict(record, hits={"fx_graph": 0, "aot_autograd": 0})
    assert [g.reason for g in pair.judge_pair(["x0"], [{"s0": 1}], missed, "x").untested] == [pair.CACHE_MISS]
