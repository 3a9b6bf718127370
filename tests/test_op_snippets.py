"""The first custom-op library's table (``fuzzer.program.op_snippets``): each snippet
defines the op it is named after, with the declaration it is filed under."""

import re

from fuzzer.program import op_snippets
from fuzzer.program.op_record import DECLARATIONS, EFFECTFUL, MUTATING, PURE

#: what ``mutates_args=`` is given: a tuple (empty or not) or a word ("unknown")
ARGS = r'\(\)|\([^)\n]+\)|"\w+"'


def test_names_are_unique_and_each_declaration_is_one_of_three():
    names = [op.name for op in op_snippets.FIRST_LIBRARY]
    assert len(names) == len(set(names)) == len(op_snippets.FIRST)
    assert all(op_snippets.FIRST[op.name] is op for op in op_snippets.FIRST_LIBRARY)
    assert {op.declaration for op in op_snippets.FIRST_LIBRARY} <= set(DECLARATIONS)


def test_each_custom_op_snippet_declares_what_it_is_filed_under():
    for op in op_snippets.FIRST_LIBRARY:
        declared = re.search(rf'custom_op\("dcefuzz::{op.name}", mutates_args=({ARGS})', op.source).group(1)
        if op.declaration == MUTATING:
            assert declared not in ("()", ""), op.name
        else:
            assert declared == "()", op.name
        assert (f"_register_ordered({op.name})" in op.source) == (op.declaration == EFFECTFUL), op.name


def test_the_kept_apart_backwards_are_of_pure_ops_each_with_what_it_saves():
    by_name = op_snippets.FIRST
    assert set(op_snippets.BACKWARD) == set(op_snippets.SAVED)
    for name in op_snippets.BACKWARD:
        assert by_name[name].declaration == PURE
        # kept apart: the snippet itself registers no backward
        assert "register_autograd" not in by_name[name].source, name


def test_a_snippet_ends_in_one_newline():
    for op in op_snippets.FIRST_LIBRARY:
        assert op.source.endswith("\n") and not op.source.endswith("\n\n") and not op.source.startswith("\n")
