"""Inside a stage (``fuzzer.triage.bisect``): torch's bisector driven with each answer
asked once, the backends before the stage answered without a compile, and its result
read; a stand-in bisector and probe, no compile."""

from types import SimpleNamespace

import pytest

from fuzzer.triage import bisect


class Bisector:
    """A stand-in ``CompilerBisector``: asks ``fn`` at each (backend, subsystem, run state)
    of ``steps`` and ends with ``result`` (or raises ``error``)."""

    steps: list = []
    result = None
    error = None
    at = (None, None, None)
    bisection_enabled = False
    in_process_cache = "kept"

    @classmethod
    def get_backend(cls):
        return cls.at[0]

    @classmethod
    def get_subsystem(cls):
        return cls.at[1]

    @classmethod
    def get_run_state(cls, backend, subsystem):
        return cls.at[2]

    @classmethod
    def do_bisect(cls, fn):
        cls.bisection_enabled = True
        cls.answers = []
        for cls.at in cls.steps:
            cls.answers.append(fn())
        if cls.error is not None:
            raise cls.error
        return cls.result

    @classmethod
    def delete_bisect_status(cls):
        cls.deleted = True


class Probe:
    def __init__(self, shows=True):
        self.asked, self.answer = [], shows

    def shows(self, backend):
        self.asked.append(backend)
        return self.answer


@pytest.fixture
def bisector(monkeypatch):
    monkeypatch.setattr(bisect, "_bisector", lambda: (Bisector, {"eager": [], "aot_eager": [],
                                                                 "inductor": ["post_grad_passes", "lowerings"]}))
    Bisector.steps, Bisector.result, Bisector.error, Bisector.in_process_cache = [], None, None, "kept"
    return Bisector


def test_each_subsystem_turned_off_is_asked_once_and_earlier_backends_never(bisector):
    bisector.steps = [("aot_eager", None, None), ("inductor", None, None), ("inductor", "lowerings", "test_disable"),
                      ("inductor", "lowerings", "test_disable")]
    bisector.result = SimpleNamespace(backend="inductor", subsystem="lowerings", debug_info="lowerings")
    probe = Probe(shows=False)
    found = bisect.bisect(probe, "inductor")
    assert found == bisect.Bisection("lowerings", None)
    assert bisector.answers == [True, False, True, True]
    assert probe.asked == ["inductor"]  # the repeated question was answered from memory
    assert bisector.bisection_enabled is False and bisector.in_process_cache is None and bisector.deleted


def test_a_pass_is_named_by_its_application(bisector):
    bisector.result = SimpleNamespace(backend="inductor", subsystem="post_grad_passes", debug_info="reinplace")
    assert bisect.bisect(Probe(), "inductor") == bisect.Bisection("post_grad_passes", "reinplace")
    bisector.result = SimpleNamespace(backend="aot_eager", subsystem="x", debug_info="y")
    assert bisect.bisect(Probe(), "inductor") == bisect.Bisection(None, None)  # another stage: nothing


def test_without_applications_a_subsystem_that_is_no_pass_is_named_at_once(bisector):
    bisector.steps = [("inductor", "lowerings", "bisect")]
    assert bisect.bisect(Probe(), "inductor", applications=False) == bisect.Bisection("lowerings", None)


def test_a_bug_that_comes_back_with_its_subsystem_counted_names_nothing_and_other_errors_rise(bisector):
    bisector.error = RuntimeError(bisect.INCONSISTENT + " ...")
    assert bisect.bisect(Probe(), "inductor") == bisect.Bisection(None, None)
    bisector.error = RuntimeError("something else")
    with pytest.raises(RuntimeError, match="something else"):
        bisect.bisect(Probe(), "inductor")


def test_a_stage_without_subsystems_is_not_bisected(bisector):
    assert not bisect.bisects("aot_eager") and bisect.bisects("inductor")
    assert bisect.bisect(Probe(), "aot_eager") is None


def test_only_the_cudagraph_wrapping_is_inert_and_only_with_cudagraphs_off():
    from torch._inductor import config

    assert bisect.inert("inductor", "cudagraphs") == (not config.triton.cudagraphs)
    assert not bisect.inert("inductor", "post_grad_passes") and not bisect.inert("aot_eager", "cudagraphs")
