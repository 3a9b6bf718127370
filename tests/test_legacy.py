"""Bug classes as older versions made them (``fuzzer.judge.legacy``): what a saved class
looked like, and today's name for one; hand-written divergences, classes written as their
text (``helpers.klass``)."""

from helpers import klass

from fuzzer.judge import contract, legacy

SITE = "raised KeyError in torch._inductor.scheduler:compute_ancestors"


def test_fx_suffixed_names_lose_their_numbers():
    assert legacy.renamed(klass("compile-error|arg3_1 and primals_2_1 and buf7")) == \
        klass("compile-error|arg# and primals_# and buf7")


def test_an_error_was_classed_by_its_message_and_a_missed_dce_by_its_kind():
    div = contract.Divergence(contract.COMPILE_ERROR, 0, "compile", "KeyError: 'op12'", (SITE,))
    assert contract.bug_class(contract.COMPILE_ERROR, [div]) == klass(f"compile-error|{SITE}")
    assert legacy.legacy_class(contract.COMPILE_ERROR, [div]) == klass("compile-error|KeyError: 'op#'")
    dce = contract.Divergence(contract.MISSED_DCE, 0, "call", "kept", ("plain",))
    assert legacy.legacy_class(contract.MISSED_DCE, [dce]) == klass("missed-dce")
    log = contract.Divergence(contract.EFFECT_LOG, 0, "sequence", "x", ("missing",))
    assert legacy.legacy_class(contract.EFFECT_LOG, [log]) == contract.bug_class(contract.EFFECT_LOG, [log])


def test_a_raiser_that_names_no_one_thing_was_written_without_what_raised_under_it():
    generated = f"{SITE} (generated: kernel_3 line 4)"
    div = contract.Divergence(contract.RUNTIME_ERROR, 0, "run", "x", (generated,))
    assert legacy.unnamed_raiser(contract.RUNTIME_ERROR, [div]) == klass(f"runtime-error|{SITE}")
    engine = "raised RuntimeError in torch.autograd:_engine_run_backward: in p_sin's backward"
    div = contract.Divergence(contract.RUNTIME_ERROR, 0, "run", "x", (engine,))
    assert legacy.unnamed_raiser(contract.RUNTIME_ERROR, [div]) == \
        klass("runtime-error|raised RuntimeError in torch.autograd:_engine_run_backward")
    plain = contract.Divergence(contract.RUNTIME_ERROR, 0, "run", "boom")
    assert legacy.unnamed_raiser(contract.RUNTIME_ERROR, [plain]) == contract.bug_class(contract.RUNTIME_ERROR,
                                                                                        [plain])
