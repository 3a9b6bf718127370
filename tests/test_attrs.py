"""``fuzzer.program.attrs``: every attribute a statement carries is one ``Attrs`` names,
and the accessors read what the keys hold."""

import json
from pathlib import Path

from fuzzer.program import features
from fuzzer.program.attrs import SITE_KEYS, Attrs
from fuzzer.program.generate import generate
from fuzzer.program.ir import Stmt

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_every_key_a_program_carries_is_named_by_attrs():
    """Generated programs (every feature on) and the committed corpus hold no attribute
    ``Attrs`` does not document: a form that draws a new key must name it there."""
    named = set(Attrs.__annotations__)
    seen = {key for seed in range(300) for stmt in generate(seed, features=features.ALL).program.body
            for key in stmt.attrs}
    for path in CORPUS.glob("*.json"):
        data = json.loads(path.read_text())
        if "program" in data:
            seen |= {key for stmt in data["program"]["body"] for key in stmt.get("attrs", {})}
    assert seen - named == set()
    assert set(SITE_KEYS) <= named


def test_the_accessors_read_the_keys():
    call = Stmt("p_cond", ("x0",), "v0", {"site": 3, "site2": 4, "size": "u1", "no_grad": True})
    assert call.sites == (3, 4) and call.data_size == "u1" and call.no_grad
    plain = Stmt("sum", ("x0",), "v1", {"dim": 0})
    assert plain.sites == () and plain.data_size is None and not plain.no_grad
