"""A user's own custom ops: loading, the declaration check, generation, judging,
the command line, the Hypothesis strategy and the pytest plugin.

The example library (``examples/user_ops/opslib.py``) has honest ops of each kind,
one with a gufunc signature, and ``clamp_into``, which writes ``out`` without
declaring it.  ``vendor`` (written below) is a library in another style, as a
third party writes one: ``torch.library.define``/``impl``/``register_fake`` and a
``Library`` fragment, with nothing of dcefuzz in it but ``DCEFUZZ_SIGNATURES``.
Compiles use stand-in backends (Dynamo only) except where the flow itself is
the point.
"""

import dataclasses
import json
import textwrap
from pathlib import Path

import backends
import pytest
import torch
from click.testing import CliRunner
from helpers import prog
from torch._dynamo import list_backends, register_backend

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.session import Session, run_campaign
from fuzzer.cli import main
from fuzzer.corpus.store import load
from fuzzer.judge import contract
from fuzzer.judge.observe import Event, Run
from fuzzer.program import codegen, forms
from fuzzer.program.custom_ops import EFFECTFUL, MUTATING, PURE
from fuzzer.program.form_record import BACKWARD
from fuzzer.program.generate import OpSet, generate
from fuzzer.program.ir import Case, Mode, Program
from fuzzer.program.liveness import live_statements
from fuzzer.user import audit, declared, gufunc, library, selection

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "user_ops"
OPSLIB = str(EXAMPLE / "opslib.py")

VENDOR = textwrap.dedent('''
    """A vendor's kernels, registered the low-level way."""
    import torch

    DCEFUZZ_SIGNATURES = {"vendor::rowscale": "(n,k),(n)->(n,k)"}

    torch.library.define("vendor::rowscale", "(Tensor x, Tensor s) -> Tensor")


    @torch.library.impl("vendor::rowscale", "cpu")
    def _rowscale(x, s):
        return x * s[:, None]


    @torch.library.register_fake("vendor::rowscale")
    def _(x, s):
        return torch.empty_like(x)


    lib = torch.library.Library("vendor", "FRAGMENT")
    lib.define("bump_(Tensor(a!) x, float by) -> ()")


    def _bump(x, by):
        x.add_(by)


    lib.impl("bump_", _bump, "CompositeExplicitAutograd")
    torch.library.register_fake("vendor::bump_", lambda x, by: None, lib=lib)
''')

DROP_OPSLIB_LOG = "dcefuzz_test_drop_opslib_log"


def _drop_opslib_log(gm, example_inputs):
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and "opslib.log_sum" in str(node.target):
            gm.graph.erase_node(node)
    gm.recompile()
    return gm.forward


if DROP_OPSLIB_LOG not in list_backends(exclude_tags=()):
    register_backend(_drop_opslib_log, name=DROP_OPSLIB_LOG)


@pytest.fixture(scope="module")
def opslib():
    return library.load(OPSLIB)


@pytest.fixture(scope="module")
def chosen(opslib):
    return selection.select([OPSLIB], only=True)


@pytest.fixture(scope="module")
def vendor(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vendor")
    (folder / "vendor_kernels.py").write_text(VENDOR)
    return library.load(str(folder / "vendor_kernels.py"))


# ------------------------------------------------------------------ signatures

def test_a_gufunc_signature_binds_letters_to_dims():
    g = gufunc.parse("(m,n),(n,p)->(m,p)", 2, 1)
    assert g.results([("s0", "s1"), ("s1", "s2")], 1) == [("s0", "s2")]
    assert g.letters == ["m", "n", "p"]
    with pytest.raises(gufunc.Mismatch):
        g.bind([("s0", "s1"), ("s0", "s2")])        # inner dims differ
    with pytest.raises(gufunc.Mismatch):
        g.bind([("s0",)])                            # rank
    assert g.bind([("s0", "s1")]) == {"m": "s0", "n": "s1"}   # a prefix is checked alone
    fixed = gufunc.parse("(n,3)->(n)", 1, 1)
    assert fixed.results([("s0", "3")], 1) == [("s0",)]
    with pytest.raises(gufunc.Mismatch):
        fixed.bind([("s0", "s1")])


def test_without_a_signature_every_tensor_has_one_shape():
    g = gufunc.parse(None, 2, 1)
    assert g.results([("s0", "s1"), ("s0", "s1")], 1) == [("s0", "s1")]
    with pytest.raises(gufunc.Mismatch):
        g.results([("s0",), ("s0 - 1",)], 1)


@pytest.mark.parametrize("text, needle", [
    ("(m,n)", "reads like"),
    ("(m,n)->(k)", "not dims of any input"),
    ("(m),(m)->(m)", "takes 1 tensors"),
    ("m,n->m", "expected tuples"),
])
def test_a_bad_signature_says_what_is_wrong(text, needle):
    with pytest.raises(gufunc.SignatureError, match=needle):
        gufunc.parse(text, 1, 1)


# ------------------------------------------------------------------- loading

def test_the_example_library_is_read_off_its_schemas(opslib):
    kinds = {op.qualname: (op.declaration, op.mutates, op.results) for op in opslib.ops}
    assert kinds == {
        "opslib::accumulate": (MUTATING, (0,), 0),
        "opslib::clamp_into": (PURE, (), 1),       # what it declares, not what it does
        "opslib::log_sum": (EFFECTFUL, (), 0),
        "opslib::matmul": (PURE, (), 1),
        "opslib::scaled_tanh": (PURE, (), 1),
    }
    assert library.op("opslib::matmul").gufunc.text == "(m,n),(n,p)->(m,p)"
    assert [a.values for a in library.op("opslib::scaled_tanh").scalars] == [(0.5, 2.0)]
    assert opslib.ref.root == "examples/user_ops" or Path(opslib.ref.root).is_absolute()


def test_a_library_in_another_style_is_found_whole(vendor):
    ops = {op.qualname: op for op in vendor.ops}
    assert set(ops) == {"vendor::rowscale", "vendor::bump_"}
    assert ops["vendor::bump_"].declaration == MUTATING
    assert [a.values for a in ops["vendor::bump_"].scalars] == [declared.SCALAR_VALUES["float"]]
    assert ops["vendor::rowscale"].gufunc.inputs == (("n", "k"), ("n",))


def test_a_module_that_cannot_be_loaded_says_why(tmp_path):
    with pytest.raises(library.LoadError, match="no such file"):
        library.ModuleRef.of(str(tmp_path / "missing.py"))
    empty = tmp_path / "no_ops.py"
    empty.write_text("X = 1\n")
    with pytest.raises(library.LoadError, match="registers no custom op"):
        library.load(str(empty))
    broken = tmp_path / "broken_ops.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(library.LoadError, match="boom"):
        library.load(str(broken))


# ------------------------------------------------------------ declaration check

def test_the_dishonest_op_is_a_declaration_finding_naming_the_argument(chosen):
    findings = chosen.findings
    assert [(p.op, p.check, p.argument) for p in findings] == [("opslib::clamp_into", "undeclared-write", "out")]
    assert "'out'" in findings[0].message and "mutates_args" in findings[0].message
    assert chosen.left_out == ["opslib::clamp_into"]
    assert "opslib::clamp_into" not in chosen.ops.user and len(chosen.ops.user) == 4


def test_the_declaration_check_catches_what_it_claims(tmp_path):
    """Each check on a small lying op, and an honest twin that passes."""
    (tmp_path / "liars.py").write_text(textwrap.dedent('''
        import torch

        @torch.library.custom_op("liars::badfake", mutates_args=())
        def badfake(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        @badfake.register_fake
        def _(x):
            return x.new_empty(x.shape[:-1])

        @torch.library.custom_op("liars::never", mutates_args=("x",))
        def never(x: torch.Tensor) -> None:
            pass

        @never.register_fake
        def _(x):
            return None

        @torch.library.custom_op("liars::honest", mutates_args=("x",))
        def honest(x: torch.Tensor) -> None:
            x.mul_(2)

        @honest.register_fake
        def _(x):
            return None
    '''))
    ops = {op.qualname: op for op in library.load(str(tmp_path / "liars.py")).ops}
    bad = audit.audit(ops["liars::badfake"]).problems
    assert [p.check for p in bad] == ["test_faketensor"] and "Shapes" in bad[0].message
    never = audit.audit(ops["liars::never"], opcheck=False).problems
    assert [(p.check, p.severity, p.argument) for p in never] == [("unused-declaration", audit.WARNING, "x")]
    assert audit.audit(ops["liars::honest"]).problems == ()


# ---------------------------------------------------------------- generation

def test_user_ops_appear_in_programs_and_the_left_out_one_never(chosen):
    used = set()
    for seed in range(30):
        program = generate(seed, ops=chosen.ops).program
        used |= set(program.user_ops())
        assert not program.custom_ops(), "--only-user-ops: none of dcefuzz's own"
        if program.user_ops():
            assert program.imports == chosen.ops.imports
    assert used == set(chosen.ops.user)
    assert generate(7, ops=chosen.ops) == generate(7, ops=chosen.ops)


def test_a_program_calling_user_ops_round_trips_through_json(chosen):
    case = next(c for c in (generate(s, ops=chosen.ops) for s in range(50))
                if "opslib::matmul" in c.program.user_ops())
    again = Case.from_json(json.loads(json.dumps(case.to_json())))
    assert again == case
    text = codegen.source(case.program)
    assert "torch.ops.opslib.matmul(" in text
    assert case.program.to_json()["imports"] == [{"module": "opslib", "path": chosen.ops.imports[0][1]}]
    assert not {s for s in contract_dead(case.program)}, "missed-dce is not judged for user ops"


def contract_dead(program: Program):
    from fuzzer.program.liveness import dead_pure_sites
    return dead_pure_sites(program)


def test_programs_without_user_ops_are_drawn_as_before(chosen):
    assert generate(11).program == generate(11, ops=selection.Selection().ops).program
    assert forms.form("opslib::matmul").site_traced is False


# --------------------------------------------------- what a declaration says, all of it

TRICKY = textwrap.dedent('''
    """Ops whose declarations the check must read whole: scalars on which they lie or
    fail, a write with an effect, a backward formula."""
    import torch


    def _ordered(opdef):
        if hasattr(opdef, "register_effect"):
            from torch._library.effects import EffectType
            opdef.register_effect(EffectType.ORDERED)
        else:
            from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
            _register_effectful_op(opdef._opoverload, _EffectType.ORDERED)


    @torch.library.custom_op("tricky::flagwrite", mutates_args=())
    def flagwrite(x: torch.Tensor, flag: bool) -> torch.Tensor:
        if flag:            # a lie only for flag=True: False is its first value
            x.mul_(2)
        return x * 3


    @flagwrite.register_fake
    def _(x, flag):
        return torch.empty_like(x)


    @torch.library.custom_op("tricky::picky", mutates_args=())
    def picky(x: torch.Tensor, k: int) -> torch.Tensor:
        if k == 2:
            raise ValueError("k must be odd")
        return x * k


    @picky.register_fake
    def _(x, k):
        return torch.empty_like(x)


    @torch.library.custom_op("tricky::logged_add", mutates_args=("a",))
    def logged_add(a: torch.Tensor, b: torch.Tensor) -> None:
        a.add_(b)


    @logged_add.register_fake
    def _(a, b):
        return None


    _ordered(logged_add)


    @torch.library.custom_op("tricky::double", mutates_args=())
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2


    @double.register_fake
    def _(x):
        return torch.empty_like(x)


    double.register_autograd(lambda ctx, grad: grad * 2)


    @torch.library.custom_op("tricky::badgrad", mutates_args=())
    def badgrad(x: torch.Tensor) -> torch.Tensor:
        return x * 2


    @badgrad.register_fake
    def _(x):
        return torch.empty_like(x)


    def _broken(ctx, grad):
        raise RuntimeError("this backward is broken")


    badgrad.register_autograd(_broken)
''')


@pytest.fixture(scope="module")
def tricky(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tricky")
    (folder / "tricky_ops.py").write_text(TRICKY)
    return library.load(str(folder / "tricky_ops.py"))


def test_every_value_of_every_scalar_is_checked(tricky):
    """The op writes its input only for flag=True; checking the first value alone
    passed it, and campaigns blamed the compiler for its lie."""
    checked = audit.audit(library.op("tricky::flagwrite"), opcheck=False)
    assert [(p.check, p.argument) for p in checked.findings] == [("undeclared-write", "x")]
    assert "with flag=True" in checked.findings[0].message


def test_a_value_the_op_fails_on_is_dropped_from_what_programs_draw(tricky):
    checked = audit.audit(library.op("tricky::picky"))
    assert checked.findings == []
    assert [(p.check, p.argument, p.severity) for p in checked.problems] == [("value-dropped", "k", audit.WARNING)]
    assert [a.values for a in checked.op.scalars] == [(1, 3)]
    chosen = selection.select([tricky.ref], only=True)
    drawn = {s.attrs["scalars"]["k"] for seed in range(60) for s in generate(seed, ops=chosen.ops).program.body
             if s.form == "tricky::picky"}
    assert drawn and 2 not in drawn
    assert chosen.ops.adjusted and "tricky::picky" in chosen.ops.user


def test_an_op_that_writes_and_has_an_effect_is_judged_both_ways(tricky):
    op = library.op("tricky::logged_add")
    assert op.declaration == MUTATING and op.effect and forms.form(op.qualname).is_effectful
    # its call on a dead intermediate is live: the effect must run
    dead = _user_case(prog({"x0": ("s0",), "x1": ("s0",)}, [
        ("clone", ["x0"], "v0", {}), ("tricky::logged_add", ["v0", "x1"], None, {"site": 0})]))
    assert live_statements(dead.program) == {0, 1}
    c = _user_case(prog({"x0": ("s0",), "x1": ("s0",)}, [
        ("tricky::logged_add", ["x0", "x1"], None, {"site": 0}), ("e_log", ["x0"], None, {"site": 1})]))
    ops = torch.ops

    def reordered(x0, x1):
        ops.dcefuzz.e_log(x0 + 0.0, 1)   # runs before the effectful write it follows
        ops.tricky.logged_add(x0, x1)
        return ()

    def unwritten(x0, x1):
        ops.tricky.logged_add(x0.clone(), x1)   # the write is lost, the effect kept
        ops.dcefuzz.e_log(x0, 1)
        return ()
    assert _user_verdict(reordered, c).kinds() == [contract.EFFECT_LOG]
    assert contract.WRONG_MUTATION in _user_verdict(unwritten, c).kinds()


def test_a_users_backward_is_differentiated_through(tricky):
    assert library.op("tricky::double").backward and forms.form("tricky::double").grad == BACKWARD
    grad = dataclasses.replace(prog({"x0": ("s0",)}, [("tricky::double", ["x0"], "v0", {"site": 0})],
                                    outputs=["v0"]), mode=Mode(grad=True))
    c = _user_case(grad)
    _, step = codegen.build_with_step(c.program)

    def with_grad_of(scale):
        def program(x0):
            v0 = torch.ops.tricky.double(x0)
            return (v0 + (v0 - v0.detach()) * (scale - 1.0),)
        return lambda x0: step(program, x0)
    assert _user_verdict(with_grad_of(1.0), c).kinds() == []
    wrong = _user_verdict(with_grad_of(3.0), c)
    assert wrong.kinds() == [contract.WRONG_OUTPUT] and {d.where for d in wrong.divergences} == {"output 1"}
    # a backward that fails is found by the check, and programs then take no gradient through it
    fresh = declared.read("tricky::badgrad")   # as read, before any campaign's check adjusted it
    assert fresh.backward
    checked = audit.audit(fresh, opcheck=False)
    assert [p.check for p in checked.problems] == ["backward"] and not checked.op.backward


def _user_case(program):
    from helpers import case

    return case(dataclasses.replace(program, imports=(("tricky_ops", "."),)))


def _user_verdict(stand_in, c):
    from fuzzer.judge.execute import execute
    from fuzzer.judge.observe import Coverage
    from fuzzer.judge.trial import judge_case

    runs = execute(c, "cpu", compiled=stand_in)
    for br in runs:
        br.compiled.coverage = Coverage(frames=1, graphs=1)
    return judge_case(c, runs, "cpu")


# ------------------------------------------------------------------ contract

def _run(effects):
    return Run(outputs=[], inputs_after=[], effects=effects)


def test_the_effect_clause_on_user_events_without_sites():
    t = torch.ones(2)
    a, b = Event("opslib::log_sum", None, (t,)), Event("opslib::log_sum", None, (t * 3,))
    eager = _run([a, b])
    assert contract.check_effects(0, eager, eager, _run([a, b])) == []            # allowed: the same
    missing = contract.check_effects(0, eager, eager, _run([a]))
    assert missing[0].symptoms == (contract.MISSING,) and "missing opslib::log_sum (" in missing[0].detail
    swapped = contract.check_effects(0, eager, eager, _run([b, a]))            # same names, data swapped
    assert {d.symptoms for d in swapped} == {(contract.DATA,)} and len(swapped) == 2
    assert "event 0 (opslib::log_sum) input 0" in swapped[0].where


# --------------------------------------------------------------- campaigns

@pytest.mark.compile
def test_a_campaign_with_user_ops_judges_them_and_names_the_module(tmp_path, chosen):
    config = Config(seed=1, device="cpu", corpus_dir=str(tmp_path), backend=DROP_OPSLIB_LOG,
                    ops=chosen.ops, declarations=len(chosen.findings), triage=False)
    stats = run_campaign(Session(config, Budget(programs=8), log=lambda line: None))
    assert stats.findings["declaration"] == 1
    assert stats.findings["effect-log"] >= 1
    entries = [load(p) for p in tmp_path.glob("*.json")]
    effect = [e for e in entries if e.kind == "effect-log"]
    assert effect and all(e.case.program.user_ops() == ["opslib::log_sum"] for e in effect)
    assert all("opslib::clamp_into" not in e.case.program.user_ops() for e in entries)
    # an entry shrunk past every user op imports nothing
    assert all(bool(e.case.program.imports) == bool(e.case.program.user_ops()) for e in entries)
    script = tmp_path / f"{effect[0].id}.py"
    assert "importlib.import_module('opslib')" in script.read_text()


def test_a_faithful_compile_of_user_ops_is_clean(tmp_path, chosen, vendor):
    both = selection.select([OPSLIB, vendor.ref], only=True, check=False)
    ops = OpSet(builtin=False, user=tuple(q for q in both.ops.user if q != "opslib::clamp_into"),
                imports=both.ops.imports)
    config = Config(seed=2, device="cpu", corpus_dir=str(tmp_path), backend=backends.FAITHFUL, ops=ops,
                    triage=False)
    stats = run_campaign(Session(config, Budget(programs=8), log=lambda line: None))
    assert stats.programs == 8 and not stats.findings, stats.summary()
    vendor_calls = sum(1 for s in range(40) for q in generate(s, ops=ops).program.user_ops() if q.startswith("vendor"))
    assert vendor_calls, "the vendor's ops are drawn"


# ------------------------------------------------------------ command line

def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_check_ops_exits_1_and_names_the_op_and_argument():
    result = invoke("check-ops", OPSLIB)
    assert result.exit_code == 1, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("opslib::clamp_into"))
    assert row.split()[1:3] == ["pure", "finding"] and "writes argument 'out'" in row
    data = json.loads(invoke("check-ops", OPSLIB, "--json").output)
    assert {o["op"]: o["ok"] for o in data["ops"]}["opslib::clamp_into"] is False
    assert invoke("check-ops", "no/such/ops.py").exit_code == 2


def test_gen_with_ops_prints_the_user_calls():
    result = invoke("gen", "--seed", "4", "--ops", OPSLIB, "--only-user-ops", "--features", "none")
    assert result.exit_code == 0, result.output
    assert "torch.ops.opslib." in result.output and "torch.ops.dcefuzz." not in result.output


@pytest.mark.parametrize("args, needle", [
    (["run", "--programs", "1", "--ops", "no/such/ops.py"], "no such file"),
    (["run", "--programs", "1", "--only-user-ops"], "--only-user-ops needs --ops"),
    (["run", "--programs", "1", "--cache-pairs", "--ops", OPSLIB], "do not take --ops"),
])
def test_run_refuses_bad_ops_with_exit_2(args, needle, tmp_path):
    result = invoke(*args, "--state", tmp_path / "c")
    assert result.exit_code == 2 and needle in result.output, result.output


def test_strict_declarations_refuse_to_start(tmp_path):
    result = invoke("run", "--programs", "1", "--jobs", "0", "--ops", OPSLIB, "--strict-declarations",
                    "--state", tmp_path / "c")
    assert result.exit_code == 1 and "--strict-declarations refuses to start" in result.output
    problems = json.loads((tmp_path / "c" / "declarations.json").read_text())
    assert [(p["op"], p["argument"]) for p in problems] == [("opslib::clamp_into", "out")]


# ------------------------------------------------------ Hypothesis, pytest plugin

@pytest.mark.compile
def test_the_hypothesis_example_passes_honest_and_fails_planted(pytester, monkeypatch):
    """The README's property test: clean on a faithful compile (aot_eager: no
    Inductor), and a readable failure, shrunk to one call, with a fault planted."""
    from fuzzer import faults

    pytester.copy_example(str(EXAMPLE / "test_opslib.py"))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.setenv("OPSLIB_BACKEND", "aot_eager")
    monkeypatch.chdir(ROOT)  # the module's folder is recorded relative to here
    test_file = pytester.path / "test_opslib.py"
    honest = pytester.runpytest_inprocess(str(test_file), "-p", "no:cacheprovider")
    honest.assert_outcomes(passed=1)
    with faults.planted("effect-dce"):
        planted = pytester.runpytest_inprocess(str(test_file), "-p", "no:cacheprovider")
    planted.assert_outcomes(failed=1)
    text = planted.stdout.str()
    assert "torch.compile broke the contract: effect-log" in text
    assert "missing opslib::log_sum" in text
    assert "body=(Stmt(form='opslib::log_sum'" in text, "shrunk to the one call"


def test_the_plugin_collects_the_committed_corpus(pytester):
    corpus = ROOT / "corpus"
    result = pytester.runpytest_inprocess("--dcefuzz-corpus", str(corpus), "--collect-only", "-q")
    collected = {line.split("::")[-1] for line in result.stdout.lines if ".json::" in line}
    from fuzzer.corpus.store import entries_in

    assert collected == {p.stem for p in entries_in([corpus])[0]}  # upstream.json is no entry


def test_the_plugin_fails_a_reproducing_entry_and_expects_a_known_one(pytester, tmp_path):
    from test_corpus import make_entry

    from fuzzer.corpus.store import save

    folder = tmp_path / "corpus"
    bug, _ = save(make_entry(signature="effect-log|missing :: bug", backend=backends.DROP_LOG), folder)
    known = make_entry(signature="effect-log|missing :: known", backend=backends.DROP_LOG)
    known.known_bug = "tracked upstream"
    save(known, folder)
    save(make_entry(signature="effect-log|missing :: fixed", backend=backends.FAITHFUL), folder)
    result = pytester.runpytest_inprocess("--dcefuzz-corpus", str(folder), "-rA", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    failed = [line for line in result.stdout.lines if line.startswith("FAILED")]
    assert len(failed) == 1 and bug.stem in failed[0]
    assert "known bug: tracked upstream" in result.stdout.str()
    assert CliRunner().invoke(main, ["known", str(bug)]).exit_code == 0
    assert load(bug).known_bug is not None
    again = pytester.runpytest_inprocess("--dcefuzz-corpus", str(folder), "-p", "no:cacheprovider")
    again.assert_outcomes(passed=1, xfailed=2)


def test_the_plugin_refuses_a_missing_folder(pytester):
    result = pytester.runpytest_inprocess("--dcefuzz-corpus", "no/such/folder")
    assert result.ret != 0 and "no such folder" in result.stderr.str() + result.stdout.str()


WRITES_AND_LOGS = textwrap.dedent('''
    """One op that writes an argument and has an effect too."""
    import torch


    @torch.library.custom_op("both::logged_add", mutates_args=("a",))
    def logged_add(a: torch.Tensor, b: torch.Tensor) -> None:
        a.add_(b)


    @logged_add.register_fake
    def _(a, b):
        return None


    if hasattr(logged_add, "register_effect"):
        from torch._library.effects import EffectType
        logged_add.register_effect(EffectType.ORDERED)
    else:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _register_effectful_op(logged_add._opoverload, _EffectType.ORDERED)
''')


def test_check_ops_shows_an_op_that_writes_and_has_an_effect_as_both(tmp_path):
    """It is judged both ways (its writes, its calls' order), so the table and the
    JSON say both, not only that it writes."""
    module = tmp_path / "both_ops.py"
    module.write_text(WRITES_AND_LOGS)
    result = invoke("check-ops", module)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("both::logged_add"))
    assert row.split()[1:3] == ["mutating+effectful", "used"]
    data = json.loads(invoke("check-ops", module, "--json").output)
    op, = data["ops"]
    assert op["kinds"] == ["mutating", "effectful"] and op["declaration"] == MUTATING
    row, = data["table"]
    assert row["kind"] == "mutating+effectful" and row["kinds"] == ["mutating", "effectful"]



class Knob:
    """A value-type opaque class a user's op takes (registered by the test that uses it)."""

    def __init__(self, k):
        self.k = k

    def __eq__(self, other):
        return isinstance(other, Knob) and other.k == self.k

    def __hash__(self):
        return hash(self.k)

    def __fx_repr__(self):
        return f"Knob({self.k!r})", {"Knob": Knob}


def test_an_op_taking_an_opaque_object_is_skipped_naming_its_class_and_kind():
    """A schema says ``PyObject`` of an opaque argument; the class is read off the
    function the op was made from, with the kind the registry gives it."""
    from torch._library.opaque_object import is_opaque_type, register_opaque_type

    if not is_opaque_type(Knob):
        register_opaque_type(Knob, typ="value")

    def knobbed(x: torch.Tensor, knob: Knob) -> torch.Tensor:
        return x * knob.k

    torch.library.custom_op("dcefuzz_test_opaque::knobbed", knobbed, mutates_args=())
    with pytest.raises(declared.Unsupported, match=r"argument 'knob' is an object of .*Knob, an opaque value type"):
        declared.read("dcefuzz_test_opaque::knobbed")


def test_most_programs_call_a_users_op_beside_every_family_of_dcefuzzs_own(opslib):
    """``--ops`` with dcefuzz's own ops and every feature on: a user's five ops take
    ``user_form_share`` of their categories' draws, so most programs call one."""
    from fuzzer.program import features

    ops = selection.select([OPSLIB], check=False).ops
    calling = sum(bool(generate(seed, features=features.parse("all"), ops=ops).program.user_ops())
                  for seed in range(20))
    assert calling >= 10, calling
