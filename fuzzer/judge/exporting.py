"""A program run through ``torch.export``, the same way in the package and in every
standalone repro script.

Depends on torch, the standard library, ``observe`` and ``raised`` only:
``fuzzer.render.repro`` pastes this module's text into the script of an entry found through an exported
target (``fuzzer.judge.targets``: ``export``, ``aoti``), so the script exports and runs
exactly as the fuzzer did.

The program is exported (not strict) on its first call's inputs, every dim of an input
that holds a symbol (``s0``, ``s0 // 2``) given as ``Dim.AUTO``, and lowered as its
target says (its :class:`Lowering`; a script's, by name: :data:`LOWERINGS`): every call runs the exported program's ``.module()`` (``export``)
or the AOTInductor package compiled from it and loaded (``aoti``), after its guard
check; a call outside the guards is exported anew on its own inputs (:class:`Exported`).
What exporting or lowering raised is raised again on every later call that needs an
export, and recorded at the compile stage under its own type (:func:`run_exported`).
"""

from __future__ import annotations

import os
import re
import tempfile
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import torch

from fuzzer.judge.guarded import guarded_on
from fuzzer.judge.observe import COMPILE, RUNTIME, Coverage, Failure, Run, run_once
from fuzzer.judge.raised import raised_at

#: what ``torch.export`` documents it may decline, as ``(type, stage, the pattern its
#: message starts with)``
#: (``contract.Asks.declines``): a constraint on a dynamic dim it cannot keep
#: (``UserError``, ``ConstraintViolationError``), control flow or a guard on a size from
#: data (``GuardOnDataDependentSymNode``), what it cannot trace (``Unsupported``); and,
#: when the exported program is called, a binding its guard check rejects (its shapes
#: outside those export narrowed its inputs to: :class:`OutsideGuards`, or the check's
#: own ``AssertionError: Guard failed`` where this torch's module has no separate check)
EXPORT_DECLINES = frozenset({
    ("UserError", COMPILE, ""),
    ("ConstraintViolationError", COMPILE, ""),
    ("GuardOnDataDependentSymNode", COMPILE, ""),
    ("Unsupported", COMPILE, ""),
    ("OutsideGuards", RUNTIME, ""),
    ("AssertionError", RUNTIME, "Guard failed:"),
})

#: what an AOTInductor package declines beside what export does: a call whose inputs
#: are not of the sizes and strides it was compiled for (a later binding's window of
#: another input).  The package assumes them, and checks them only where
#: ``AOTI_RUNTIME_CHECK_INPUTS`` is set (the check is compiled into every package and
#: read at its first call, ``torch/_inductor/codegen/cpp_wrapper_cpu.py``): unchecked,
#: it reads such an input as laid out the compiled way, so :func:`aoti_package` sets
#: it, and the check raises ``input_handles[N]: unmatched stride value ...`` (or ``dim
#: value is too small``: a size under the range it was compiled for), or, for an input
#: whose layout a kernel asserts, ``expected size 2==2, stride 4==2 ... Error in op:
#: input`` (the same assertion of a custom op's result, ``Error in op: <op>``, is a
#: finding: a result its fake impl did not foretell).  And, compiling the package, a
#: ``nested_compile_region`` that reaches Inductor: its C++ wrapper does not implement
#: ``invoke_subgraph`` (``CppWrapperCpu.codegen_invoke_subgraph`` raises
#: ``NotImplementedError``, wrapped in ``InductorError``; 2.11 to 2.14.1).  Patterns, as
#: ``re.match`` reads them
AOTI_DECLINES = EXPORT_DECLINES | frozenset({
    ("RuntimeError", RUNTIME, r"input_handles\["),
    ("RuntimeError", RUNTIME, r"expected size [^\n]*\nError in op: input\b"),
    ("InductorError", COMPILE, r"NotImplementedError: codegen invoke_subgraph is not implemented for cpp wrapper"),
})
#: the variable under which an AOTInductor package checks its inputs' sizes and strides
AOTI_CHECK_INPUTS = "AOTI_RUNTIME_CHECK_INPUTS"

#: a symbol in an input dim's text: ``s0``, or a dim derived from one (``s0 // 2``, ``s1 - 1``)
_SYMBOL = re.compile(r"\bs\d+\b")


def export_dynamic_shapes(input_dims) -> tuple:
    """The ``dynamic_shapes`` of inputs of these dims: ``Dim.AUTO`` on every dim that
    holds a symbol, derived ones included, None for an input with none.

    ``Dim.AUTO``, not ``Dim.DYNAMIC``: where the program's code pins a dim (a size it
    compares with a constant, a derived dim tied to another, a size of 0 or 1 in the
    example, which export specialises), ``DYNAMIC`` makes export raise, refusing the
    whole program; ``AUTO`` lets it specialise, and the pinned value becomes a guard, so a
    binding of another size is exported on its own (:class:`Exported`)."""
    return tuple({k: torch.export.Dim.AUTO for k, d in enumerate(dims) if _SYMBOL.search(str(d))} or None
                 for dims in input_dims)


class ExportFailed(Exception):
    """Carries what ``torch.export.export`` raised out of a run."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class OutsideGuards(Exception):
    """No exported program's guard check accepts a call's inputs, and no more may be
    made: what the last check raised (``AssertionError: Guard failed``, or an error
    evaluating a guard on a size the exported range excludes, such as a division by a
    size of 0), named in the message."""


def aoti_package(program, module=None):
    """The exported program compiled by AOTInductor into a package, and loaded, checking
    its inputs' sizes and strides at every call (:data:`AOTI_DECLINES`)."""
    os.environ[AOTI_CHECK_INPUTS] = "1"
    with tempfile.TemporaryDirectory(prefix="dcefuzz-aoti-") as folder:
        path = torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(folder, "program.pt2"))
        return torch._inductor.aoti_load_package(path)


class GraphRun:
    """An exported program's own graph, called as ``.module()`` would call it but
    without ``.module()``: the graph's flat inputs (each user input in order, the
    lifted constants and state, a fresh token for each effect token), and each
    input the graph's signature says it writes written back (``copy_``, as unlifting
    does).  What its runs show is what export's tracing and functionalization made;
    what only ``.module()`` shows is its unlifting's (the token removal, the copies
    back, the guards): triage tells the two apart (``fuzzer.triage.within``)."""

    def __init__(self, program) -> None:
        from torch.export.graph_signature import InputKind, OutputKind

        self.gm, self.out_spec = program.graph_module, program.call_spec.out_spec
        # a nested region's lifted constant can sit in the graph module's own state
        # (as ``ExportedProgram._graph_module_flat_inputs`` knows)
        lifted = {**self.gm.state_dict(), **program.state_dict, **program.constants}
        #: per graph input: None for the next user input, a callable for a fresh token,
        #: else the lifted value
        self.inputs = [None if spec.kind == InputKind.USER_INPUT
                       else _token if spec.kind == InputKind.TOKEN else lifted[spec.target]
                       for spec in program.graph_signature.input_specs]
        users = [spec.arg.name for spec in program.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT]
        self.placeholders = [node for node in self.gm.graph.nodes if node.op == "placeholder" and node.name in users]
        self.ranges = program.range_constraints
        #: per graph output: the user input's index it writes back, "out" for a user
        #: output, None for what the caller never sees (a token)
        self.outputs = [users.index(spec.target) if spec.kind == OutputKind.USER_INPUT_MUTATION
                        else "out" if spec.kind == OutputKind.USER_OUTPUT else None
                        for spec in program.graph_signature.output_specs]

    def guards(self, *inputs) -> None:
        """Raise unless ``inputs`` fit what the exported program says it was traced for:
        its placeholders' shapes and its range constraints
        (``_check_input_constraints_for_graph``, the check ``.module()`` ran before it
        compiled its guards into a function of its own), so that a bug of ``.module()``'s
        guard function is not this piece's."""
        from torch._export.utils import _check_input_constraints_for_graph

        flat = torch.utils._pytree.tree_leaves(inputs)
        _check_input_constraints_for_graph(self.placeholders, [((), arg) for arg in flat], self.ranges)

    def __call__(self, *inputs):
        flat = torch.utils._pytree.tree_leaves(inputs)
        given = iter(flat)
        args = [next(given) if spec is None else spec() if callable(spec) else spec for spec in self.inputs]
        results = self.gm(*args)
        outs = []
        for where, value in zip(self.outputs, results):
            if where == "out":
                outs.append(value)
            elif where is not None:
                flat[where].copy_(value)
        return torch.utils._pytree.tree_unflatten(outs, self.out_spec) if self.out_spec is not None else outs


def _token():
    return torch.ops.prims._make_token()


@dataclass(frozen=True)
class Lowering:
    """How an exported program (and its ``.module()``) is made into what every call
    runs, and what calls one export serves: the ``lowering`` of an exported target
    (``fuzzer.judge.targets``), and, by its name, of a repro script (:data:`LOWERINGS`)."""

    #: the name a script's ``SPEC`` gives it (``lowering``)
    name: str
    #: the lowered program, from the exported program and its ``.module()``
    lower: Callable[[Any, Any], Any]
    #: the most programs one run exports: a call whose inputs no exported program's
    #: guards accept is exported anew on them, as ``torch.compile`` recompiles (export's
    #: programs are sound for the inputs their guards accept, so a user exports for each
    #: shape they serve outside them)
    exports: int = 8
    #: whether it is made once a specialisation (:func:`specialisation`): a package is
    #: compiled for the sizes its example had, a dynamic dim of 0 or 1 specialised to that
    #: size and every other dim to the range above 1 (it checks sizes below that range
    #: only under :data:`AOTI_CHECK_INPUTS`, and rejects them), so a call of another
    #: specialisation runs a package made for it, exported on its own inputs, and never
    #: another; one of the same specialisation outside the package's guards is refused
    specialised: bool = False
    #: whether its program is functional (writes made outputs and copied back, as
    #: ``run_decompositions()`` and AOTInductor make them): sound only for inputs that
    #: alias one another as the example exported did, which export guards nowhere, so a
    #: call whose inputs share storage otherwise is exported anew, or refused
    #: (:class:`AliasedOtherwise`).  ``.module()`` of export's training IR keeps writes in
    #: place: any aliasing runs as eager
    functional: bool = False


#: the exported program's ``.module()``: ``export``'s
MODULE = Lowering("module", lambda program, module: module)
#: the package AOTInductor compiles and loads: ``aoti``'s, one package a specialisation,
#: an Inductor C++ compile each: the first binding's, and those of the edge bindings
#: (``bindings.draw``: sizes 0, 1 or 2, and each symbol's least) where they hold a 0 or a
#: 1 (at most two more)
PACKAGE = Lowering("package", aoti_package, exports=3, specialised=True, functional=True)
#: pieces of export's pipeline that triage runs a target's own finding through
#: (``fuzzer.triage.within``): the exported graph without ``.module()`` (:class:`GraphRun`:
#: export's training IR, which keeps writes in place and effects inline), and the
#: program after ``run_decompositions()`` (functionalized, to the core ATen set, as
#: AOTInductor lowers it: writes become outputs copied back, effects thread tokens), its
#: graph without ``.module()`` and as its ``.module()``
GRAPH = Lowering("graph", lambda program, module: GraphRun(program))
DECOMPOSED_GRAPH = Lowering("decomposed-graph", lambda program, module: GraphRun(program.run_decompositions()),
                            functional=True)
DECOMPOSED = Lowering("decomposed", lambda program, module: program.run_decompositions().module(), functional=True)
#: the lowerings a repro script can run, by name: every exported target's (a script
#: carries this module, not the target's)
LOWERINGS: dict[str, Lowering] = {lowering.name: lowering for lowering in (MODULE, PACKAGE)}


def specialisation(inputs, dynamic_shapes) -> tuple:
    """Which of ``inputs``' dynamic dims (``dynamic_shapes``) are 0 or 1, and which:
    per input, per dynamic dim in order, its size where it is under 2, else None (every
    size from 2 up is one range)."""
    return tuple(tuple(int(value.shape[k]) if value.shape[k] < 2 else None for k in sorted(dims or {}))
                 for value, dims in zip(inputs, dynamic_shapes))


class AliasedOtherwise(Exception):
    """A call's inputs share storage otherwise than the exported example's did."""


class SpecialisedOtherwise(Exception):
    """A call's dynamic dims of 0 or 1 (:func:`specialisation`) are not those a
    lowering made once a specialisation (``Lowering.specialised``) was made for."""


def sharing(inputs) -> tuple[int, ...]:
    """Per input, the index of the first input whose storage it shares (its own where
    none; an input with no bytes shares nothing)."""
    first: dict[int, int] = {}
    out = []
    for i, value in enumerate(inputs):
        storage = value.untyped_storage() if isinstance(value, torch.Tensor) else None
        out.append(first.setdefault(storage.data_ptr(), i) if storage is not None and storage.nbytes() else i)
    return tuple(out)


@dataclass(frozen=True)
class Made:
    """One export of an :class:`Exported`, lowered, and what calls it serves."""

    #: the check ``.module()`` runs first, or the lowered program's own (None: none)
    guards: Callable | None
    lowered: Any
    #: the example's inputs' sharing (``sharing``) where the lowering is functional, else None
    shared: tuple | None
    #: the example's specialisation (``specialisation``) where the lowering is made once
    #: one, else None
    made_for: tuple | None


class Exported:
    """``fn`` exported on its first call's inputs, lowered by ``lowering`` (an exported
    target's: :class:`Lowering`), and run so on every call whose inputs the exported
    module's guard check accepts; a call outside the guards of every program exported so
    far is exported anew on its own inputs (up to the lowering's ``exports``), and
    refused past that (:class:`OutsideGuards`).  A lowering made once a specialisation
    (``aoti``'s package) runs only the calls of its own, and a call of a specialisation
    none was made for is exported anew, whatever the guards say.  What exporting or
    lowering raised is raised again on every later call that no exported program accepts."""

    def __init__(self, fn, dynamic_shapes, lowering: Lowering = MODULE) -> None:
        self.fn, self.dynamic_shapes, self.lower = fn, dynamic_shapes, lowering.lower
        self.limit = lowering.exports
        self.functional = lowering.functional
        self.specialised = lowering.specialised
        #: each export so far, in order
        self.made: list[Made] = []
        self.error: BaseException | None = None
        #: whether the last call exported (its graph counts once)
        self.exported_now = False

    def _specialisation(self, inputs) -> tuple | None:
        return specialisation(inputs, self.dynamic_shapes) if self.specialised else None

    def _export(self, inputs) -> None:
        fn = self.fn

        class Program(torch.nn.Module):
            def forward(self, *args):
                return fn(*args)

        try:
            program = torch.export.export(Program(), tuple(inputs), dynamic_shapes=(self.dynamic_shapes,))
            module = program.module()
            lowered = self.lower(program, module)
            # the check ``.module()`` runs first, or the lowered program's own
            guards = getattr(lowered, "guards", None) or getattr(module, "_guards_fn", None)
            self.made.append(Made(guards, lowered, sharing(inputs) if self.functional else None,
                                  self._specialisation(inputs)))
        except Exception as exc:  # noqa: BLE001 - the program's failure, recorded
            self.error = exc

    def _accepting(self, inputs):
        """The first lowered program whose guard check accepts ``inputs`` (None: none
        does), and what the last check that rejected them raised."""
        rejected = None
        shares = sharing(inputs) if self.functional else None
        special = self._specialisation(inputs)
        for made in self.made:
            if made.made_for != special:
                rejected = SpecialisedOtherwise(f"dynamic dims of 0 or 1 {special}, where the package was made "
                                                f"for {made.made_for}")
                continue
            if made.shared != shares:
                rejected = AliasedOtherwise(f"inputs share storage as {shares}, where the example "
                                            f"exported shared it as {made.shared}")
                continue
            if made.guards is None:
                return made.lowered, None
            try:
                made.guards(*inputs)
            except Exception as exc:  # noqa: BLE001 - any failure of the check rejects the inputs
                rejected = exc
                continue
            return made.lowered, None
        return None, rejected

    def _may_export(self, inputs) -> bool:
        """Whether a call no lowered program accepts is exported anew: below the
        limit, and, for a lowering made once a specialisation, of one not made yet."""
        if self.error is not None or len(self.made) >= self.limit:
            return False
        return not self.specialised or self._specialisation(inputs) not in {made.made_for for made in self.made}

    def __call__(self, *inputs):
        self.exported_now = False
        lowered, rejected = self._accepting(inputs)
        if lowered is None and self._may_export(inputs):
            self._export(inputs)
            self.exported_now = self.error is None
            lowered, rejected = self._accepting(inputs) if self.error is None else (None, None)
        if lowered is not None:
            return lowered(*inputs)
        if self.error is not None:
            raise ExportFailed(self.error)
        raise OutsideGuards(f"{type(rejected).__name__}: {rejected}") from rejected


def run_exported(fn, exported: Exported, inputs: list, trace: dict) -> Run:
    """One run of ``fn`` (``exported``, or a step around it), recorded: a failure of the
    export itself at the compile stage under its own type, its traceback and placed where
    torch raised it (``raised_at`` of the export's error, not of the :class:`ExportFailed`
    that carried it out of the run, which no frame of torch raised: so its bug class is
    the one ``torch.compile`` gives the same error, and triage can find it there), one
    graph for the run that exported."""
    run = run_once(fn, inputs, trace)
    failure = run.failure
    if failure is not None and failure.type == ExportFailed.__name__ and exported.error is not None:
        error = exported.error
        run.failure = Failure(type(error).__name__, str(error), COMPILE,
                              "".join(traceback.format_exception(error))[-4000:], *raised_at(error),
                              guarded=guarded_on(error))
    graphs = 1 if exported.exported_now else 0
    run.coverage = Coverage(frames=graphs, graphs=graphs)
    return run
