"""A user's library of ops (``fuzzer.user.library``): a module loaded and its ops read off
their schemas, one that cannot load refused with why, an op looked up by its name; the
example library, no compile."""

from pathlib import Path

import pytest

from fuzzer.user import library

OPSLIB = str(Path(__file__).resolve().parent.parent / "examples" / "user_ops" / "opslib.py")


def test_a_module_is_loaded_and_its_ops_read_off_their_schemas():
    lib = library.load(OPSLIB)
    assert lib.ref.name == "opslib" and lib.ref.imported == ("opslib", lib.ref.root)
    assert lib.qualnames == ["opslib::accumulate", "opslib::clamp_into", "opslib::log_sum", "opslib::matmul",
                             "opslib::scaled_tanh"]
    assert library.op("opslib::matmul").gufunc.text == "(m,n),(n,p)->(m,p)"
    assert library.op("opslib::scaled_tanh").scalars[0].values == (0.5, 2.0)  # its module's DCEFUZZ_SCALARS
    assert library.ensure([lib.ref.imported])[0].qualnames == lib.qualnames


def test_a_module_that_cannot_be_loaded_says_why(tmp_path):
    with pytest.raises(library.LoadError, match="no_such_module"):
        library.load("no_such_module")
    broken = tmp_path / "broken_ops.py"
    broken.write_text("raise RuntimeError('cannot import me')\n")
    with pytest.raises(library.LoadError, match="cannot import me"):
        library.load(str(broken))


def test_a_module_reference_reads_a_file_or_a_dotted_name():
    ref = library.ModuleRef.of(OPSLIB)
    assert ref.name == "opslib" and Path(ref.root).is_dir()
    dotted = library.ModuleRef.of("fuzzer.program.op_snippets")  # an importable module, by its name
    assert dotted.name == "fuzzer.program.op_snippets" and dotted.import_().__name__ == dotted.name
