"""The path an eager run takes and rounding made up (``fuzzer.judge.paths``): dispatch
modes over plain eager torch code."""

import torch

from fuzzer.judge import paths


def test_the_path_records_each_op_with_what_it_returns_and_what_it_decides():
    recorder, _ = paths.modes()
    x = torch.tensor([1.0, -2.0, 3.0])
    with recorder() as rec:
        y = torch.sin(x)
        torch.masked_select(y, y > 0)
        (y > 0).sum().item()
    ops = [op for op, _ in rec.path]
    assert ops[0] == "aten.sin" and "aten.masked_select" in ops
    assert rec.path[0] == ("aten.sin", (3,))
    assert ("aten.masked_select", (2,)) in rec.path


def test_made_up_rounding_perturbs_what_computes_and_leaves_what_only_moves_data():
    _, noisy = paths.modes()
    x = torch.linspace(1, 2, 50, dtype=torch.float64)
    with noisy(1e-3, seed=7):
        s, c = torch.sin(x), torch.clone(x)
    assert torch.equal(c, x)
    assert not torch.equal(s, torch.sin(x)) and torch.allclose(s, torch.sin(x), rtol=2e-3)
    with noisy(1e-3, seed=7):
        again = torch.sin(x)
    assert torch.equal(again, s)  # seeded: the same noise again
