"""A child's stderr kept for its parent (``fuzzer.isolation.said``): passed on as it
comes, its tail read back, the file removed at the end; the child stood in by writes."""

import os

from fuzzer.isolation.said import Said


def test_what_the_child_writes_is_passed_on_once_and_its_tail_read(tmp_path):
    onward = tmp_path / "logs" / "torch.log"
    said = Said(str(onward))
    assert onward.exists() and onward.read_text() == ""   # there from the start
    with open(said.path, "a") as child:
        child.write("first\n")
    said.pump()
    with open(said.path, "a") as child:
        child.write("free(): invalid size\n")
    said.pump()
    said.pump()
    assert onward.read_text() == "first\nfree(): invalid size\n"
    assert said.tail().endswith("free(): invalid size\n")
    said.close()
    assert not os.path.exists(said.path)


def test_without_a_file_to_pass_on_to_the_words_go_to_stderr(capsys, monkeypatch):
    monkeypatch.delenv("DCEFUZZ_CHILD_LOG", raising=False)
    said = Said()
    with open(said.path, "a") as child:
        child.write("a warning\n")
    said.close()
    assert capsys.readouterr().err == "a warning\n"
