"""``dcefuzz replay --python``: repro scripts under another interpreter, verdicts recorded.

CI has one torch, so the other interpreter is this one, or a stand-in shell script
that answers the version query with a made-up version and runs scripts as told.
"""

import json
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.corpus.store import load
from fuzzer.judge import kinds
from fuzzer.replay import versions

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
#: two statements, a real Inductor bug on the torch the corpus was found with
SMALL = "wrong-mutation-3e93a770411a"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def copy_entry(tmp_path: Path, versions: dict | None = None, entry_id: str = SMALL) -> Path:
    """The corpus entry in ``tmp_path``, with ``versions`` (none by default) recorded."""
    path = tmp_path / f"{entry_id}.json"
    path.with_suffix(".py").write_text(kinds.script(load(CORPUS / f"{entry_id}.json")))  # the corpus keeps none
    data = json.loads((CORPUS / f"{entry_id}.json").read_text())
    data["versions"] = dict(versions or {})
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def stand_in(tmp_path: Path, version: str, script_exit: str) -> Path:
    """An interpreter that reports torch ``version`` and whose script runs end with
    ``script_exit`` (a shell command): ``-c`` goes to the real interpreter's print."""
    path = tmp_path / "python"
    path.write_text(f"""#!/bin/sh
if [ "$1" = "-c" ]; then echo "{version}"; exit 0; fi
{script_exit}
""")
    path.chmod(0o755)
    return path


@pytest.mark.compile
def test_this_interpreter_reproduces_and_the_verdict_is_recorded(tmp_path):
    path = copy_entry(tmp_path)
    script = path.with_suffix(".py").read_text()
    assert torch.__version__ not in load(path).versions
    r = invoke("replay", "--python", sys.executable, tmp_path)
    assert r.exit_code == 1, r.output
    assert r.output.startswith(f"REPRODUCES {SMALL}  [wrong-mutation] torch {torch.__version__}: "), r.output
    assert "values differ" in r.output   # the divergence the script printed
    assert json.loads(path.read_text())["versions"] == {torch.__version__: "reproduces"}
    assert path.with_suffix(".py").read_text() == script


def test_a_fixed_verdict_is_recorded_under_the_interpreters_version(tmp_path):
    path = copy_entry(tmp_path, {"2.13.0+cpu": "reproduces", "9.9.9+fake": "error"})
    python = stand_in(tmp_path, "9.9.9+fake", 'echo "does not reproduce (saw no wrong-mutation)"; exit 0')
    r = invoke("replay", "--python", python, path, "--json")
    assert r.exit_code == 0, r.output
    result = json.loads(r.stdout)
    assert (result["outcome"], result["version"], result["id"]) == ("FIXED", "9.9.9+fake", SMALL)
    assert result["detail"] == "does not reproduce (saw no wrong-mutation)"
    assert load(path).versions == {"2.13.0+cpu": "reproduces", "9.9.9+fake": "fixed"}


def test_a_script_that_cannot_judge_is_an_error_and_recorded(tmp_path):
    path = copy_entry(tmp_path)
    python = stand_in(tmp_path, "9.9.9", 'echo "cannot judge: eager failed"; exit 125')
    r = invoke("replay", "--python", python, path)
    assert r.exit_code == 2, r.output
    assert "ERROR" in r.output and "cannot judge: eager failed" in r.output
    assert load(path).versions == {"9.9.9": "error"}


def test_the_script_gets_the_device_and_runs_the_rendered_repro(tmp_path):
    path = copy_entry(tmp_path)
    seen = tmp_path / "seen"
    python = stand_in(tmp_path, "9.9.9", f'cp "$1" {seen}.py; echo "$2" > {seen}.argv; exit 1')
    r = invoke("replay", "--python", python, "--device", "cuda:3", path)
    assert r.exit_code == 1, r.output
    assert (tmp_path / "seen.argv").read_text() == "cuda:3\n"   # not checked here: no GPU needed
    assert (tmp_path / "seen.py").read_text() == path.with_suffix(".py").read_text()
    assert load(path).versions == {"9.9.9": "reproduces"}


def test_a_script_past_its_limit_is_an_error(tmp_path):
    path = copy_entry(tmp_path)
    python = stand_in(tmp_path, "9.9.9", "sleep 30; exit 1")
    result = versions.replay_under(path, str(python), "9.9.9", timeout=1)
    assert (result.outcome, result.detail) == ("ERROR", "no verdict within 1 s")
    assert load(path).versions == {"9.9.9": "error"}


@pytest.mark.parametrize("python, needle", [
    (sys.executable.replace("python", "no-such-python"), "no such interpreter"),
    ("/bin/sh", "not a Python with torch"),
    (__file__, "cannot run it"),
])
def test_an_interpreter_without_torch_is_a_usage_error(tmp_path, python, needle):
    path = copy_entry(tmp_path)
    before = path.read_text()
    r = invoke("replay", "--python", python, path)
    assert r.exit_code == 2, r.output
    assert "--python" in r.output and needle in r.output, r.output
    assert path.read_text() == before


def test_a_device_of_no_known_form_is_a_usage_error(tmp_path):
    path = copy_entry(tmp_path)
    r = invoke("replay", "--python", sys.executable, "--device", "tpu", path)
    assert r.exit_code == 2 and "not cpu, cuda or cuda:N" in r.output, r.output


#: a crash entry: a corrupted heap dies when, and how, the allocator notices
CRASH = "crash-8caa0f144a94"


def counting(tmp_path: Path, exits: list[int]) -> Path:
    """A stand-in whose n-th script run exits ``exits[n-1]`` (it counts in a file)."""
    count = tmp_path / "count"
    cases = " ".join(f'{i}) exit {code};;' for i, code in enumerate(exits, 1))
    return stand_in(tmp_path, "9.9.9", f'n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n > {count}; '
                                       f'case $n in {cases} esac; exit 3')


@pytest.mark.parametrize("entry_id, recorded, exits, outcome, runs", [
    (CRASH, {}, [0, 1], "reproduces", 2),           # once fixed, then the heap dies: it is there
    (CRASH, {}, [125, 0, 125], "fixed", 3),         # judged once, clean
    (CRASH, {}, [125, 125, 125], "error", 3),       # never judged
    (SMALL, {}, [0, 1], "fixed", 1),                # a plain entry: one run
    (SMALL, {"2.11.0": "reproduces", "2.12.1": "fixed", "2.13.0": "reproduces"}, [0, 1], "reproduces", 2),
], ids=["crash reproduces on a second run", "crash judged once", "crash never judged", "one run",
        "verdicts that came and went"])
def test_an_entry_that_may_not_show_every_time_is_judged_more_than_once(tmp_path, entry_id, recorded, exits,
                                                                           outcome, runs):
    path = copy_entry(tmp_path, recorded, entry_id)
    result = versions.replay_under(path, str(counting(tmp_path, exits)), "9.9.9")
    assert load(path).versions["9.9.9"] == outcome, result.detail
    assert int((tmp_path / "count").read_text()) == runs


def test_a_verdict_recorded_by_another_replay_meanwhile_is_kept(tmp_path):
    """Two releases replayed side by side: each adds its verdict to what is on disk when
    it ends, not to what it read when it began."""
    path = copy_entry(tmp_path, {"2.13.0+cpu": "reproduces"})
    other = tmp_path / "other_release.py"  # what the other replay records while this one runs
    other.write_text(f"import json\nd = json.load(open({str(path)!r}))\nd['versions']['8.8.8+other'] = 'fixed'\n"
                     f"json.dump(d, open({str(path)!r}, 'w'))\n")
    python = stand_in(tmp_path, "9.9.9+fake",
                      f'{sys.executable} {other}; echo "does not reproduce (saw no wrong-mutation)"; exit 0')
    r = invoke("replay", "--python", python, path)
    assert r.exit_code == 0, r.output
    assert load(path).versions == {"2.13.0+cpu": "reproduces", "8.8.8+other": "fixed", "9.9.9+fake": "fixed"}
