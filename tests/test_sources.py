"""Op sources (``fuzzer.program.sources``): every stage asks every source, dcefuzz's own
first; stand-in sources registered by hand, no entry points read."""

from types import SimpleNamespace

import pytest
from helpers import prog

from fuzzer.program import sources
from fuzzer.program.ir import Stmt


class Recording:
    """A stand-in source: what it was asked, and a fixed answer."""

    def __init__(self, name, text="", shapes=()):
        self.name, self.text, self.shapes, self.loaded = name, text, list(shapes), []

    def load(self, imports):
        self.loaded.append(imports)

    def input_shapes(self, seed, ops, symbols):
        return self.shapes

    def script(self, program, brief=False, traced=True):
        return self.text


@pytest.fixture
def registry(monkeypatch):
    """Only dcefuzz's own source, with the entry points taken as read."""
    monkeypatch.setattr(sources, "_SOURCES", {sources.BUILTIN.name: sources.BUILTIN})
    monkeypatch.setattr(sources, "_loaded", True)


def test_dcefuzzs_own_source_comes_first_and_the_others_by_name(registry):
    b, a = sources.register(Recording("zeta")), sources.register(Recording("alpha"))
    assert sources.all_sources() == [sources.BUILTIN, a, b]


def test_load_and_input_shapes_ask_every_source(registry):
    one = sources.register(Recording("one", shapes=[(["s0"], None)]))
    two = sources.register(Recording("two", shapes=[(["s1"], "int8")]))
    sources.load((("mod", "path"),))
    assert one.loaded == two.loaded == [(("mod", "path"),)]
    assert sources.input_shapes(0, None, ("s0", "s1")) == [(["s0"], None), (["s1"], "int8")]


def test_a_script_joins_what_each_source_writes_and_leaves_out_the_blank(registry):
    sources.register(Recording("one", text="ONE"))
    sources.register(Recording("two", text="  \n"))
    p = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])
    text = sources.script(p)
    assert text.endswith("\n\nONE") and "def p_sin" in text


def test_a_program_imports_a_sources_modules_once_it_calls_an_op_dcefuzz_does_not_have(monkeypatch):
    monkeypatch.setattr(sources, "forms", SimpleNamespace(
        form=lambda name: SimpleNamespace(site_traced=not name.startswith("user::"))))
    mine = (Stmt("p_sin", ("x0",), "v0", {"site": 0}),)
    theirs = mine + (Stmt("user::op", ("x0",), "v1", {}),)
    modules = (("lib", "/lib"),)
    assert sources.imports_for(mine, modules) == ()
    assert sources.imports_for(theirs, modules) == modules
    assert sources.imports_for(theirs, modules, kept=modules) == modules  # each once
