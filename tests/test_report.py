"""dcefuzz report: a corpus bug as a PyTorch issue, and its brief repro failing on this torch."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.corpus.bugs import group
from fuzzer.corpus.store import entries_in, load
from fuzzer.judge import kinds
from fuzzer.limits import REPORT
from fuzzer.render import brief, repro

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
#: the committed corpus's bugs: (bug id, its smallest entry)
BUGS = {"bug-fbb71133b1": "effect-log-915158cff0e3", "bug-ac73b21939": "wrong-mutation-3e93a770411a",
        "bug-78154481bb": "compile-error-736b0f5852f2", "bug-adab6f31be": "effect-log-53422b20f411"}
REORDERED = "bug-fbb71133b1"
#: a stale-cache bug of the committed corpus: a corrected mutates_args, the AOTAutograd cache
STALE = {"bug-e9c7a74992": "stale-cache-238f7f233356"}
#: a stale-cache bug of a setting, not a declaration: donated buffers turned off, the FX graph cache
SETTING = {"bug-72ca8569a7": "stale-cache-59fc43d2c229"}
#: a stale-cache bug whose compiled run raises, on both sides: a wrong fake impl's shape
RAISING = {"bug-a5abdd27c9": "stale-cache-e5ad2999bb7c"}
#: a bug of each target whose brief is not a plain torch.compile: export (a guard
#: missing from `.module()`), compiled autograd, torch.func.grad
TARGETED = {"bug-8b4ca801d7": "runtime-error-a812959dad2a", "bug-1fbce7ea9b": "compile-error-8670a9d59c2b",
            "bug-ed6bbb917f": "wrong-output-8e18f568ef81"}
#: every bug a test here names, with its smallest entry
NAMED = {**BUGS, **STALE, **SETTING, **RAISING, **TARGETED}


def invoke(*args, evidence: bool = False):
    """The command; a report's compile of its entry and torch's collect_env only
    where a test looks at them (each costs seconds)."""
    quick = [] if evidence or args[0] != "report" else ["--no-output-code", "--no-collect-env"]
    return CliRunner().invoke(main, [str(a) for a in args] + quick)


def inline_repro(markdown: str) -> str:
    return re.search(r"```python\n(.*?)```", markdown, re.S).group(1)


@pytest.fixture(scope="module")
def reports():
    return {bug: invoke("report", bug, CORPUS) for bug in BUGS}


def test_the_corpus_has_the_bugs_the_tests_name():
    found = {b.id: b.smallest for b in group(load(p) for p in entries_in([CORPUS])[0])}
    assert {bug: found.get(bug) for bug in NAMED} == NAMED


def test_a_report_has_every_section(reports):
    for bug, result in reports.items():
        assert result.exit_code == 0, result.output
        text = result.stdout
        assert text.startswith("# [inductor] ")
        # "under dynamic shapes" only for bugs that static shapes do not show
        dynamic_only = bug in ("bug-78154481bb", "bug-adab6f31be")
        assert ("under dynamic shapes (" in text.splitlines()[0]) == dynamic_only, text.splitlines()[0]
        for section in ("### 🐛 Describe the bug", "```python", "What eager and compiled do",
                        "### Where it goes wrong", "**Stage**: `inductor`", "**Shapes**", "**CompilerBisector**",
                        "| switch | setting | the bug |", "Found by dcefuzz",
                        f"attached (`{BUGS[bug]}.py`", "### Versions", "- Reproduces on: "):
            assert section in text, (bug, section)
        assert "2.13.0+cpu" in text.split("- Reproduces on: ", 1)[1].splitlines()[0]
        assert f"dcefuzz repro {CORPUS / BUGS[bug]}.json" in result.stderr
    text = reports[REORDERED].stdout
    assert text.splitlines()[0] == ("# [inductor] the ordering edge between ORDERED effectful custom-op calls is "
                                    "dropped (reorder_for_peak_memory)")
    assert "- **Cause**: the ordering edge" in text
    assert "- eager calls the effectful ops in the order `e_log@0, e_tap@1`" in text
    assert "- compiled calls them in the order `e_tap@1, e_log@0`" in text
    assert "| reorder_for_peak_memory | `torch._inductor.config.reorder_for_peak_memory = False` | **gone** |" in text
    assert "**Workaround**: `torch._inductor.config.reorder_for_peak_memory = False`" in text
    assert "8 other distinct minimal programs hit the same culprit (10 hits in all)" in text  # one cause: nine entries
    mutation = reports["bug-ac73b21939"].stdout
    assert "`torch._inductor.config.disabled_passes = 'REINPLACE_INPLACEABLE_OPS'` | **gone** |" in mutation
    assert "- input x2: values differ: max error 0.499" in mutation
    error = reports["bug-78154481bb"].stdout
    assert "- compiled: raises `InductorError: AssertionError:`" in error
    # an error's title names where it was raised, as its class does
    assert error.splitlines()[0].startswith("# [inductor] torch.compile raises AssertionError in "
                                            "Match.replace_by_example under dynamic shapes")


def test_the_inline_repro_is_short_and_parses(reports):
    for bug, result in reports.items():
        code = inline_repro(result.stdout)
        assert len(code.splitlines()) <= REPORT.brief_lines, bug
        ast.parse(code)
        assert code == kinds.brief(load(CORPUS / f"{BUGS[bug]}.json"))
        assert "torch.compile(program, dynamic=True, backend='inductor')" in code


def test_a_brief_keeps_the_fuzzers_scaffolding_only_where_its_bug_reads_a_trace(reports):
    """Wrong values and a compile error need no call trace: their briefs write the ops
    as a user would (no ``_hit``, no site argument); an effect order is read from the
    log ``_hit`` keeps, so that brief keeps it (``test_each_brief_repro_fails_on_this_torch``
    runs both kinds)."""
    for bug in ("bug-ac73b21939", "bug-78154481bb"):
        code = inline_repro(reports[bug].stdout)
        assert "_hit" not in code and "site" not in code, bug
    mutation = inline_repro(reports["bug-ac73b21939"].stdout)
    assert "def m_swap(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:" in mutation
    assert "v0 = torch.ops.dcefuzz.m_swap(x1, x0)" in mutation
    ordered = inline_repro(reports[REORDERED].stdout)
    assert 'def _hit(op, site, *inputs, effect=False):' in ordered and "e_log(v0, 0)" in ordered


def test_a_stale_cache_report_names_the_change_the_cache_and_the_workaround():
    (bug, entry_id), = STALE.items()
    result = invoke("report", bug, CORPUS)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.splitlines()[0] == ("# [aotdispatch] AOTAutograd cache serves code compiled for a custom op's "
                                    "old declaration after its mutates_args is corrected")
    for section in ("`m_scale: mutates_args () -> ('a',)`", "Compiled from empty caches, it is right",
                    "**Cache**: the AOTAutograd cache", "With the FX graph cache alone",
                    "**Workaround**: `torch._functorch.config.enable_autograd_cache = False`",
                    "runs the old and the new declaration in two processes", "- Reproduces on: "):
        assert section in text, section
    # an edited declaration: maintainers have said such an edit need not invalidate the caches
    said = text.split("### What maintainers have said\n\n", 1)[1].split("\n\n", 1)[0]
    assert said.startswith("PyTorch maintainers have said that editing a custom op need not invalidate")
    assert "pytorch/pytorch#144344" in said and "pytorch/pytorch#187830" in said
    code = inline_repro(text)
    assert len(code.splitlines()) <= REPORT.pair_brief_lines
    ast.parse(code)
    assert code == kinds.brief(load(CORPUS / f"{entry_id}.json"))


def test_a_stale_cache_report_of_a_setting_names_the_setting_and_the_second_backward():
    (bug, entry_id), = SETTING.items()
    result = invoke("report", bug, CORPUS)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.splitlines()[0] == ("# [inductor] FX graph cache serves code compiled under the old setting after "
                                    "donated buffers are turned off to take the gradients twice")
    for section in ("a setting changed (`donated_buffer: on -> off", "torch._functorch.config.donated_buffer = False",
                    "takes the gradients twice (`retain_graph=True` the first time)",
                    "Compiled from empty caches, it is right", "**Cache**: the FX graph cache",
                    "does not change with the setting either", "after changing the setting"):
        assert section in text, section
    # a setting is not an edited op: what maintainers said of those is not this bug's
    assert "What maintainers have said" not in text and "#144344" not in text
    code = inline_repro(text)
    assert len(code.splitlines()) <= REPORT.pair_grad_brief_lines
    ast.parse(code)
    assert code == kinds.brief(load(CORPUS / f"{entry_id}.json"))
    assert "torch._functorch.config.donated_buffer = True if OLD else False" in code
    assert "with_grads = functools.partial(with_grads, twice=not OLD)" in code


def test_a_prefix_or_an_entry_names_a_bug():
    by_prefix = invoke("report", "fbb7", CORPUS)
    assert by_prefix.exit_code == 0 and "reorder_for_peak_memory" in by_prefix.stdout.splitlines()[0]
    by_entry = invoke("report", "effect-log-c322b74b2a9e", CORPUS)
    assert by_entry.exit_code == 0
    assert "the one above is effect-log-c322b74b2a9e" in by_entry.stdout
    assert "reorder_for_peak_memory" in by_entry.stdout.splitlines()[0]


@pytest.mark.parametrize("name, message", [
    ("bug-0000000000", "no bug or entry 'bug-0000000000' here (bugs: bug-"),
    ("nothing-here", "no bug or entry 'nothing-here'"),
    ("bug-", "'bug-' is ambiguous: it matches bug-"),
])
def test_an_unknown_or_ambiguous_bug_exits_2(name, message):
    result = invoke("report", name, CORPUS)
    assert result.exit_code == 2
    assert message in result.stderr and result.stdout == ""


def test_out_writes_the_issue_and_both_scripts(tmp_path):
    result = invoke("report", REORDERED, CORPUS, "--out", tmp_path / "issue")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "issue"
    assert sorted(p.name for p in folder.iterdir()) == [f"{REORDERED}-full.py", f"{REORDERED}-repro.py",
                                                        f"{REORDERED}.md"]
    markdown = (folder / f"{REORDERED}.md").read_text()
    assert markdown == result.stdout
    assert f"attached (`{REORDERED}-full.py`" in markdown
    assert (folder / f"{REORDERED}-full.py").read_text() == repro.render(load(CORPUS / f"{BUGS[REORDERED]}.json"))
    assert (folder / f"{REORDERED}-repro.py").read_text() == inline_repro(markdown)


@pytest.mark.compile
def test_a_report_quotes_the_output_code_that_shows_the_bug_and_the_environment(monkeypatch):
    from torch.utils import collect_env

    monkeypatch.setattr(collect_env, "get_pretty_env_info", lambda: "PyTorch version: 9.9 (stand-in)")
    text = invoke("report", REORDERED, CORPUS, evidence=True).stdout
    code = text.split("Inductor's output code for the failing binding", 1)[1].split("```python\n", 1)[1]
    code = code.split("```", 1)[0]
    # the reordering is there to see: the tap the program makes second is called first
    assert code.index("torch.ops.dcefuzz.e_tap.default(") < code.index("torch.ops.dcefuzz.e_log.default(")
    assert "def call" not in code and code.strip().endswith("return (buf0, )")
    assert "<summary>collect_env" in text and "PyTorch version: 9.9 (stand-in)" in text
    assert text.index("### Versions") < text.index("PyTorch version: 9.9")


def test_only_a_single_inductor_compiles_wrong_result_shows_output_code(monkeypatch):
    """A report quotes output code for an effect-log or wrong-mutation entry that
    Inductor compiled; a compile error has none, a stale-cache pair's is two
    processes', and another backend writes none: each gets [] without a compile."""
    import dataclasses

    from fuzzer.render import output_code

    effect, mutation, error = (load(CORPUS / f"{BUGS[b]}.json") for b in
                               ("bug-fbb71133b1", "bug-ac73b21939", "bug-78154481bb"))
    stale = load(CORPUS / f"{STALE['bug-e9c7a74992']}.json")
    assert output_code.shows_code(effect) and output_code.shows_code(mutation)
    assert not output_code.shows_code(error) and not output_code.shows_code(stale)
    assert not output_code.shows_code(dataclasses.replace(effect, backend="aot_eager"))
    compiled = []
    monkeypatch.setattr(output_code, "output_code", lambda case, *a: compiled.append(a) or ["the code"])
    assert output_code.for_entry(error) == [] and output_code.for_entry(stale) == [] and not compiled
    assert output_code.for_entry(dataclasses.replace(effect, device="cpu")) == ["the code"]
    assert compiled[0][1:] == ("cpu", ("dcefuzz",))
    monkeypatch.setattr(output_code, "device_unavailable", lambda device: f"no {device} here")
    assert output_code.for_entry(effect) == []


def test_the_wrapper_lines_kept_are_the_custom_op_calls_with_context_and_the_kernels():
    from fuzzer.render.output_code import relevant

    wrapper = "\n".join([
        "def helper():", "    pass", "def call(args):", "    a, b = args", "    x = 1", "    y = 2", "    z = 3",
        "    w = 4", "    cpp_fused_add_0(a, buf0)", "    q = 5", "    r = 6", "    s = 7",
        "    torch.ops.lib.op.default(buf0)", "    t = 8", "    return (buf0, )", "", "def other():", "    u = 9"])
    assert relevant(wrapper, ("lib",)) == ["cpp_fused_add_0(a, buf0)", "...", "r = 6", "s = 7",
                                           "torch.ops.lib.op.default(buf0)", "t = 8", "return (buf0, )"]
    assert relevant(wrapper, ("dcefuzz",)) == ["cpp_fused_add_0(a, buf0)"]


def _run_briefs(named: dict[str, str], folder: Path) -> dict[str, tuple[str, int, str]]:
    """Each named bug's brief run standalone in a fresh interpreter, all at once: bug ->
    (the failure its kind expects, the exit status, the output)."""
    children = {}
    for bug, entry_id in named.items():
        entry = load(CORPUS / f"{entry_id}.json")
        script = folder / f"{bug}.py"
        script.write_text(kinds.brief(entry))
        children[bug] = (brief.expected_failure(entry), subprocess.Popen(
            [sys.executable, str(script)], cwd=folder, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True))
    done = {}
    for bug, (failure, child) in children.items():
        out, _ = child.communicate(timeout=600)
        done[bug] = (failure, child.returncode, out)
    return done


def _ends_with(failure: str, out: str) -> bool:
    last = [line for line in out.splitlines() if re.match(r"^[\w.]+: ", line)][-1]
    return last.split(":", 1)[0].rsplit(".", 1)[-1] == failure


@pytest.mark.compile
def test_each_brief_repro_fails_on_this_torch(tmp_path):
    """Each named bug's brief (one per kind of assertion: effect order, input values, a
    compile error, logged data), standalone in a fresh interpreter, ends with the failure
    its kind expects (they compile at once: each takes seconds to tens of seconds)."""
    named = {**BUGS, **STALE, **SETTING, **RAISING}
    ran = _run_briefs(named, tmp_path)
    for bug, (failure, returncode, out) in ran.items():
        assert returncode == 1, (bug, out[-2000:])
        assert _ends_with(failure, out), (bug, out[-2000:])
        if bug in {**STALE, **SETTING, **RAISING}:  # only the new side fails: the old one fills the cache
            assert out.count("Traceback (most recent call last)") == 1, (bug, out[-2000:])
    assert {f for f, _, _ in ran.values()} == {"AssertionError", "InductorError"}


@pytest.mark.compile
def test_a_brief_through_another_target_fails_where_the_bug_is(tmp_path):
    """A finding of export, of compiled autograd or of torch.func.grad is not a bug of a
    plain torch.compile: its brief runs the program through its own target
    (``fuzzer.render.through``) and so fails as the finding did."""
    for bug, (failure, returncode, out) in _run_briefs(TARGETED, tmp_path).items():
        assert returncode == 1, (bug, out[-2000:])
        assert _ends_with(failure, out), (bug, failure, out[-2000:])


def test_every_corpus_brief_parses_and_stays_under_the_ceiling():
    """The briefs the named tests above do not read: a brief grows with what its bug
    needs (autograd formulas, a region, earlier bindings), never past the ceiling."""
    for path in entries_in([CORPUS])[0]:
        code = kinds.brief(load(path))
        assert len(code.splitlines()) <= REPORT.brief_ceiling, path
        ast.parse(code)


def test_a_bugs_title_names_the_statements_what_goes_wrong_and_the_switch():
    """A triager reads the program's terms, not the family's: the smallest entry's
    statements, where the wrong values land, and the switch that removes it; a long
    program is named by the ops it calls."""
    found = {b.smallest: b for b in group(load(p) for p in entries_in([CORPUS])[0])}
    assert found["wrong-mutation-9ce848f551f8"].title == (
        "`x1.copy_(x0); x0.mul_(0.5)`: wrong values written to an input in inductor, "
        "gone with remove_noop_ops's aten.copy rule off")
    assert found["wrong-output-f160321431a4"].title.startswith(
        "calls p_sin, clone, mul, transpose (with gradients): wrong values returned in inductor")


# --------------------------------------------------------------- what a report says of its program

@pytest.fixture(scope="module")
def corpus():
    """The committed corpus's entries and bugs, and its upstream records (no compile)."""
    from fuzzer.corpus import upstream

    entries = [load(p) for p in entries_in([CORPUS])[0]]
    return entries, group(entries), upstream.load(CORPUS)


def _picked(corpus, bug_id):
    from fuzzer.render.report import pick

    entries, found, _ = corpus
    return pick(found, entries, bug_id)


def _opening(corpus, bug_id) -> str:
    from fuzzer.render.report import issue_of

    return issue_of(*_picked(corpus, bug_id)).opening


def test_only_a_program_that_calls_custom_ops_is_said_to_have_honest_ones(corpus):
    """`bug-b48a6076d9`'s program calls no custom op (mul_, clone, resize_, copy_): its
    opening says nothing of custom ops; `bug-fbb71133b1`'s calls two, named; and the
    attached script is said to judge an effect log only where the program has effects."""
    from fuzzer.render.report import issue_of

    bare = _opening(corpus, "bug-b48a6076d9")
    assert "custom op" not in bare and "honest" not in bare and "mutates_args" not in bare
    effects = _opening(corpus, "bug-fbb71133b1")
    assert ("Its custom ops (`e_log`, `e_tap`) are honest: each declares exactly what it writes (`mutates_args`), "
            "its fake impl gives its real outputs' metadata, its outputs are fresh tensors.") in effects
    assert "the effect log" in issue_of(*_picked(corpus, "bug-fbb71133b1")).runs
    assert "effect log" not in issue_of(*_picked(corpus, "bug-b48a6076d9")).runs


def test_what_the_ops_promise_is_said_of_the_ops_the_program_calls(corpus):
    """A tagged op returns the argument it writes (not a fresh tensor); an op declaring
    `mutates_args="unknown"` is named as such; a hand-written schema declares its writes
    with `(a!)`, not `mutates_args`."""
    tagged = _opening(corpus, "bug-f42e9541f6")
    assert "`t_scale` returns the argument it writes, as its schema declares (`Tensor(a!)`)" in tagged
    assert "fresh" not in tagged
    unknown = _opening(corpus, "bug-52bb42700e")
    assert "`m_unknown` declares `\"unknown\"`: it may write any argument" in unknown
    assert "declares exactly what it writes" not in unknown
    schema = _opening(corpus, "bug-4754da06be")
    assert "each declares exactly what it writes (a hand-written schema's `(a!)`)" in schema
    assert "mutates_args" not in schema


def test_user_ops_are_said_to_have_passed_the_audit_and_no_ops_nothing():
    from fuzzer.render.makeup import Makeup, honesty

    said = honesty(Makeup(user_ops=("mylib::scale",)))
    assert said.startswith("Its user ops (`mylib::scale`) passed dcefuzz's declaration audit")
    assert "Its custom ops" not in said
    assert honesty(Makeup()) == ""


def test_the_opening_and_the_brief_run_the_program_through_its_target(corpus):
    """An export finding is said, and its brief written, through torch.export and its
    .module(); a compiled-autograd one runs the compiled step under compiled autograd;
    a func-grad one compiles program_grad; a program of automatic dynamic shapes is
    compiled with dynamic=None.  Every target has its words and its brief."""
    from fuzzer.judge import targets
    from fuzzer.judge.targets.brief import Through
    from fuzzer.render.report import happens

    assert all(isinstance(targets.get(name).through, Through) for name in targets.TARGETS)
    bug, export = _picked(corpus, "bug-8b4ca801d7")
    assert _opening(corpus, bug.id).startswith("Exported with `torch.export.export`")
    code = kinds.brief(export)
    assert "torch.export.export(Program(), inputs, dynamic_shapes=(shapes,))" in code
    assert "torch.compile(" not in code
    assert happens(export)[1].startswith("exported: raises")
    _, backward = _picked(corpus, "bug-1fbce7ea9b")
    assert "under compiled autograd" in _opening(corpus, "bug-1fbce7ea9b")
    code = kinds.brief(backward)
    assert "with torch._dynamo.compiled_autograd._enable(BACKWARD_COMPILER):" in code
    assert "under_compiled_autograd(functools.partial(step, torch.compile(program, " in code
    _, func_grad = _picked(corpus, "bug-ed6bbb917f")
    assert "under `torch.func.grad`" in _opening(corpus, "bug-ed6bbb917f")
    code = kinds.brief(func_grad)
    assert "functools.partial(step, torch.compile(program_grad, " in code
    assert "eager = functools.partial(step, program_grad)(*eager_inputs)" in code
    assert _opening(corpus, "bug-4657a1038b").startswith("With `torch.compile(dynamic=None)` (backend `inductor`")


def test_where_no_stage_is_named_the_report_says_why(corpus):
    """Not triaged, not localised, a death, a target with no pieces to walk: each is said
    as what it is; a piece of export's pipeline or compiled autograd's is named as one,
    not as a debugging backend."""
    import dataclasses

    from fuzzer.render.evidence import culprit_lines
    from fuzzer.triage.culprit import Culprit

    crash, _ = _picked(corpus, "bug-f5b055a851")
    assert culprit_lines(crash)[0].startswith("- **Stage**: `inductor` is the first")  # its walk, in fresh processes
    assert culprit_lines(dataclasses.replace(crash, culprit=None)) == [
        "Not triaged: a process that dies is walked over torch's debugging backends each in a fresh process, and "
        "this entry's walk has not run; its recorded stack holds no frame of torch."]
    backward, _ = _picked(corpus, "bug-1fbce7ea9b")
    assert culprit_lines(backward)[0] == (
        "- **Stage**: `compiled-autograd-capture` (torch.compile, the backward under torch._dynamo.compiled_autograd "
        "compiled by 'eager') is the first piece of compiled autograd's pipeline, each run alone, that shows it.")
    grad = dataclasses.replace(backward, targets=("func-grad",), culprit=None)
    assert culprit_lines(grad)[0].startswith("No stage is named: the fuzzer's triage places a finding of the "
                                             "`func-grad` target only where plain `torch.compile` shows")
    plain, _ = _picked(corpus, "bug-b48a6076d9")
    assert culprit_lines(dataclasses.replace(plain, culprit=None))[0].startswith("Not triaged:")
    unseen = Culprit(stage=None, kind=plain.culprit.kind)
    assert culprit_lines(dataclasses.replace(plain, culprit=unseen)) == [
        "Not localised: the fuzzer's triage did not see the bug again on torch's debugging backends."]
    export, _ = _picked(corpus, "bug-8b4ca801d7")
    assert culprit_lines(export)[0] == (
        "- **Stage**: `export-unlift` (torch.export.export, run as its .module()) is the first piece of export's "
        "pipeline, each run alone, that shows it; `export-trace` (torch.export.export, its graph called without "
        ".module()) does not.")


def test_a_bug_with_a_cause_read_gets_it_and_its_hand_script_and_one_without_neither(corpus):
    """`bug-b48a6076d9`'s compile error is raised in `expand`, but its cause as read is
    two clones returned as one tensor: the report carries that reading and the hand
    script that shows the silent wrong result; a bug whose records hold neither says
    nothing of the kind.  The same with hand-built records, whatever the corpus holds."""
    import dataclasses

    from fuzzer.corpus import upstream
    from fuzzer.render.report import render

    _, _, known = corpus
    bug, entry = _picked(corpus, "bug-b48a6076d9")
    [record] = known.of(bug.entries)
    text = invoke("report", bug.id, CORPUS).stdout
    assert "### The cause, as read" in text and record.cause in text
    assert "once the first clone is replaced by `y`, `y` is an output it does not know of" in record.cause
    assert "A hand script that shows it" in text
    assert "```python\nimport torch\n\ndef f(x):\n    y = x * 2\n    return y.clone(), y.clone()\n" in text
    unread, _ = _picked(corpus, "bug-9777a913a0")
    assert [(r.cause, r.script) for r in known.of(unread.entries)] == [("", "")]
    text = invoke("report", unread.id, CORPUS).stdout
    assert "The cause, as read" not in text and "hand script" not in text
    # hand-built records: a cause alone, a script alone, neither
    bare = upstream.Record(bug.entries, (), searched="2026-12-05")
    cause = render(bug, entry, "x.py", (dataclasses.replace(bare, cause="The pass forgets an output."),))
    assert "### The cause, as read" in cause and "The pass forgets an output." in cause and "hand script" not in cause
    script = render(bug, entry, "x.py", (dataclasses.replace(bare, script="import torch\nprint(1)\n"),))
    assert "The cause, as read" not in script
    assert "### A hand script" in script and "```python\nimport torch\nprint(1)\n```" in script
    neither = render(bug, entry, "x.py", (bare,))
    assert "The cause, as read" not in neither and "hand script" not in neither


def _docs_sections() -> list[tuple[str, str]]:
    """docs/bugs.md as (heading, text) of each ``##``/``###`` section, fences kept whole."""
    sections, heading, body, fence = [], None, [], False
    for line in (CORPUS.parent / "docs" / "bugs.md").read_text().splitlines():
        fence = fence != line.startswith("```")
        if not fence and re.match(r"^#{2,3} ", line) and not line.startswith("```"):
            if heading is not None:
                sections.append((heading, "\n".join(body)))
            heading, body = line, []
        elif heading is not None:
            body.append(line)
    return sections + ([(heading, "\n".join(body))] if heading is not None else [])


def _hand_scripts(text: str) -> list[str]:
    """The hand scripts of a section: its python blocks that are whole programs."""
    out = []
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        try:
            compile(block, "<docs>", "exec")
        except SyntaxError:
            continue
        if block.startswith("import torch"):
            out.append(block)
    return out


def test_each_cause_and_hand_script_is_quoted_from_its_bugs_section_in_docs(corpus):
    """One source of truth and a check that its quote has not drifted: each record's
    `cause` stands word for word (whitespace aside) and its `script` whole in the
    docs/bugs.md section of a bug that holds the record's entries, and each hand script
    of a bug's section is the script of a record of a bug its heading names."""
    _, found, known = corpus
    holder = {e: b.id for b in found for e in b.entries}
    sections = _docs_sections()
    words = " ".join

    def of_record(record):
        bugs = {holder[e] for e in record.entries if e in holder}
        return [text for heading, text in sections if any(b in heading for b in bugs)]

    read = [r for r in known.records if r.cause or r.script]
    assert len(read) >= 40
    for record in read:
        texts = of_record(record)
        assert texts, f"no section of docs/bugs.md names a bug of {record.entries}"
        if record.cause:
            assert any(words(record.cause.split()) in words(t.split()) for t in texts), record.cause[:80]
        if record.script:
            assert any(record.script in _hand_scripts(t) for t in texts), record.script[:80]
    scripts = {r.script for r in known.records if r.script}
    for heading, text in sections:
        if re.search(r"bug-[0-9a-f]{10}", heading):
            for block in _hand_scripts(text):
                assert block in scripts, f"{heading}: a hand script no record of corpus/upstream.json quotes"


def test_a_cache_pairs_script_is_said_to_judge_what_its_pair_has(corpus):
    """A cache pair's attached script judges an effect log only where a declaration of
    the pair registers an effect, and gradients only where the pair takes them."""
    from fuzzer.render.report import issue_of

    def runs(bug_id):
        return issue_of(*_picked(corpus, bug_id)).runs

    assert "the effect log" in runs("bug-c39c3c98d6")  # an ORDERED effect registered by the new side
    assert "effect log" not in runs("bug-e9c7a74992") and "gradients" not in runs("bug-e9c7a74992")
    assert "the gradients" in runs("bug-72ca8569a7")  # donated buffers off to take the gradients twice
