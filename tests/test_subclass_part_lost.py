"""The subclass-part-lost fault (``fuzzer.faults.subclass_part_lost``): the line of the
generated rebuild it rewrites, the subclasses it misbehaves for, and its undo.  Planted
on a real compile: ``tests/test_faults.py`` (its program on the ``tensor-subclass`` path)."""

from types import SimpleNamespace

from torch._functorch._aot_autograd import subclass_codegen

from fuzzer import faults
from fuzzer.faults import subclass_part_lost
from fuzzer.faults.subclass_part_lost import first_part_everywhere


def test_every_inner_tensor_of_the_rebuilt_dict_is_read_from_the_first_one_s_slot():
    assert (first_part_everywhere("_out_inner_3 = {'a': unwrapped_outs[2], 'b': unwrapped_outs[3]}")
            == "_out_inner_3 = {'a': unwrapped_outs[2], 'b': unwrapped_outs[2]}")
    assert (first_part_everywhere("_out_inner_0 = {'a': _out_attr_1, 'b': _out_attr_2}")  # 2.14's shape of it
            == "_out_inner_0 = {'a': _out_attr_1, 'b': _out_attr_1}")
    for line in ("_out_inner_1 = {'a': unwrapped_outs[0]}", "_out_idx += 1", "x = {'a': y, 'b': z}"):
        assert first_part_everywhere(line) == line           # one part, or no rebuilt dict: untouched


def test_only_a_subclass_of_user_code_is_rebuilt_wrong():
    class PairTensor:
        pass
    PairTensor.__module__ = "__main__"
    assert subclass_part_lost._users(SimpleNamespace(original_subclass_type=PairTensor))
    from torch._subclasses.fake_tensor import FakeTensor
    assert not subclass_part_lost._users(SimpleNamespace(original_subclass_type=FakeTensor))


def test_install_replaces_the_generator_and_undo_restores_it():
    before = subclass_codegen._codegen_wrap_subclass
    undo = faults.get("subclass-part-lost").install()
    try:
        assert subclass_codegen._codegen_wrap_subclass is not before
    finally:
        undo()
    assert subclass_codegen._codegen_wrap_subclass is before
