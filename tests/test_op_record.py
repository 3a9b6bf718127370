"""One custom op as a record (``fuzzer.program.op_record``): what it declares, read off
its source; hand-written snippets."""

import pytest

from fuzzer.program.op_record import DECLARATIONS, MUTATING, PURE, CustomOp

BY_CUSTOM_OP = '''
@torch.library.custom_op("dcefuzz::p_two", mutates_args=())
def p_two(x: torch.Tensor, site: int) -> torch.Tensor:
    return x * 2
'''
WRITES = '''
@torch.library.custom_op("dcefuzz::m_any", mutates_args="unknown")
def m_any(x: torch.Tensor, site: int) -> None:
    x.mul_(2)
'''
BY_SCHEMA = '''
LIB.define("s_neg(Tensor(a!) x, int site) -> ()")
'''
BY_SCHEMA_RETURNING = '''
LIB.define("s_neg2(Tensor x, int site) -> Tensor")
'''


def test_a_custom_op_declared_by_its_function_reads_its_results_off_the_annotation():
    op = CustomOp("p_two", PURE, BY_CUSTOM_OP, "doubles")
    assert op.qualname == "dcefuzz::p_two"
    assert op.returns and not op.by_schema and not op.writes_unknown
    writes = CustomOp("m_any", MUTATING, WRITES, "writes what it likes")
    assert not writes.returns and writes.writes_unknown


def test_an_op_defined_by_a_schema_reads_its_results_off_the_schema():
    assert CustomOp("s_neg", MUTATING, BY_SCHEMA, "").by_schema
    assert not CustomOp("s_neg", MUTATING, BY_SCHEMA, "").returns
    assert CustomOp("s_neg2", PURE, BY_SCHEMA_RETURNING, "").returns


def test_an_op_with_no_signature_to_read_is_refused():
    with pytest.raises(ValueError, match="no signature"):
        CustomOp("odd", PURE, "x = 1\n", "").returns


def test_the_declarations_are_the_three_a_compiler_may_rely_on():
    assert DECLARATIONS == ("pure", "mutating", "effectful")
