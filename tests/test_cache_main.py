"""One side of a cache pair as a process (``fuzzer.cache.__main__``): its job read, its
threads set, its fault planted around the side; the side itself stood in."""

import json

import torch

from fuzzer.cache import __main__ as side
from fuzzer.cache import pair
from fuzzer.isolation import child


def test_a_side_reads_its_job_sets_its_threads_and_runs_with_its_fault(tmp_path, monkeypatch):
    from fuzzer import faults

    monkeypatch.setattr(child, "die_with_parent", lambda: None)
    ran = []
    monkeypatch.setattr(pair, "side_main", lambda argv: ran.append((argv, bool(faults._active))) or 0)
    before = torch.get_num_threads()
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"threads": 1, "fault": "test-internal-error"}))
    # config.patch, not monkeypatch: monkeypatch's undo deletes a setting of torch's
    # config module, and every later compile of the process would miss it
    try:
        with torch._inductor.config.patch(compile_threads=torch._inductor.config.compile_threads):
            assert side.main([str(job), "record.pickle"]) == 0
            assert torch.get_num_threads() == 1 and torch._inductor.config.compile_threads == 1
    finally:
        torch.set_num_threads(before)
    assert ran == [([str(job), "record.pickle"], True)] and not faults._active  # planted for the side alone
