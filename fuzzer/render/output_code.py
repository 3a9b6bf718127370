"""The lines of Inductor's output code that show a bug, for its report.

A triager reads the generated wrapper before anything else: where each custom op is
called, what it is handed, which kernel runs before and after it.  For an entry
compiled by Inductor, the program is compiled as its trial compiled it
(``execute.compile_fn``: the same dynamic mode, marks and step) and run over its
bindings up to the first one that shows the bug, with torch's own
``run_and_get_code`` catching the code; the last code compiled is the one that ran
that binding.  Of its ``call`` function the lines kept are each custom-op call with
the ``REPORT.output_code_context`` lines around it, and every kernel or extern call, up to
``REPORT.output_code_lines``: enough to see an order, an argument or a copy that is not there.

An error has no output code; a compile that fails here (another torch, a bug that
needs its process) gives none either, and the report says so rather than guess.
"""

from __future__ import annotations

import re

from fuzzer.judge import contract
from fuzzer.judge.execute import compile_fn, device_unavailable, fresh_compile_state, make_inputs
from fuzzer.judge.observe import caches_off
from fuzzer.limits import REPORT
from fuzzer.program.ir import Case

#: the kinds whose report quotes output code: a single compile's wrong result (an
#: error has no code; a cache pair's is two processes', neither of them this one)
SHOWN_KINDS = frozenset((contract.EFFECT_LOG, contract.WRONG_MUTATION, contract.WRONG_OUTPUT, contract.MISSED_DCE))

#: a kernel launch or an extern call in the wrapper
_KERNEL = re.compile(r"\b(cpp_fused_\w+|triton_\w+|extern_kernels\.\w+)\s*[(.]")


def _call_body(code: str) -> list[str]:
    """The body of the wrapper's ``call`` function (its first definition)."""
    lines = code.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(r"\s*def call\(", ln)), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for ln in lines[start + 1:]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
            break
        body.append(ln)
    return body


def relevant(code: str, namespaces: tuple[str, ...]) -> list[str]:
    """The lines of ``code``'s ``call`` that show the custom ops (of ``namespaces``)
    and the kernels around them, with ``...`` where lines are left out."""
    body = _call_body(code)
    marks = [f"torch.ops.{ns}." for ns in namespaces]
    keep: set[int] = set()
    for i, ln in enumerate(body):
        if any(m in ln for m in marks):
            context = REPORT.output_code_context
            keep.update(range(max(0, i - context), min(len(body), i + context + 1)))
        elif _KERNEL.search(ln):
            keep.add(i)
    out, last = [], -1
    for i in sorted(keep):
        if not body[i].strip():
            continue
        if i != last + 1 and out:
            out.append("    ...")
        out.append(body[i].rstrip())
        last = i
    if len(out) > REPORT.output_code_lines:
        out = out[:REPORT.output_code_lines] + ["    ..."]
    dedent = min((len(ln) - len(ln.lstrip()) for ln in out if ln.strip() and ln.strip() != "..."), default=0)
    return [ln[dedent:] if ln.strip() != "..." else "..." for ln in out]


def output_code(case: Case, binding: int, device: str, namespaces: tuple[str, ...]) -> list[str]:
    """The relevant wrapper lines of the code Inductor compiled for ``case`` on its
    ``binding``-th size binding, run after the ones before it ([] when none can be had)."""
    from torch._inductor.utils import run_and_get_code

    fresh_compile_state()
    compiled = compile_fn(case, "inductor")

    def run():
        for i in range(binding + 1):
            compiled(*make_inputs(case, i, device))

    try:
        with caches_off():  # a cached graph would hand back no source
            _, codes = run_and_get_code(run)
    except Exception:  # noqa: BLE001 - the program's own failure: there is no code to show
        return []
    finally:
        fresh_compile_state()
    return relevant(codes[-1], namespaces) if codes else []


def shows_code(entry) -> bool:
    """Whether ``entry``'s report quotes output code: one that Inductor compiled (the
    other backends write none) and of a kind in :data:`SHOWN_KINDS`."""
    return entry.backend == "inductor" and entry.kind in SHOWN_KINDS


def for_entry(entry) -> list[str]:
    """The output-code lines ``entry``'s report quotes, compiled here on its device: []
    where its kind shows none (``shows_code``) or this machine lacks the device."""
    if not shows_code(entry) or device_unavailable(entry.device) is not None:
        return []
    from fuzzer.render import brief

    spaces = ("dcefuzz", *sorted({op.split("::")[0] for op in entry.case.program.user_ops()}))
    return output_code(entry.case, brief.binding_index(entry), entry.device, spaces)
