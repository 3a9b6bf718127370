"""A library the user does not own (``tests/standin``): its real argument types, hints
from a file outside it, and no honest op blamed for what dcefuzz cannot give it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.user import declared, hints, library

STANDIN = Path(__file__).resolve().parent / "standin"
MODULE, HINTS = str(STANDIN / "standin.py"), str(STANDIN / "standin.toml")


def _table(*specs) -> tuple[int, dict[str, dict]]:
    result = CliRunner().invoke(main, ["check-ops", *specs, "--json"])
    rows = json.loads(result.output)["table"]
    return result.exit_code, {r["op"]: r for r in rows}


def test_no_honest_op_of_a_library_not_owned_is_a_declaration_finding():
    """The module alone, as found: a dtype argument at its default, an op with a CUDA
    kernel only, one that refuses same-shape inputs and one whose List[int] has no
    values are used or skipped with a reason, and none is a finding."""
    code, table = _table(MODULE)
    assert code == 0
    assert {op: r["status"] for op, r in table.items()} == {
        "standin::scale_to": "used", "standin::exclude_me": "used", "standin::cuda_only": "skipped",
        "standin::rowdot": "skipped", "standin::blocksum": "skipped"}
    assert "no kernel for cpu" in table["standin::cuda_only"]["why"]
    assert "give its signature" in table["standin::rowdot"]["why"]
    assert "List[int] needs values" in table["standin::blocksum"]["why"]


def test_hints_from_outside_give_signatures_block_sizes_and_which_ops():
    code, table = _table(HINTS)
    assert code == 0
    assert "standin::exclude_me" not in table
    assert {op: r["status"] for op, r in table.items()} == {
        "standin::scale_to": "used", "standin::cuda_only": "skipped", "standin::rowdot": "used",
        "standin::blocksum": "used"}
    assert table["standin::rowdot"]["signature"] == "(n,k),(k)->(n)"


def test_a_dtype_argument_is_read_as_a_dtype_and_left_at_its_default():
    library.load(MODULE)
    (dtype,) = [a for a in declared.read("standin::scale_to").arguments if not a.is_tensor]
    assert dtype.type == "ScalarType" and dtype.values == ()  # the JIT's int is not what it means


def test_a_block_size_in_the_signatures_letters_follows_each_calls_shape():
    """Programs pass ``[1, <the size m binds>]``; the program, its JSON and its repro
    script carry the hints file, so every process reads the op the same way."""
    from fuzzer.program import codegen
    from fuzzer.program.generate import OpSet, generate
    from fuzzer.program.ir import Program
    from fuzzer.user import tracing

    ref = library.ModuleRef.of(HINTS)
    library.load(ref)
    ops = OpSet(builtin=False, user=("standin::blocksum", "standin::rowdot", "standin::scale_to"),
                imports=(ref.imported,))
    found = None
    for seed in range(40):
        case = generate(seed, ops=ops)
        text = codegen.source(case.program)
        if "standin.blocksum(" in text:
            found = case, text
            break
    assert found, "no program called blocksum"
    case, text = found
    call = next(line for line in text.splitlines() if "standin.blocksum(" in line)
    assert ", [1, s" in call  # the letter rendered as the program's size
    back = Program.from_json(json.loads(json.dumps(case.program.to_json())))
    assert back == case.program and back.imports[0][2] == ref.hints
    assert "importlib.import_module('standin')" in tracing.script_source(case.program)
    # the program runs eagerly: the block tiles the input it is given
    namespace: dict = {}
    exec(compile(text, "<program>", "exec"), {"torch": __import__("torch")}, namespace)  # noqa: S102 - our program
    import torch
    shapes = [tuple(__import__("fuzzer.program.sizes", fromlist=["x"]).concrete(i.dims, case.bindings[0]))
              for i in case.program.inputs]
    namespace["program"](*[torch.randn(s) for s in shapes])


def test_a_bad_hints_file_says_what_is_wrong(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('library = "standin"\n[ops.blocksum]\nsignature = "(n)->(n)"\n')
    result = CliRunner().invoke(main, ["check-ops", str(bad)])
    assert result.exit_code == 2 and "qualified name" in result.output
    assert hints.load(HINTS).wants("standin::rowdot") and not hints.load(HINTS).wants("standin::exclude_me")
