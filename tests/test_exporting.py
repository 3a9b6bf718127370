"""Export's runs (``fuzzer.judge.exporting``): the dynamic shapes a program's dims ask
for, the specialisation a call's sizes of 0 and 1 make, which inputs share storage, and
the lowerings a script can run; nothing exported."""

import torch

from fuzzer.judge import exporting


def test_every_dim_that_holds_a_symbol_is_auto_and_an_input_with_none_is_none():
    shapes = exporting.export_dynamic_shapes([("s0", "3", "s1 + 1"), ("4",)])
    assert shapes == ({0: torch.export.Dim.AUTO, 2: torch.export.Dim.AUTO}, None)


def test_a_specialisation_says_each_dynamic_dim_of_0_or_1_and_one_range_above():
    dims = ({0: torch.export.Dim.AUTO, 2: torch.export.Dim.AUTO}, None)
    one = exporting.specialisation([torch.zeros(1, 3, 5), torch.zeros(4)], dims)
    assert one == ((1, None), ())
    assert exporting.specialisation([torch.zeros(7, 3, 0), torch.zeros(4)], dims) == ((None, 0), ())
    # every size from 2 up is one range: 2 and 9 are the same specialisation
    assert exporting.specialisation([torch.zeros(2, 3, 9), torch.zeros(4)], dims) == \
        exporting.specialisation([torch.zeros(9, 3, 2), torch.zeros(4)], dims)


def test_sharing_names_the_first_input_of_each_storage_and_no_bytes_share_nothing():
    base = torch.zeros(6)
    assert exporting.sharing([base, base[2:], torch.zeros(3), base.view(2, 3)]) == (0, 0, 2, 0)
    empty = torch.zeros(0)
    assert exporting.sharing([empty, empty]) == (0, 1)


def test_a_script_can_run_each_exported_targets_lowering_by_its_name():
    assert exporting.LOWERINGS == {"module": exporting.MODULE, "package": exporting.PACKAGE}
    assert exporting.PACKAGE.specialised and exporting.PACKAGE.functional and exporting.PACKAGE.exports == 3
    assert not exporting.MODULE.specialised and not exporting.MODULE.functional
    # what aoti declines is what export declines and more
    assert exporting.EXPORT_DECLINES < exporting.AOTI_DECLINES
