"""The targets' registry (``fuzzer.judge.targets``): every stage reads what it needs off a
target, so a target added in its module and one registry line reaches the trial, triage,
the report, the brief, the repro script and the command line with no other edit; and the
command line's help and docs/targets.md's table are the registry's."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from helpers import case, prog

from fuzzer import faults
from fuzzer.cli import main
from fuzzer.corpus.entry import Entry
from fuzzer.judge import contract, exporting, targets
from fuzzer.judge.targets.brief import EXPORT_OPENING, Through, exported
from fuzzer.judge.targets.export import ExportTarget
from fuzzer.program import codegen, custom_ops
from fuzzer.reduce.signature import Signature
from fuzzer.render import brief, driver, repro
from fuzzer.render.report import area_of
from fuzzer.triage import within

TARGETS_DOC = Path(__file__).resolve().parent.parent / "docs" / "targets.md"

EFFECTS = case(prog({"x0": ("s0",)}, [
    ("e_log", ["x0"], None, {"site": 0}), ("p_sin", ["x0"], "v0", {"site": 1}),
], outputs=["v0"]), [{"s0": 4}, {"s0": 7}])


class AgainTarget(ExportTarget):
    """A target only this test registers: export, run as its ``.module()``, under another
    name, with a walk, a blame and words of its own."""

    name = "export-again"
    api = "torch.export.export again"
    help = "export once more"
    walk = ("export-graph", "export-again")
    pipeline = "export again's pipeline"
    blame = "export-again-unlift"
    area = "export again"
    through = Through(EXPORT_OPENING + " once more ({device})", "exported", "torch.export.export",
                      lambda own, args, backend: "exported", exported("module = ep.module()  # again"))


def _entry(target: str) -> Entry:
    return Entry(id="e", kind=contract.RUNTIME_ERROR, signature=Signature.parse("runtime-error|x :: t"), seed=None,
                 device="cpu", backend="inductor", torch_version=torch.__version__, case=EFFECTS,
                 detail=["[runtime-error] binding 0, compiled: RuntimeError: x"], target=target)


def test_a_target_registered_in_one_line_reaches_every_stage(monkeypatch):
    """The registry line is all a target needs: the trial's lookups, triage's walk and
    blame, the report's area, the brief's words and code, the script's spec and its
    driver all read it off the target."""
    again = AgainTarget()
    monkeypatch.setitem(targets.TARGETS, again.name, again)
    assert targets.get(again.name) is again and again.name in targets.names()
    assert targets.spread(["compile", again.name]) == f"compile,{again.name}"
    assert f"{again.name} (export once more)" in targets.help_text()
    assert targets.drawn_for(again.name, {"autograd": 0.5}) == {}
    assert within.walks(again.name) and within.pieces_for(again.name, "inductor") == again.walk
    assert within.blamed(again.blame) == again.name and area_of(None, again.name) == "export again"
    assert "once more" in again.through.opening and "# again" in brief.render(_entry(again.name))
    spec = repro.spec(_entry(again.name))
    assert spec["target"] == again.name and spec["lowering"] == exporting.MODULE.name
    verdict = driver.judge(spec, codegen.build(EFFECTS.program), custom_ops.install().TRACE, "cpu")
    assert verdict.kinds() == [] and not verdict.untested


def test_every_target_carries_what_the_stages_ask():
    """Each target has its help, its brief's words, a walk whose pieces are registered and
    blame something, and, where it exports, a lowering its repro script can run."""
    for name, target in targets.TARGETS.items():
        assert target.help and isinstance(target.through, Through), name
        assert all(targets.get(piece).blame for piece in target.walk), name
        assert not target.walk or target.walk[-1] == name or target.walk[-1] in targets.PIECES, name
        if target.lowering is not None:
            assert exporting.LOWERINGS[target.lowering.name] is target.lowering, name
        assert type(target).__module__.startswith("fuzzer.judge.targets."), name


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_help_of_target_is_the_registry():
    """``--target``'s help lists every target with its help, in the registry's order."""
    said = [f"{t.name} ({t.help})" for t in targets.TARGETS.values()]
    for command in ("run", "gen"):
        text = _flat(CliRunner().invoke(main, [command, "--help"], terminal_width=10_000).output)
        where = [text.find(_flat(s)) for s in said]
        assert -1 not in where and where == sorted(where), (command, where)


def test_the_documented_targets_are_the_registry():
    """docs/targets.md's table names every target once, in the registry's order, and says
    whether each judges ``missed-dce`` as the target does."""
    rows = []
    for row in TARGETS_DOC.read_text().splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"`[\w-]+`", cells[0]):
            rows.append((cells[0].strip("`"), cells[4].startswith("judged")))
    assert rows == [(t.name, t.judges_dce) for t in targets.TARGETS.values()]


def test_a_fault_names_registered_targets_only():
    """A fault whose ``pipelines`` name a target the registry lacks is refused where it is made."""
    fault = next(iter(faults.CATALOGUE.values()))
    with pytest.raises(ValueError, match="no-such-target"):
        dataclasses.replace(fault, pipelines=("no-such-target",))


def test_an_issue_is_tagged_with_the_area_of_the_piece_that_shows_its_bug():
    """A bug a piece of a target's pipeline shows first is tagged with that piece's area:
    compiled autograd's capture is compiled autograd's, not export's."""
    assert area_of("compiled-autograd-capture", targets.COMPILED_AUTOGRAD) == "compiled autograd"
    assert area_of("export-trace", targets.AOTI) == "export"
    assert area_of("aot_eager", targets.EXPORT) == "aotdispatch"
    assert (area_of(None, targets.COMPILE), area_of(None, targets.AOTI)) == ("torch.compile", "export")
