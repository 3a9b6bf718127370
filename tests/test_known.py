"""The bugs an upstream file links to public issues (``fuzzer.corpus.known``): their
keys, less those that cannot tell causes apart; a hand-written corpus folder."""

import json

import pytest
from helpers import case, divergence_on, prog

from fuzzer.corpus import store, upstream
from fuzzer.corpus.entry import Entry, Origin
from fuzzer.corpus.known import known_keys
from fuzzer.judge import contract
from fuzzer.triage.culprit import Culprit


#: an error its message classes: at a stage and nothing inside it, a key that cannot
ERROR = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "RuntimeError: something failed")


def _save(folder, site, culprit):
    c = case(prog({"x0": ("s0",)}, [("e_log", ["x0"], None, {"site": 0}), ("p_sin", ["x0"], "v0", {"site": site})]))
    kind, div = (culprit.kind, ERROR if culprit.kind == contract.COMPILE_ERROR else divergence_on(0))
    e = Entry.build(kind, c, [div], Origin(seed=1, device="cpu", backend="inductor"))
    e.culprit = culprit
    store.save(e, folder)
    return e


def _link(folder, entries):
    record = {"entries": [e.id for e in entries], "searched": "2026-01-01",
              "links": [{"ref": "pytorch/pytorch#1", "kind": "issue", "state": "open"}]}
    (folder / upstream.FILE).write_text(json.dumps({"bugs": [record]}))


def test_the_linked_bugs_keys_are_known_and_a_vague_one_is_counted_apart(tmp_path):
    from fuzzer.corpus import bugs

    blamed = _save(tmp_path, 1, Culprit("inductor", kind=contract.EFFECT_LOG, switches={"fusion": "gone"}))
    vague = _save(tmp_path, 2, Culprit("inductor", kind=contract.COMPILE_ERROR))
    _save(tmp_path, 3, Culprit("inductor", kind=contract.EFFECT_LOG, switches={"remove_noop_ops": "gone"}))
    _link(tmp_path, [blamed, vague])
    known = known_keys(str(tmp_path))
    assert known.keys == (bugs.key_of(blamed),) and known.vague == 1


def test_a_folder_without_an_upstream_file_is_refused(tmp_path):
    with pytest.raises(upstream.UpstreamError):
        known_keys(str(tmp_path))
