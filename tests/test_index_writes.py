"""Index writes, then reads of other positions (feature ``index-writes``,
``fuzzer.program.index_writes``).

What the forms do in eager torch (no index written twice but by an accumulating write;
the self-reading writes read copies made before the write), the overlap rule over
them (both sides), the contract judging a read moved across a write (stand-ins, as in
``test_contract``), generation, the follow-up read, shrinking.
"""

import pytest
import torch
from helpers import case, prog
from test_contract import verdict

from fuzzer.judge import contract
from fuzzer.program import features, forms, index_writes
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, check
from fuzzer.reduce.passes.rewrite import statement_edits

X = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}
FEATURE_FORMS = sorted(n for n, f in forms.FORMS.items() if f.feature == features.INDEX_WRITES)


def _run(form: str, x: torch.Tensor, y: torch.Tensor | None = None, dim: int = 0, **attrs) -> torch.Tensor:
    """The form's statement run eagerly on ``x`` (and ``y``); ``x`` after it, or its result."""
    f = forms.form(form)
    args = ["x", "y"][:f.arity]
    text = f.render(args, {"dim": dim, **attrs}, [tuple(x.shape)] * f.arity)
    scope = {"torch": torch, "x": x, "y": y}
    if f.returns:
        return eval(text, scope)
    exec(text, scope)
    return x


SHAPES = [(0, 3), (1, 3), (2, 5), (5, 2), (6, 3)]


@pytest.mark.parametrize("form", ["put_perm", "copy_perm", "scatter_perm"])
def test_a_write_without_accumulation_writes_no_position_twice(form):
    """torch documents index_put_ with duplicate indices (and index_copy_, scatter_ with
    indices not unique) as undefined: each value of ``y`` lands exactly once."""
    for shape in SHAPES:
        for dim in range(len(shape)):
            y = torch.arange(1, 1 + torch.Size(shape).numel(), dtype=torch.float32).reshape(shape)
            x = _run(form, torch.zeros(shape), y, dim)
            assert sorted(x.flatten().tolist()) == sorted(y.flatten().tolist()), (form, shape, dim)


def test_only_the_accumulating_write_takes_duplicate_indices():
    """The allowed side: ``accumulate=True`` defines duplicates as a sum."""
    x = _run("put_acc", torch.zeros(5, 2), torch.ones(5, 2))
    assert x.sum().item() == 10 and x.max().item() == 2
    assert "accumulate=True" in forms.form("put_acc").render(["x", "y"], {}, [("s0",)] * 2)


@pytest.mark.parametrize("form,reference", [
    ("roll_add_", lambda x, d: x + torch.roll(x, 1, d)),
    ("flip_copy_", lambda x, d: torch.flip(x, (d,))),
    ("scatter_rolled", lambda x, d: torch.roll(x, -2, d)),
    ("put_flipped", lambda x, d: torch.roll(torch.flip(x, (d,)), -1, d)),
])
def test_a_self_reading_write_reads_the_values_from_before_it(form, reference):
    """One eager answer: the values a write reads from its own tensor are a copy made
    before it stores anything."""
    for shape in SHAPES[2:]:
        for dim in range(2):
            x = torch.randn(shape)
            assert torch.equal(_run(form, x.clone(), dim=dim), reference(x, dim)), (form, shape, dim)


def test_the_shifted_write_adds_each_position_the_one_before_it():
    x = torch.randn(4, 3)
    want = x.clone()
    want[1:] += x[:-1]
    assert torch.equal(_run("shift_add_", x.clone()), want)


# ------------------------------------------------------------- the overlap rule

def test_an_index_write_of_values_overlapping_what_it_writes_is_refused():
    """The IR's one overlap rule: a write beside a read of the same memory is refused
    unless proven disjoint."""
    check(prog(X, [("put_perm", ["x0", "x1"], None, {"dim": 0})]))
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(prog(X, [("alias", ["x0"], "v0", {}), ("put_perm", ["x0", "v0"], None, {"dim": 1})]))


def test_an_index_write_beside_a_disjoint_part_of_its_storage_is_legal():
    halves = [("head", ["x0"], "v0", {"dim": 0}), ("tail", ["x0"], "v1", {"dim": 0})]
    check(prog(X, halves + [("scatter_perm", ["v0", "v1"], None, {"dim": 1})]))


# ------------------------------------------------------------- the contract

#: x0 written by a permutation of x1, then read rolled
WRITTEN_THEN_READ = case(prog(X, [("clone", ["x0"], "v0", {}), ("put_perm", ["v0", "x1"], None, {"dim": 0}),
                                  ("roll", ["v0"], "v1", {"dim": 1})], outputs=["v1"]))


def _faithful(x0, x1):
    v0 = x0.clone()
    v0[torch.arange(v0.size(0)).roll(1)] = x1
    return (torch.roll(v0, 1, 1),)


def _read_before_the_write(x0, x1):
    v0 = x0.clone()
    v1 = torch.roll(v0, 1, 1)  # the read moved above the write
    v0[torch.arange(v0.size(0)).roll(1)] = x1
    return (v1,)


def test_a_read_moved_above_the_index_write_it_follows_is_a_wrong_output():
    assert verdict(_faithful, WRITTEN_THEN_READ).kinds() == []
    assert verdict(_read_before_the_write, WRITTEN_THEN_READ).kinds() == [contract.WRONG_OUTPUT]


@pytest.mark.parametrize("form,inplace", [("add_perm", "index_add_"), ("copy_perm_fn", "index_copy_")])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_functional_index_op_is_a_fresh_tensor_even_of_an_expanded_one(form, inplace, shape):
    """Of an expanded operand (rows sharing one row's memory) too: the result is new, and
    each row of it takes its own write."""
    y = torch.randn(shape)
    for x in (torch.randn(shape), torch.randn(1, shape[1]).expand(shape)):
        before = x.clone()
        out = _run(form, x, y)
        p = torch.arange(shape[0]).roll(1)
        assert torch.equal(out, getattr(before.clone(), inplace)(0, p, y)) and torch.equal(x, before)
        assert out.numel() == 0 or out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


@pytest.mark.parametrize("shape", SHAPES)
def test_the_fills_take_half_the_positions_and_the_reduction_each_once(shape):
    x, y = torch.randn(shape), torch.randn(shape)
    filled = _run("fill_half", x, dim=1, c=2.0)
    assert shape[0] == 0 or int(filled.eq(2.0).all(0).sum()) == shape[1] // 2
    assert torch.equal(_run("fill_half_", x.clone(), dim=1, c=2.0), filled)
    p = torch.arange(shape[0]).roll(1)
    assert torch.allclose(_run("reduce_perm_", x.clone(), y, reduce="prod"), x * y[p.argsort()])
    assert torch.allclose(_run("reduce_perm_", x.clone(), y, reduce="mean"), (x + y[p.argsort()]) / 2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_product_reduction_is_never_in_a_low_precision_program_where_eager_refuses_it(dtype):
    """Eager's ``index_reduce_(..., 'prod')`` of a half-precision tensor whose slices hold one
    element each raises an internal assert, so the IR refuses the form with ``prod`` in such
    a program (``dtypes.EAGER_REFUSES``); ``mean``, and ``prod`` in float32, stay."""
    import dataclasses

    from fuzzer.program.mode import Mode

    def program(reduce, dt):
        p = prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")},
                 [("reduce_perm_", ["x0", "x1"], None, {"dim": 0, "reduce": reduce})], outputs=["x0"])
        return dataclasses.replace(p, mode=Mode(dtype=dt))
    with pytest.raises(InvalidProgram, match="refuses reduce_perm_"):
        check(program("prod", dtype))
    check(program("mean", dtype))
    check(program("prod", "float32"))
    x, y = (torch.randn(2, 1, dtype=getattr(torch, dtype)) for _ in range(2))
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT"):
        _run("reduce_perm_", x, y, reduce="prod")
    _run("reduce_perm_", x, y, reduce="mean")


def test_a_program_with_a_product_reduction_is_drawn_in_float32_where_half_precision_was_drawn():
    """The mode is drawn after the body: a body holding ``prod`` takes float32 where the
    dtypes feature drew float16 or bfloat16 (``drawn_mode.Refused``), so
    every such seed still gives a program; the rest keep their drawn dtype."""
    table = features.parse("index-writes=1.0,dtypes=1.0")
    with_prod, dtypes_seen = 0, set()
    for seed in range(60):
        program = generate(seed, features=table).program
        dtypes_seen.add(program.mode.dtype)
        if any(s.form == "reduce_perm_" and s.attrs.get("reduce") == "prod" for s in program.body):
            with_prod += 1
            assert program.mode.dtype == "float32"
    assert with_prod >= 2 and dtypes_seen >= {"float16", "bfloat16"}


# ------------------------------------------------------------- generation, shrinking

def test_generated_programs_with_the_feature_are_legal_and_use_every_form():
    table = features.parse("index-writes=1.0")
    used = set()
    for seed in range(80):
        program = generate(seed, features=table).program
        check(program)
        used |= {s.form for s in program.body}
    assert set(FEATURE_FORMS) <= used


def test_a_write_is_often_followed_by_a_read_of_the_tensor_it_wrote():
    """``Form.then``: what real code does with what it just wrote."""
    table = features.parse("index-writes=1.0")
    writes = followed = 0
    for seed in range(60):
        body = generate(seed, features=table).program.body
        for stmt, after in zip(body, body[1:]):
            if forms.form(stmt.form).then:
                writes += 1
                followed += after.form in index_writes.AFTER_WRITE and after.args[0] == stmt.args[0]
    assert writes and followed >= writes // 2, (followed, writes)


@pytest.mark.parametrize("form,plain", [("put_perm", "copy_"), ("put_acc", "add_"), ("roll", "clone"),
                                        ("gather_perm", "clone"), ("put_flipped", "mul_"), ("shift_add_", "mul_"),
                                        ("fill_half_", "mul_"), ("reduce_perm_", "copy_"), ("add_perm", "add"),
                                        ("copy_perm_fn", "clone"), ("fill_half", "clone")])
def test_an_index_form_shrinks_toward_the_plain_form(form, plain):
    f = forms.form(form)
    attrs = {"dim": 0, "c": 2.0, "reduce": "prod"} if f.draw is not None else {}
    out = "v0" if f.returns else None
    c = case(prog(X, [(form, ["x0", "x1"][:f.arity], out, attrs)]))
    assert plain in {s.form for e in statement_edits(c) for s in e.program.body}
