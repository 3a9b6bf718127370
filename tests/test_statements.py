"""The statements pass (``fuzzer.reduce.passes.statements``): delete chunks from the
end, halving the chunk down to one statement; stand-in verdicts."""

from helpers import case, offered_by, prog

from fuzzer.reduce.passes.statements import DeleteStatements

BODY = [("p_sin", ["x0"], f"v{n}", {"site": n}) for n in range(8)]
P = prog({"x0": ("s0",)}, BODY)


def _sites(c):
    return [s.site for s in c.program.body]


def test_chunks_come_from_the_end_and_halve_down_to_one():
    offered, best = offered_by(DeleteStatements(), case(P), lambda c: False)
    assert [_sites(c) for c in offered[:2]] == [[0, 1, 2, 3], [4, 5, 6, 7]]   # halves
    assert [_sites(c) for c in offered[2:6]] == [[0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 6, 7], [0, 1, 4, 5, 6, 7],
                                                 [2, 3, 4, 5, 6, 7]]          # quarters
    assert len(offered) == 2 + 4 + 8 and best == case(P)


def test_what_the_bug_needs_is_kept_and_the_rest_deleted():
    _, best = offered_by(DeleteStatements(), case(P), lambda c: {2, 5} <= set(_sites(c)))
    assert _sites(best) == [2, 5]


def test_deleting_a_statement_deletes_what_reads_its_result():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["v0"], "v1", {"site": 1})])
    offered, _ = offered_by(DeleteStatements(), case(p), lambda c: False)
    assert [_sites(c) for c in offered] == [[0], []]  # the first statement takes its reader with it
