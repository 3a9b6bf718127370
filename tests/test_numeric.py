"""The per-element numeric judgement (fuzzer/judge/numeric.py), on hand-written tensors."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzer.judge import numeric

NAN, INF = float("nan"), float("inf")


def judge(ref, eager, comp, **kw):
    return numeric.tensor_difference(torch.tensor(ref, dtype=torch.float64),
                                     torch.tensor(eager, dtype=torch.float32),
                                     torch.tensor(comp, dtype=torch.float32), **kw)


def old_whole_tensor_rule_passes(ref, eager, comp):
    """The rule numeric.py used before: one max over the whole tensor."""
    r, e, c = (torch.as_tensor(t, dtype=torch.float64) for t in (ref, eager, comp))
    return bool((c - r).abs().max() <= 3 * (e - r).abs().max() + 1e-4 * r.abs().max() + 1e-5)


# ------------------------------------------------------------------ the blind spot

def test_wrong_element_is_flagged_despite_a_large_eager_error_elsewhere():
    ref = [1.0, 2.0, 1000.0, 4.0]
    eager = [1.0, 2.0, 1000.5, 4.0]     # eager is off by 0.5 at index 2 (its own roundoff)
    comp = [1.3, 2.0, 1000.5, 4.0]      # compiled agrees there, but is wrong by 0.3 at index 0
    # the old whole-tensor rule let eager's 0.5 at index 2 excuse the 0.3 at index 0
    assert old_whole_tensor_rule_passes(ref, eager, comp)
    why = judge(ref, eager, comp)
    assert why is not None
    assert "1 of 4 elements" in why
    assert "flat index 0" in why
    assert "compiled 1.29999995" in why and "eager 1 " in why and "fp64 1 " in why
    assert "allowed" in why and "\n" not in why


def test_reason_names_the_worst_of_several_offenders_by_flat_index():
    ref = torch.zeros(3, 4, dtype=torch.float64)
    eager = ref.float()
    comp = eager.clone()
    comp[0, 1] = 0.5
    comp[2, 3] = -2.0                   # the worst one: flat index 11
    why = numeric.tensor_difference(ref, eager, comp)
    assert "2 of 12 elements" in why and "flat index 11" in why and "compiled -2 " in why


# ------------------------------------------------------------------ legitimate noise

def _sequential_row_sums(x):
    """float32 left-to-right sums of each row: one legitimate order of a reduction."""
    acc = torch.zeros(x.shape[0], dtype=torch.float32)
    for j in range(x.shape[1]):
        acc = acc + x[:, j]
    return acc


def test_reassociation_noise_including_a_cancelling_element_is_not_flagged():
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(6, 64, generator=g, dtype=torch.float64) * 1e3).float()
    h = x[5, :31].clone()           # row 5 cancels: terms ~1e3, sum 0.01
    x[5] = torch.cat([h, -h, torch.tensor([0.01, 0.0])])[torch.randperm(64, generator=g)]
    ref = x.double().sum(1)
    eager = ref.float()                 # a correctly rounded reduction
    comp = _sequential_row_sums(x)      # the same sum in another order
    # a few float32 ulps of the summands everywhere, and not close in assert_close's sense
    summand_ulp = torch.finfo(torch.float32).eps * x.abs().max().item()
    assert ((comp - eager).abs() <= 16 * summand_ulp).all()
    assert (comp != eager).sum() >= 4
    tiny = (comp[5] - eager[5]).abs().item()
    assert abs(ref[5].item()) < 0.02 and tiny > 100 * torch.finfo(torch.float32).eps * abs(ref[5])
    assert numeric.tensor_difference(ref, eager, comp) is None
    # SCALE_SLACK is what covers the cancelling element
    why = numeric.tensor_difference(ref, eager, comp, numeric.Tolerance(scale_slack=0.0))
    assert why is not None and "flat index 5" in why


def test_compiled_within_a_few_times_eagers_own_error_is_not_flagged():
    assert judge([1.0, 2.0], [1.0, 2.001], [1.0, 1.998]) is None
    assert judge([1.0, 2.0], [1.0, 2.001], [1.0, 1.99]) is not None


def test_compiled_equal_to_eager_is_not_flagged_even_where_eager_is_far_off():
    assert judge([1.0, 2.0, 3.0], [1.0, 2.5, -3.0], [1.0, 2.5, -3.0]) is None


def test_compiled_close_to_eager_in_assert_close_sense_is_not_flagged():
    e = torch.tensor([0.0, 1.0, 1e6], dtype=torch.float32)
    c = torch.tensor([5e-6, 1.0 + 1e-6, 1e6 + 1.0], dtype=torch.float32)
    torch.testing.assert_close(c, e)    # what "close" means, from PyTorch itself
    ref = torch.tensor([3.0, -1.0, 0.0], dtype=torch.float64)  # even with eager way off
    assert numeric.tensor_difference(ref, e, c) is None


# ------------------------------------------------------------------ non-finite, empty, shape

@pytest.mark.parametrize("ref, eager, comp, flagged", [
    ([1.0, 2.0], [1.0, 2.0], [1.0, NAN], True),             # compiled invents a NaN
    ([1.0, 2.0], [1.0, 2.0], [INF, 2.0], True),             # ... or an inf
    ([1.0, NAN], [1.0, NAN], [1.0, NAN], False),            # NaN in all three, same spot
    ([1.0, NAN], [1.0, NAN], [1.0, 5.0], True),             # compiled makes a NaN finite
    ([1.0, INF], [1.0, INF], [1.0, -INF], True),            # sign of an inf flips
    ([1.0, 1e39], [1.0, INF], [1.0, 3e38], False),          # eager itself overflowed
    ([1.0, -INF], [1.0, -INF], [1.0, -INF], False),
])
def test_non_finite_patterns(ref, eager, comp, flagged):
    why = judge(ref, eager, comp)
    assert bool(why) is flagged, why


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 5)])
def test_empty_tensors_are_not_flagged(shape):
    z = torch.empty(shape)
    assert numeric.tensor_difference(z.double(), z, z.clone()) is None


def test_shape_mismatch_is_flagged():
    e = torch.zeros(2, 3)
    why = numeric.tensor_difference(e.double(), e, torch.zeros(3, 2))
    assert why and "shape" in why


def test_dtype_mismatch_is_flagged():
    e = torch.zeros(4)
    why = numeric.tensor_difference(e.double(), e, torch.zeros(4, dtype=torch.float64))
    assert why and "dtype" in why


# ------------------------------------------------------------------ properties

refs = st.lists(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False, width=64),
                min_size=1, max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(refs, st.data())
def test_one_ulp_perturbation_of_rounded_reference_is_never_flagged(values, data):
    ref = torch.tensor(values, dtype=torch.float64)
    eager = ref.float()
    step = torch.tensor(data.draw(st.lists(st.sampled_from([-1, 0, 1]),
                                           min_size=len(values), max_size=len(values))))
    up = torch.nextafter(eager, torch.full_like(eager, INF))
    down = torch.nextafter(eager, torch.full_like(eager, -INF))
    comp = torch.where(step > 0, up, torch.where(step < 0, down, eager))
    assert numeric.tensor_difference(ref, eager, comp) is None


#: SCALE_SLACK * max|r| is a legitimate allowance on every element, so "a change of 1%
#: or 0.01 is flagged" holds only while 7.6e-6 * max|r| < 0.01, i.e. max|r| < ~1300.
FLAG_RANGE = 1e3


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(min_value=-FLAG_RANGE, max_value=FLAG_RANGE, allow_nan=False,
                          width=64), min_size=1, max_size=40),
       st.data())
def test_one_element_changed_by_more_than_one_percent_is_flagged(values, data):
    ref = torch.tensor(values, dtype=torch.float64)
    eager = ref.float()
    k = data.draw(st.integers(0, len(values) - 1))
    factor = data.draw(st.floats(min_value=1.01, max_value=1e3))
    sign = data.draw(st.sampled_from([-1.0, 1.0]))
    change = sign * factor * max(1e-2, 1e-2 * abs(values[k]))
    comp = eager.clone()
    comp[k] = eager[k].double().item() + change
    assert abs(comp[k].item() - eager[k].item()) > max(1e-2, 1e-2 * abs(values[k]))
    why = numeric.tensor_difference(ref, eager, comp)
    assert why is not None and f"flat index {k}:" in why


def test_module_imports_only_torch_and_the_standard_library():
    """A script carries the module's text: it may import nothing torch does not bring."""
    import inspect
    import sys
    lines = inspect.getsource(numeric).splitlines()
    imported = {ln.split()[1].split(".")[0] for ln in lines if ln.lstrip().startswith(("import ", "from "))}
    assert "torch" in imported and imported - {"torch"} <= sys.stdlib_module_names, imported


# ------------------------------------------------------------------ low precision, element by element

def _noisy(fn, x64: torch.Tensor, dtype, samples: int = 3) -> list:
    """``fn`` run in float64 with ``dtype``'s rounding made up after every op."""
    from fuzzer.judge import paths

    _, noisy_class = paths.modes()
    out = []
    for k in range(samples):
        with noisy_class(torch.finfo(dtype).eps / 2, seed=k):  # one rounding's largest error
            out.append(fn(x64.clone()))
    return out


def _cancelling(x):
    """Small results made of large terms, beside a large one: what rounding carries to
    each element is the size of its terms, not of itself."""
    return torch.cat([(x[:3] + 100.0) - 100.0, x[3:] * 10.0])


def test_a_noisy_reference_measures_what_cancels_into_each_element():
    x = torch.tensor([0.2, -0.3, 0.1, 1.0], dtype=torch.float64)
    ref = _cancelling(x)
    spread = torch.stack([(n - ref).abs() for n in _noisy(_cancelling, x, torch.bfloat16)]).amax(0)
    # the cancelled elements carry the rounding of 100, the plain one of its own 10
    assert bool((spread[:3] > 0.05).all()) and float(spread[3]) < 0.1
    x = torch.tensor([0.2, -0.3, 0.1], dtype=torch.float64)
    small = _noisy(lambda t: t * 0.5, x, torch.bfloat16)
    assert float(torch.stack([(n - x * 0.5).abs() for n in small]).max()) < 0.01


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_wrong_small_element_beside_a_large_one_is_caught_in_low_precision(dtype):
    """0.2 -> -0.1 beside a 10: the old floor (4 ulps of the largest value) let it pass."""
    x = torch.tensor([0.4, 0.6, 20.0], dtype=torch.float64)
    halve = lambda t: t * 0.5  # noqa: E731 - no cancellation anywhere
    ref = halve(x)
    eager = ref.to(dtype)
    wrong = eager.clone()
    wrong[0] = -0.1 if dtype == torch.bfloat16 else 0.19
    noisy = _noisy(halve, x, dtype)
    old = numeric.tensor_difference(ref, eager, wrong)
    new = numeric.tensor_difference(ref, eager, wrong, noisy=noisy)
    assert new is not None and "flat index 0" in new
    if dtype == torch.bfloat16:
        assert old is None  # the blind spot this rule closes
    # the right answer, rounded once as a fused kernel rounds, still passes
    assert numeric.tensor_difference(ref, eager, ref.to(dtype), noisy=noisy) is None


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_cancelling_elements_still_pass_in_low_precision(dtype):
    """Compiled rounding the large terms another way than eager moves a cancelled
    element by about their rounding: allowed, while eager happened to be exact."""
    x = torch.tensor([0.25, -0.5, 0.125, 1.0], dtype=torch.float64)
    ref = _cancelling(x)
    eager = ref.to(dtype)                      # exact here, by luck of the values
    ulp100 = torch.finfo(dtype).eps * 64       # an ulp of 100 in this dtype
    other = (ref + torch.tensor([ulp100, -ulp100, ulp100, 0.0], dtype=torch.float64)).to(dtype)
    noisy = _noisy(_cancelling, x, dtype)
    assert numeric.tensor_difference(ref, eager, other, noisy=noisy) is None


def test_a_fixed_dtype_tensor_is_compared_exactly():
    """A code one off in a million passes every float rule (its relative error is 1e-6)
    and is still a difference: integers and float8 have no rounding to allow for."""
    eager = torch.tensor([1_000_000, 5, -3], dtype=torch.int32)
    ref = eager.to(torch.float64)
    assert numeric.tensor_difference(ref, eager, eager.clone()) is None
    off = eager.clone()
    off[0] += 1
    why = numeric.tensor_difference(ref, eager, off)
    assert why is not None and "compared exactly" in why and "int32" in why
    # the same numbers as floats are within the float32 rules
    assert numeric.tensor_difference(ref, eager.to(torch.float32), off.to(torch.float32)) is None
    assert numeric.agrees(eager, eager.clone()) and not numeric.agrees(eager, off)
    codes = torch.tensor([float("nan"), 0.5, -2.0]).to(torch.float8_e4m3fn)
    assert numeric.tensor_difference(codes.to(torch.float64), codes, codes.clone()) is None
    assert numeric.tensor_difference(codes.to(torch.float64), codes, torch.tensor([0.5, 0.5, -2.0]).to(torch.float8_e4m3fn)) is not None
    assert numeric.is_fixed(torch.uint8) and numeric.is_fixed(torch.bool) and not numeric.is_fixed(torch.bfloat16)
