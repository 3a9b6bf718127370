"""The user's libraries as an op source (``fuzzer.user.source``): loaded when a program
imports them, inputs shaped for an op's signature, and what a script needs of them;
the example library, no compile."""

import dataclasses
import os
from pathlib import Path

from fuzzer.program.generate import OpSet
from fuzzer.program.ir import Input, Program, Stmt
from fuzzer.user import library
from fuzzer.user.source import SOURCE

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


def test_inputs_are_shaped_for_an_ops_signature_from_a_stream_of_their_own():
    ref = library.load(OPSLIB).ref
    SOURCE.load((ref.imported,))
    ops = OpSet(builtin=False, user=("opslib::matmul",), imports=(ref.imported,))
    shaped = SOURCE.input_shapes(4, ops, ("s0", "s1", "s2"))
    (a, _), (b, _) = shaped
    assert a[1] == b[0] and shaped == SOURCE.input_shapes(4, ops, ("s0", "s1", "s2"))
    assert SOURCE.input_shapes(4, OpSet(), ("s0",)) == []


def test_a_script_imports_the_modules_and_logs_the_effectful_ops():
    ref = library.load(OPSLIB).ref
    program = Program(symbols=("s0",), sym_min={"s0": 1}, inputs=(Input("x0", ("s0",)),),
                      body=(Stmt("opslib::log_sum", ("x0",), None, {}),), imports=(ref.imported,))
    text = SOURCE.script(program)
    assert "importlib.import_module('opslib')" in text and "_trace_effects(['opslib::log_sum'])" in text
    assert f"sys.path.insert(0, {os.path.abspath(ref.root)!r})" in SOURCE.script(program, brief=True)
    assert SOURCE.script(dataclasses.replace(program, imports=(), body=())) == ""
