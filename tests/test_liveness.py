"""The liveness behind ``missed-dce`` (``fuzzer.program.liveness``): which statements
can reach an output, an input or an effect, which pure calls are dead, and why a
dead one may be kept; hand-written programs, no compile."""

from helpers import prog

from fuzzer.program import liveness


def test_a_write_into_a_storage_something_live_reads_is_live():
    p = prog({"x0": ("s0",)}, [
        ("clone", ["x0"], "v0", {}),
        ("p_sin", ["x0"], "v1", {"site": 0}),
        ("m_addto", ["v0", "v1"], None, {"site": 1}),   # writes v0, which is returned
        ("clone", ["x0"], "v2", {}),
        ("m_addto", ["v2", "v1"], None, {"site": 2}),   # writes v2, which nothing reads
    ], outputs=["v0"])
    assert liveness.live_statements(p) == {0, 1, 2}


def test_an_effect_and_a_nested_form_are_live_whatever_reads_them():
    p = prog({"x0": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 0}),
        ("e_log", ["v0"], None, {"site": 1}),
        ("map_sin", ["x0"], "v1", {"site": 2}),
    ])
    assert liveness.live_statements(p) == {0, 1, 2}
    assert liveness.dead_pure_sites(p) == set()  # map_sin is nested: its deadness is not ours to judge


def test_an_identical_call_repeats_its_site_which_runs_if_either_call_is_live():
    p = prog({"x0": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 0}),
        ("p_sin", ["x0"], "v1", {"site": 0}),
    ], outputs=["v1"])
    assert liveness.live_statements(p) == {1}
    assert liveness.dead_pure_sites(p) == set()


def test_a_dead_call_is_kept_for_the_cause_its_value_reaches():
    p = prog({"x0": ("s0",)}, [
        ("p_sin", ["x0"], "v0", {"site": 0}),                   # feeds a size from data
        ("p_pos", ["v0"], "v1", {"site": 1, "size": "u0"}),     # binds one
        ("p_sin", ["x0"], "v2", {"site": 2}),                   # feeds a cond
        ("cond_sin", ["v2"], "v3", {"site": 3, "site2": 4}),
        ("p_sin", ["x0"], "v4", {"site": 5}),                   # nothing
    ])
    causes = liveness.dead_site_causes(p)
    assert causes[0] == causes[1] == liveness.SIZES_FROM_DATA
    assert causes[2] == causes[3] == causes[4] == liveness.IN_COND
    assert causes[5] == liveness.PLAIN


def test_a_live_call_has_no_cause():
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])
    assert liveness.dead_site_causes(p) == {}
