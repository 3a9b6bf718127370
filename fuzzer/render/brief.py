"""The brief repro: a finding in the thirty-odd lines an issue shows inline.

The full script (``fuzzer.render.repro``) carries the whole contract, every binding
and a float64 reference, so that it can judge any torch and drive ``git bisect
run``.  A PyTorch developer reading an issue needs less, and needs it at a glance:
the custom ops the program calls, the program, the inputs of the one binding the
divergence first showed on, one run through the program's target and one plain
assertion.  The run is the target's, as the finding's was (``Target.through``):
a ``torch.compile`` of the program (of ``program_grad`` under ``torch.func.grad``), an
export on the first binding's inputs run as its ``.module()``, or the compiled step
run under compiled autograd; a brief that compiled an export's finding with
``torch.compile`` alone would not fail.

Most of the text is still the fuzzer's own, so the brief runs what the fuzzer ran:
the op snippets of ``custom_ops`` (blank runs folded, and the library's
``_register_ordered`` helper, which exists to reach the private API of torch
before 2.11, written as the public ``register_effect`` call it makes on a current
torch), the program from ``codegen``, and the inputs drawn as
``execute.make_inputs`` draws them (the global generator seeded with the same seed
gives the same numbers).  Where the bug reads a trace of the calls (an effect log,
the calls that ran), the recording hook ``_hit`` is the brief's own and keeps what
the assertion reads; where it needs none, the ops are written without the fuzzer's
scaffolding (no ``_hit``, no call-site argument: ``custom_ops.plain_snippet``, and
the program's calls without their sites), so a maintainer reads only the bug.

The assertion is ``torch.testing.assert_close`` with its default tolerances, not
the fuzzer's per-element rule against float64: a reader knows what it means, and
the divergences the fuzzer keeps are far outside those tolerances.  That a brief of
each kind of assertion, and of each target other than ``torch.compile``, in the
committed corpus fails on the torch it was found with is checked by running it
(``tests/test_report.py``); every brief of the corpus is checked to parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from fuzzer.corpus.entry import Entry
from fuzzer.judge import contract, observe, targets
from fuzzer.judge.contract import BugClass
from fuzzer.judge.raised import SITE_PREFIX
from fuzzer.program import codegen, forms, sizes, sources, windows
from fuzzer.program.liveness import dead_pure_sites

#: what the ops' ``_hit`` hook keeps: the effects' order, the data each effect saw,
#: the call trace, or nothing
ORDER, DATA, CALLS, NOTHING = "order", "data", "calls", "nothing"

HOOKS = {
    ORDER: '''\
LOG = []  # op@site of each effectful call, in the order they ran
def _hit(op, site, *inputs, effect=False):
    if effect:
        LOG.append(f"{op}@{site}")
''',
    DATA: '''\
LOG = []  # a copy of what each effectful call saw, in the order they ran
def _hit(op, site, *inputs, effect=False):
    if effect:
        LOG.append([x.clone() for x in inputs])
''',
    CALLS: '''\
CALLS = []  # op@site of each custom-op call that ran
def _hit(op, site, *inputs, effect=False):
    CALLS.append(f"{op}@{site}")
''',
    NOTHING: '''\
def _hit(op, site, *inputs, effect=False):
    pass  # the fuzzer traces calls here; this bug needs no trace
''',
}


@dataclass(frozen=True)
class Check:
    """How a brief shows one kind of bug: what the hook keeps, what the compiled call
    is expected to do, and the one assertion after it."""

    records: str
    #: lines after both runs (empty: the compiled call itself raises or dies)
    assertion: tuple[str, ...] = ()
    #: the exception the brief ends with, or how it ends (None: with the recorded
    #: error's own type)
    failure: str | None = "AssertionError"


#: keyed by kind, or ``kind|symptom`` where one kind is shown two ways
CHECKS: dict[str, Check] = {
    contract.WRONG_OUTPUT: Check(NOTHING, ("torch.testing.assert_close(compiled, eager)",)),
    contract.WRONG_MUTATION: Check(NOTHING, (
        "torch.testing.assert_close(compiled_inputs, eager_inputs)  # the inputs as the program left them",)),
    contract.EFFECT_LOG: Check(ORDER, ('assert LOG == eager_log, f"eager {eager_log}, compiled {LOG}"',)),
    BugClass(contract.EFFECT_LOG, (contract.DATA,)).text: Check(DATA, (
        "torch.testing.assert_close(LOG, eager_log)  # what each effectful call saw",)),
    contract.MISSED_DCE: Check(CALLS, (
        'assert not DEAD & set(CALLS), f"dead calls ran: {sorted(DEAD & set(CALLS))}"',)),
    contract.COMPILE_ERROR: Check(NOTHING, failure=None),
    contract.RUNTIME_ERROR: Check(NOTHING, failure=None),
    contract.CRASH: Check(NOTHING, failure="the process dying"),
    contract.TIMEOUT: Check(NOTHING, failure="a hang"),
}

_BINDING = re.compile(r"^\[[\w-]+\] binding (\d+), ")


def check_key(entry: Entry) -> str:
    """The key of ``entry``'s check: its kind (a stale-cache entry's: the kind its warm
    compile broke), or ``effect-log|data`` for an effect log whose only change is the
    data an effect saw (its order is right)."""
    symptoms = entry.bug_class.words
    kind = entry.kind
    if kind == contract.STALE_CACHE:
        kind = next(k for k in contract.CORRECTNESS_KINDS if k in symptoms)
    if kind == contract.EFFECT_LOG and symptoms & {contract.MISSING, contract.EXTRA, contract.DUPLICATED,
                                                   contract.REORDERED, contract.DATA} == {contract.DATA}:
        return BugClass(contract.EFFECT_LOG, (contract.DATA,)).text
    return kind


def check_of(entry: Entry) -> Check:
    return CHECKS[check_key(entry)]


def binding_index(entry: Entry) -> int:
    """The first binding a detail line names (``Divergence.line``'s ``binding N``)."""
    for line in entry.detail:
        m = _BINDING.match(line)
        if m:
            return int(m.group(1))
    return 0


def without_site(detail: str) -> str:
    """A divergence line's message without the place it was raised
    (``Divergence.line`` adds it in parentheses): what the error says."""
    marker = f" ({SITE_PREFIX}"
    return detail[:detail.rindex(marker)] if marker in detail else detail


def expected_failure(entry: Entry) -> str:
    """The exception type the brief ends with on a torch that has the bug."""
    failure = check_of(entry).failure
    if failure is not None:
        return failure
    detail = without_site(entry.detail[0].split(": ", 1)[1])
    if entry.kind == contract.STALE_CACHE:  # "<label>: [<kind>] <message>"
        detail = detail.split("] ", 1)[1]
    return contract.normalise_message(detail).split(":", 1)[0]


def fold(text: str, blank: str = "\n") -> str:
    """Runs of blank lines as ``blank`` (one blank line, or none): the brief is read
    in an issue, not linted."""
    return re.sub(r"\n{2,}", "\n" + blank, text.strip("\n")) + "\n"


def _redrawn(entry: Entry) -> bool:
    """Whether the inputs must be drawn afresh for each run rather than cloned: a
    clone loses a strided layout (``clone`` of a tensor with gaps is contiguous) and
    the aliasing of one input with another."""
    mode = entry.case.program.mode
    return bool(mode.strided or mode.aliases or mode.layouts or mode.windows)


#: how each layout's input is made, as ``observe.LAYOUT_MAKERS`` makes it
LAYOUT_TEXT = {"transposed": "{x}.mT.contiguous().mT",
               "channels_last": "{x}.movedim(1, -1).contiguous().movedim(-1, 1)",
               "expanded": "{x}[:1].expand({x}.shape)"}


def input_lines(entry: Entry, index: int) -> list[str]:
    """The inputs of binding ``index``, drawn as ``execute.make_inputs`` draws them."""
    binding = entry.case.bindings[index]
    names = ", ".join(f"{k}={v}" for k, v in binding.items())
    lines = [f"torch.manual_seed({entry.case.input_seed + index})  # binding {names}"]
    mode = entry.case.program.mode
    move = "" if entry.device == "cpu" else f".to({entry.device!r})"
    cast = "" if mode.dtype == "float32" else f".to(torch.{mode.dtype})"
    for inp in entry.case.program.inputs:
        shape = sizes.concrete(inp.dims, binding)
        args = ", ".join(str(n) for n in shape) if shape else "()"
        if inp.dtype is not None and not getattr(torch, inp.dtype).is_floating_point:
            low, high = observe.INTEGER_RANGES.get(inp.dtype, observe.WIDE_INTEGER_RANGE)
            size = "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
            lines.append(f"{inp.name} = torch.randint({low}, {high}, {size}).to(torch.{inp.dtype}){move}")
        else:
            own = f".to(torch.{inp.dtype})" if inp.dtype else cast
            lines.append(f"{inp.name} = torch.randn({args}){own}{move}")
        if inp.name in mode.strided:  # the same values, last dim strided by 2
            wide = ", ".join(str(n) for n in shape[:-1] + (2 * shape[-1],))
            lines.append(f"{inp.name} = {inp.name}.new_zeros({wide})[..., ::2].copy_({inp.name})")
        layout = dict(mode.layouts).get(inp.name)
        if layout is not None:  # fuzzer.judge.observe.LAYOUT_MAKERS
            lines.append(f"{inp.name} = {LAYOUT_TEXT[layout].format(x=inp.name)}")
    for name, base in mode.aliases:  # drawn like the others, then made a view of its base
        lines.append(f"{name} = {base}.view({base}.shape)")
    order = [i.name for i in entry.case.program.inputs]
    shapes = [sizes.concrete(i.dims, binding) for i in entry.case.program.inputs]
    for k, j, dim, start, size in windows.concrete(mode, order, shapes, index):  # a view of part of its base
        lines.append(f"{order[k]} = {order[j]}.narrow({dim}, {start}, {size})")
    if _redrawn(entry):
        params = ", ".join(i.name for i in entry.case.program.inputs)
        lines = ["def inputs():  # drawn afresh for each run: a clone would lose the layout"] \
            + [f"    {line}" for line in lines] + [f"    return [{params}]"]
    return lines


def _own(program) -> str:
    """What a run calls: the program's function (``program_grad`` under ``torch.func.grad``),
    or a new instance of its module (buffers of its own)."""
    return f"{codegen.MODULE_CLASS}()" if program.mode.module else codegen.entry_name(program)


def _compile_call(entry: Entry, grads: bool = False) -> str:
    """The compiled function, through the entry's target (``Target.through``)."""
    program = entry.case.program
    way = targets.get(entry.target).through
    call = way.call(_own(program), codegen.compile_args(program), entry.backend)
    if grads:  # the outputs, then the gradients of their sum
        call = f"with_grads({call})"
    if codegen.needs_step(program):  # marks, capture settings, the loss's backward
        call = f"functools.partial({codegen.STEP_NAME}, {call})"
    if way.wraps_step:
        call = f"under_compiled_autograd({call})"
    return call


def _warm_up(entry: Entry) -> list[str]:
    """The bindings before the one the bug shows on, run through the same compiled
    function first: bindings run in order through one function, and a bug of a
    recompile needs the compile before it.  A module whose state carries over runs them
    through its eager instance as well, so both start the binding from their own state."""
    index = binding_index(entry)
    if index == 0:
        return []
    lines = [f"compiled_fn = {_compile_call(entry)}"]
    params = ", ".join(i.name for i in entry.case.program.inputs)
    other = targets.get(entry.target).through.other
    for k in range(index):
        lines += input_lines(entry, k)
        if entry.case.program.mode.carry:  # eager's state carries over from this binding too
            clones = "*inputs()" if _redrawn(entry) else ", ".join(f"{n.strip()}.clone()" for n in params.split(","))
            lines.append(f"{codegen.STEP_NAME}(program, {clones})  # eager's module keeps its state too")
        if _redrawn(entry):
            lines.append("compiled_fn(*inputs())")
        else:
            lines.append(f"compiled_fn({params})  # an earlier binding: {other} on it first")
    return lines


def run_lines(entry: Entry, check: Check, grads: bool = False, warmed: bool = False) -> list[str]:
    """Eager, then compiled (through ``compiled_fn`` when earlier bindings ``warmed`` it)."""
    compile_call = "compiled_fn" if warmed else _compile_call(entry, grads)
    clones = "[" + ", ".join(f"{i.name}.clone()" for i in entry.case.program.inputs) + "]"
    if _redrawn(entry):
        clones = "inputs()"
    eager_call = codegen.entry_name(entry.case.program)
    if grads:
        eager_call = f"with_grads({eager_call})"
    if codegen.needs_step(entry.case.program):
        eager_call = f"functools.partial({codegen.STEP_NAME}, {eager_call})"
    lines = [f"eager_inputs = {clones}", f"eager = {eager_call}(*eager_inputs)"]
    if check.records in (ORDER, DATA):
        lines += ["eager_log, LOG[:] = LOG.copy(), []  # the compiled run logs afresh"]
    if check.records == CALLS:
        program = entry.case.program
        dead = sorted(f"{forms.form(program.sites()[s].form).custom}@{s}" for s in dead_pure_sites(program))
        lines += ["CALLS.clear()", f"DEAD = {set(dead)!r}  # call sites whose results nothing uses"]
    lines += [f"compiled_inputs = {clones}",
              f"compiled = {compile_call}(*compiled_inputs)"]
    if check.failure is None:
        lines[-1] += f"  # {_what_happens(entry)}"
    return lines


def _what_happens(entry: Entry) -> str:
    if entry.kind == contract.CRASH:
        return "the process dies"
    if entry.kind == contract.TIMEOUT:
        return "never returns"
    return "raises " + without_site(entry.detail[0].split(": ", 1)[1])[:80]


def traced(entry: Entry) -> bool:
    """Whether ``entry``'s brief keeps the fuzzer's scaffolding: its bug reads a trace
    of the calls (an effect log, the calls that ran), or leaving out the call-site
    arguments would make two of its calls one (``codegen.sites_matter``).  Otherwise
    the brief's ops are written as a user would, and a maintainer reads only the bug."""
    return check_of(entry).records != NOTHING or codegen.sites_matter(entry.case.program)


def render(entry: Entry) -> str:
    """The brief repro of ``entry`` (a program compiled once): standalone, torch only,
    fails where the bug is."""
    check = check_of(entry)
    trace = traced(entry)
    ops = sources.script(entry.case.program, brief=True, traced=trace)
    head = "import functools\n" if codegen.needs_step(entry.case.program) else ""
    head += "from typing import Optional\n" if "Optional[" in ops else ""
    warm = _warm_up(entry)
    # the hook stays where an op still records its calls (a user's logged effect)
    hook = HOOKS[check.records] if trace or "_hit(" in ops else ""
    parts = [head + ("\n" if head else "") + "import torch\n", hook, ops,
             codegen.source(entry.case.program, plain=not trace),
             targets.get(entry.target).through.helper(entry.case.program, entry.backend),
             "\n".join(warm + input_lines(entry, binding_index(entry)) + run_lines(entry, check, warmed=bool(warm))
                       + list(check.assertion)) + "\n"]
    return "\n".join(fold(p) for p in parts if p.strip())
