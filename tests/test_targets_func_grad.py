"""The ``func-grad`` target (``fuzzer.judge.targets.func_grad``): every program has
``func-grad`` and gradients, and none has what ``func-grad`` excludes."""

from fuzzer.judge import targets
from fuzzer.judge.targets import func_grad
from fuzzer.program import features


def test_its_programs_have_func_grad_and_nothing_it_excludes():
    target = func_grad.TARGET
    assert target.unsupported == features.FUNC_GRAD_EXCLUDES
    table = targets.drawn_for(target.name, dict(features.ALL))
    assert table[features.FUNC_GRAD] == 1.0 and table[features.AUTOGRAD] == 1.0
    assert not set(table) & set(features.FUNC_GRAD_EXCLUDES)


def test_it_is_available_where_torch_has_torch_func_grad():
    assert func_grad.TARGET.unavailable("cpu") is None
