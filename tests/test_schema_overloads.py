"""An optional written list and a functional op with an out overload (the ``schemas``
and ``schema-alias`` forms ``s_optlist``, ``s_optlist_none``, ``s_silu`` and
``s_silu_out``): what the contract judges of them, each on its forbidden and its
allowed side, what the compiler makes of the overload, and how the shrinker takes
them toward the plain forms.

The stand-ins play the compiled function, as in ``test_tagged``.  What compiled code
must keep: the writes to each element of a given list (``wrong-mutation``), and, where
it calls the functional op's out overload in its place (Inductor's
``FallbackKernel.create``), the functional op's result (``wrong-output``).  The
overload's kernel and the functional op's compute the same (``test_custom_ops``).
"""

import inspect
import re
import subprocess
import sys

import pytest
import torch
from helpers import case, prog, run_pass, stays_while

from fuzzer.judge import contract
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage
from fuzzer.judge.trial import judge_case
from fuzzer.program import codegen, custom_ops, forms, sources
from fuzzer.reduce.order import complexity
from fuzzer.reduce.passes.rewrite import statement_edits

custom_ops.install()
ops = torch.ops.dcefuzz
WHOLLY = Coverage(frames=1, graphs=1)
NEW_FORMS = {"s_optlist", "s_optlist_none", "s_silu", "s_silu_out"}
SHAPE = ("s0", "s1")

# x1 and x2 are the list's elements: x1 written from x0, x2 from the new x1
LISTED = case(prog({"x0": SHAPE, "x1": SHAPE, "x2": SHAPE}, [
    ("s_optlist", ["x0", "x1", "x2"], "v0", {"site": 0}),
], outputs=["v0"]))
# the functional op, whose result the compiler may compute with its out overload
FUNCTIONAL = case(prog({"x0": SHAPE}, [
    ("s_silu", ["x0"], "v0", {"site": 0}),
    ("p_sin", ["x0"], "v1", {"site": 1}),
], outputs=["v0", "v1"]))
# the overload called with an input as its buffer, then written through its result
OVERLOAD = case(prog({"x0": SHAPE, "x1": SHAPE}, [
    ("s_silu_out", ["x1", "x0"], "v0", {"site": 0}),
    ("mul_", ["v0"], None, {"c": -1.0}),
    ("p_sin", ["x1"], "v1", {"site": 1}),
], outputs=["v1"]))


def verdict(stand_in, c):
    runs = execute(c, "cpu", compiled=stand_in)
    for br in runs:
        if br.compiled is not None:
            br.compiled.coverage = WHOLLY
    v = judge_case(c, runs, "cpu")
    assert v.status == contract.OK, v.reason
    return v


# ------------------------------------------------------------------ an optional written list

def test_a_write_to_a_lists_element_lost_is_flagged():
    def stand_in(x0, x1, x2):
        return (ops.s_optlist(x0, [x1, x2.clone()], 0),)   # the second element's write lost
    v = verdict(stand_in, LISTED)
    assert v.kinds() == [contract.WRONG_MUTATION]
    assert {d.where for d in v.divergences} == {"input x2"}


def test_each_element_written_to_a_copy_and_copied_back_is_clean():
    """What functionalization does with a written list: the op writes copies, the
    program's inputs get their values back."""
    def stand_in(x0, x1, x2):
        a, b = x1.clone(), x2.clone()
        v0 = ops.s_optlist(x0, [a, b], 0)
        x1.copy_(a)
        x2.copy_(b)
        return (v0,)
    assert verdict(stand_in, LISTED).kinds() == []


def test_the_list_given_none_writes_nothing():
    program = prog({"x0": SHAPE}, [("s_optlist_none", ["x0"], "v0", {"site": 0})], outputs=["v0"])
    x0 = torch.randn(3, 4)
    before = x0.clone()
    (v0,) = codegen.build(program)(x0)
    assert torch.equal(x0, before) and torch.equal(v0, torch.sin(before))
    assert "s_optlist(x0, None, 0)" in codegen.source(program)


# ------------------------------------------------------------------ a functional op and its out overload

def test_the_out_overload_in_the_functional_ops_place_is_clean():
    """A compiler may call the overload into a buffer of its own instead of the op: the
    tag declares the two the same computation."""
    def stand_in(x0):
        buffer = torch.empty_like(x0, memory_format=torch.contiguous_format)
        v0 = ops.s_silu.out(x0, 0, out=buffer)
        return (v0, ops.p_sin(x0, 1))
    assert verdict(stand_in, FUNCTIONAL).kinds() == []


def test_the_out_overloads_buffer_reused_before_it_is_read_is_flagged():
    def stand_in(x0):
        buffer = torch.empty_like(x0)
        ops.s_silu.out(x0, 0, out=buffer)
        buffer.copy_(ops.p_sin(x0, 1))   # the buffer given to the next result too
        return (buffer, buffer)
    v = verdict(stand_in, FUNCTIONAL)
    assert v.kinds() == [contract.WRONG_OUTPUT]
    assert {d.where for d in v.divergences} == {"output 0"}


def test_a_write_through_the_overloads_result_lost_to_its_buffer_is_flagged():
    def stand_in(x0, x1):
        v0 = ops.s_silu.out(x0, 0, out=x1).clone()   # the result no longer is the buffer
        v0.mul_(-1.0)
        return (ops.p_sin(x1, 1),)
    v = verdict(stand_in, OVERLOAD)
    assert set(v.kinds()) == {contract.WRONG_MUTATION, contract.WRONG_OUTPUT}
    assert {d.where for d in v.divergences} == {"input x1", "output 0"}


def test_the_overload_called_faithfully_is_clean():
    def stand_in(x0, x1):
        ops.s_silu.out(x0, 0, out=x1).mul_(-1.0)
        return (ops.p_sin(x1, 1),)
    assert verdict(stand_in, OVERLOAD).kinds() == []


@pytest.mark.compile
def test_inductor_lowers_the_functional_op_to_its_out_overload():
    """The reason the op has its overload: where Inductor lowers a functional custom op
    to the out variant ``to_out_variant`` finds, it does so for ``s_silu``.  Compiled
    without caches: a cached graph's key does not hold the overload's tags."""
    from torch._inductor import config, ir
    from torch._inductor.utils import run_and_get_code
    if "to_out_variant" not in inspect.getsource(ir.FallbackKernel.create):
        pytest.skip("this torch's Inductor calls a functional custom op as it is")
    torch._dynamo.reset()
    fn = torch.compile(codegen.build(FUNCTIONAL.program), backend="inductor", dynamic=False, fullgraph=True)
    with config.patch(force_disable_caches=True):
        _, code = run_and_get_code(fn, torch.randn(3, 4))
    assert "s_silu.out" in "\n".join(code)


# ------------------------------------------------------------------ scripts and briefs

EVERY_FORM = prog({"x0": SHAPE, "x1": SHAPE, "x2": SHAPE}, [
    ("clone", ["x1"], "v0", {}),
    ("s_optlist", ["x0", "v0", "x2"], "v1", {"site": 0}),
    ("s_optlist_none", ["v1"], "v2", {"site": 1}),
    ("s_silu", ["v2"], "v3", {"site": 2}),
    ("s_silu_out", ["x1", "v3"], "v4", {"site": 3}),
    ("mul_", ["v4"], None, {"c": 2.0}),
], outputs=["v0", "v3", "v4"])


def _standalone(ops_text: str, program_text: str) -> str:
    script = (f"{ops_text}\n\n{program_text}\n\ntorch.manual_seed(0)\n"
              "xs = [torch.randn(3, 4) for _ in range(3)]\n"
              "print([round(float(t.sum()), 4) for t in list(program(*xs)) + xs])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_forms_run_standalone_traced_and_plain():
    """A repro's snippets (the overload's schema and kernel among them) and a brief's
    plain ones, without a site (``int site, *``, ``site, *``) or ``_hit``, compute the
    same values and writes."""
    traced = _standalone(sources.script(EVERY_FORM), codegen.source(EVERY_FORM))
    plain_ops = sources.script(EVERY_FORM, brief=True, traced=False)
    assert not re.search(r"\bsite\b", plain_ops) and "_hit" not in plain_ops
    assert "s_silu.out(v3, out=x1)" in codegen.source(EVERY_FORM, plain=True)
    assert _standalone(custom_ops.HEADER + "\n" + plain_ops, codegen.source(EVERY_FORM, plain=True)) == traced


# ------------------------------------------------------------------ shrinking

def test_the_shrinker_takes_each_form_toward_the_plain_ones():
    program = prog({"x0": SHAPE, "x1": SHAPE, "x2": SHAPE}, [
        ("s_optlist", ["x0", "x1", "x2"], "v0", {"site": 0}),
        ("s_optlist_none", ["v0"], "v1", {"site": 1}),
        ("s_silu", ["v1"], "v2", {"site": 2}),
        ("s_silu_out", ["x2", "v2"], "v3", {"site": 3}),
    ], outputs=["v3"])
    c = case(program)
    for edit in statement_edits(c):
        assert complexity(edit) < complexity(c) or edit == c
    run = run_pass("rewrite", c, stays_while(lambda cc: len(cc.program.body) == 4))
    shrunk = [s.form for s in run.best.program.body]
    assert shrunk == ["s_opt_none", "s_opt_none", "p_sin", "m_scale"], shrunk
    assert not NEW_FORMS & {forms.form(f).name for f in shrunk}


# ------------------------------------------------------------------ a user's ops

USER_OPS = """
import torch

lib = torch.library.Library("optlistusr", "DEF")
lib.define("accumulate(Tensor x, Tensor(a!)[]? accs) -> Tensor")


def _accumulate(x, accs):
    if accs is not None:
        accs[0].add_(x)
        accs[1].mul_(0.5).add_(accs[0])
    return torch.sin(x)


lib.impl("accumulate", _accumulate, "CompositeExplicitAutograd")
torch.library.register_fake("optlistusr::accumulate", lambda x, accs: torch.empty_like(x), lib=lib)
"""


def test_a_users_optional_written_list_is_always_given_and_each_element_judged_written(tmp_path):
    """``--ops`` reads ``Tensor(a!)[]?`` as it reads ``Tensor(a!)[]``: a list of two
    written operands, which a program's call writes, and nothing else."""
    from fuzzer.user import library
    (tmp_path / "optlist_ops.py").write_text(USER_OPS)
    loaded = library.load(str(tmp_path / "optlist_ops.py"))
    assert not loaded.skipped and [(op.qualname, op.mutates, op.results) for op in loaded.ops] == \
        [("optlistusr::accumulate", (1, 2), 1)]
    form = forms.form("optlistusr::accumulate")
    inputs = {f"x{k}": SHAPE for k in range(form.arity)}
    program = prog(inputs, [("optlistusr::accumulate", list(inputs), "v0", {"site": 0})], outputs=["v0"])
    assert "accumulate(x0, [x1, x2])" in codegen.source(program)
    tensors = [torch.randn(3, 4) for _ in inputs]
    before = [t.clone() for t in tensors]
    codegen.build(program)(*tensors)
    assert {k for k, (a, b) in enumerate(zip(tensors, before)) if not torch.equal(a, b)} == {1, 2}
