"""The commands on saved entries (``fuzzer.cli.entries``): show, repro, gen and known;
a hand-built entry, nothing compiled."""

import json

import click
import pytest
from click.testing import CliRunner
from helpers import case, divergence_on, prog

from fuzzer.cli import entries as entries_cli
from fuzzer.cli import main
from fuzzer.corpus import store
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.judge import contract
from fuzzer.program.ir import Case


def _saved(folder):
    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0})]))
    path, _ = store.save(Entry.build(contract.EFFECT_LOG, c, [divergence_on(0)],
                                     Origin(seed=1, device="cpu", backend="inductor")), folder)
    return path


def test_show_prints_what_diverged_and_the_program(tmp_path):
    path = _saved(tmp_path)
    shown = CliRunner().invoke(main, ["show", str(path)])
    assert shown.exit_code == 0 and shown.output.startswith(f"{path.stem}  [effect-log]  hits 1")
    assert "torch.ops.dcefuzz.e_log(x0, 0)" in shown.output
    assert CliRunner().invoke(main, ["show", str(tmp_path / "nothing.json")]).exit_code == 2


def test_repro_prints_the_entrys_script_through_its_target_or_another(tmp_path):
    path = _saved(tmp_path)
    own = CliRunner().invoke(main, ["repro", str(path)]).output
    export = CliRunner().invoke(main, ["repro", str(path), "--target", "export"]).output
    assert own == path.with_suffix(".py").read_text() and export != own and "'target': 'export'" in export


def test_gen_prints_the_same_legal_program_for_a_seed(tmp_path):
    text = CliRunner().invoke(main, ["gen", "--seed", "3", "--json"])
    assert text.exit_code == 0 and text.output == CliRunner().invoke(main, ["gen", "--seed", "3", "--json"]).output
    Case.from_json(json.loads(text.output)).validate()
    python = CliRunner().invoke(main, ["gen", "--seed", "3"]).output
    assert python.startswith("# bindings: ") and "def program(" in python


def test_known_marks_an_entry_and_clear_unmarks_it(tmp_path):
    path = _saved(tmp_path)
    CliRunner().invoke(main, ["known", str(path), "--reason", "pytorch/pytorch#1"])
    assert store.load(path).known_bug == "pytorch/pytorch#1"
    CliRunner().invoke(main, ["known", str(path), "--clear"])
    assert store.load(path).known_bug is None



def test_a_device_for_another_torch_is_checked_for_its_form_only():
    assert entries_cli._device_for_another_torch(None) is None
    assert entries_cli._device_for_another_torch("cuda:3") == "cuda:3"  # this torch may have no GPU
    with pytest.raises(click.BadParameter, match="not cpu, cuda or cuda:N"):
        entries_cli._device_for_another_torch("tpu")
