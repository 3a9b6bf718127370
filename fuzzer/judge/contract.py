"""The oracle contract: what torch.compile must preserve, and what it may change.

This module is the contract, and the only copy of it: the package judges with it,
and ``fuzzer.render.repro`` pastes its text (with ``numeric`` and ``observe``) into
every standalone repro script, so a repro judges exactly as the fuzzer did.  It
therefore depends on torch and the standard library only.  ``docs/contract.md``
states it in prose; each clause is one function with hand-written tests in
``tests/test_contract.py``, on the forbidden side and the allowed side.

MUST MATCH (a difference is a finding), per binding:

1. ``wrong-output``   returned values: count, shape, dtype, and values judged per
   element by :func:`fuzzer.judge.numeric.tensor_difference` against an fp64 eager
   reference (NaN/inf aware); a tensor of a fixed dtype (integers, bool, float8: a
   user's op's codes) exactly, which the IR makes sound (``fuzzer.program.exact``).
   A value that is not a real tensor where eager's is one (``artifacts.not_real``: a
   ``FakeTensor`` or other subclass tracing left, a functorch or functionalization
   wrapper, a meta tensor, no tensor at all) is symptom ``not-real``, judged before
   anything is read of it: a tracing artifact, never a value (the same rule holds a
   written input and an effect's data).
2. ``wrong-mutation`` the final contents of every program input, same judgement; a module's
   buffers are inputs, its state after each call (STATE CARRIED: ``Asks.carry``).
3. ``effect-log``     the exact sequence of (op, call site) events of ORDERED
   effectful ops: nothing missing, extra, duplicated or reordered; and the tensor
   each event saw, same judgement as values.
4. ``compile-error`` / ``runtime-error``: eager returns and compiled raises; the
   stage is where the exception came from (``fuzzer.judge.observe.stage_of``).

SUBCLASS VALUES: a returned value that is a tensor subclass (a wrapper with
``__tensor_flatten__``, as quantisation and distributed libraries write them, kept by
its parts: ``wrapped.Wrapped``) is judged as what it is, then part by part.  Where
eager's is one, compiled's must be one of the same class, flatten context and inner
tensors' names (its parts' so too), and where eager's is plain, plain
(:func:`subclass_difference`, symptom ``subclass``): AOTAutograd wraps a graph's
outputs again in the class, with the context it traced
(``subclass_utils.wrap_tensor_subclasses``).  Each inner tensor is then a value of
clause 1, its symptoms clause 1's, its detail naming the part.  A subclass written in
place is judged by what it wraps: an input the program wraps is a plain tensor of
clause 2.  A wrapper's outer strides and storage hold no data, and are not judged.

If eager raises, the program is *invalid* (a generator defect, never a finding).
If eager run twice disagrees with itself, the case is *nondeterministic* (skipped).
(Both by the check runs of each binding whose compiled run differs from eager at
all, :func:`needs_checks`: a bit-identical compiled run cannot break a clause.)

UNTESTED: a compiled run that did not run wholly as compiled code (a graph break,
a skipped frame, the recompile limit's eager fallback, no graph at all) cannot be
called clean.  From the first binding where that happened on (later bindings may
reuse that code), ``missed-dce`` is not judged, and a case with no finding is
``untested``, never clean.  The correctness clauses still hold there: eager parts
must agree with eager, so a divergence is still a finding.  A graph break the
program asked for (``torch._dynamo.graph_break()``) leaves both sides compiled: it
makes nothing untested, but ``missed-dce`` is not judged across it (a value live
across a break is a graph's output).

REFUSED: a compile error by which Dynamo declines what the program asked with its
marks (:func:`refusal`, :data:`REFUSALS`: a dim marked dynamic that the program
specialises) is the compiler's right, not a finding: the case is untested for that
reason.  A refusal needs the mark that asks for it; without one the same error is a
finding.  The same error from a backend (wrapped by Inductor or AOTAutograd) is a
finding too: the front end accepted the program.  What a target other than
``torch.compile`` documents it declines (``Asks.declines``: ``fuzzer.judge.targets``) is refused too.

INPUT SWAP LIMITS: in a program that swaps an input's storage by ``set_``, or a value
a graph break made an input of the graph that resumes (``Asks.swaps``), the compile error by which AOTAutograd says a ``set_`` of a graph
input whose mutations it cannot keep in the graph "is not supported today"
(:data:`SWAP_DECLINES`) is refused, untested; the same error without a swap is a finding.

ALIAS MERGE LIMITS: in a program that sets a tensor onto another's storage
(``set_alias``, ``swap``, an input swap: an alias that is no view, ``Asks.set_aliases``),
the compile error by which AOTAutograd's ``merge_view_inputs`` says it "does not yet
handle non-differentiable view input mutations" (:data:`MERGE_DECLINES`: mutated graph
inputs that share storage without being differentiable views of one another, a case its
source says is "not currently handled") is refused, untested; without such an alias it
is a finding.

SUBCLASS LIMITS: in a program that holds a tensor subclass (``Asks.subclass``), a
compile error by which AOTAutograd declines what it says "is not supported today" or
"not allowed" for subclasses (:data:`SUBCLASS_DECLINES`: mutated graph inputs that
alias one another where an input or output of the graph is a subclass, metadata
mutations of a subclass input, a storage resized under one, outputs that alias one
intermediate where an input is a subclass) is refused like a
target's, untested and never a finding; the same error without a subclass is one.  So is
the error by which a compiled backward refuses a plain tangent for a subclass output
(autograd's zeros for an output the loss does not read, where a graph returned it
beside one it does): torch's message says to ``.detach()`` such outputs.

MARK_UNBACKED'S LIMITS (``torch._dynamo.decorators.mark_unbacked``'s documentation:
the size "will always be reported as not equal to zero or one", assertions on it
"will be turned into runtime asserts", and "attempting to get the real value of this
dimension will raise an exception"):
- a guard on the value of sizes marked unbacked: a ``GuardOnDataDependentSymNode``
  whose guarded expression's unbacked symbols are all sizes of inputs marked unbacked
  (``guarded.guarded_on``, read off the ShapeEnv that raised it), and which asks more
  than whether they are 0 or 1, is that documented raise, refused wherever it was
  raised (Dynamo, or a backend it arrives wrapped from).  One that taking the marked
  sizes at 2 or more decides (``Eq(2*u0, 0)``) asks what the first sentence answers,
  and raising there is a finding; so is one on a size from data, as without a mark;
- UNBACKED EDGE: a binding in which a dim marked unbacked has size 0 or 1
  (:func:`unbacked_edge`: the size of the input handed over) is outside what the
  compiled code promises, and is not judged, wherever its failure shows (a compile
  error, a runtime assert, a wrong value): untested, ``unbacked-edge``.

HOP-INLINED: a region or ``torch.cond`` the program asked for (``Asks.hops``) that
Dynamo's graphs do not hold was inlined: the case tested the bare calls, untested.
HOP LIMIT: a program that asks a higher-order op for what torch documents it does
not support (``Asks.limits``: an effect in a ``scan`` body) is untested with that
reason, and nothing in it is judged: eager must still run it.

THE REFERENCE'S PATH: where the float64 reference took another path than eager (a
size from data or a branch moved by eager's rounding, :func:`another_path`), it
vouches for nothing: a compiled value must agree with eager's or with the
reference's, within ``assert_close``'s tolerances for its dtype, and one that does
neither is not judged (the binding is untested, ``reference-diverged``); the
reference never widens a tolerance (:func:`judge_off_path`).

GRADIENTS: a program that takes gradients returns them after its own values
(``codegen``'s ``step``), so clause 1 judges them like any returned value.

OPAQUE OBJECTS (``fuzzer.program.objects``, Note [Opaque Objects] of
``torch._library.opaque_object``): a program's objects are made by its step at every
call and handed over with its tensors; what a call computes is computed with them.
- VALUE GUARD: a value-type object is a constant the graph specialises on, guarded on
  its ``__eq__`` (Dynamo's ``CONSTANT_MATCH``); a call handed an unequal one must
  compute with it (recompiled, or right anyway): a value computed with an earlier
  call's object is wrong, by clause 1, 2 or 3.  A reference-type object's member read
  at trace time (``MemberType.USE_REAL``) is baked into the graph and guarded only by
  what the class's ``guard_fn`` returns: where that covers the member, a stale value is
  a finding; a member no ``guard_fn`` covers may be stale by design (no program reads one).
- OBJECT STATE: a reference-type object is a mutable black box handed to the graph; the
  state each one is left in after each call (the step returns it after every other
  value, ``Asks.states``, named so by :func:`object_states`) must equal eager's, judged
  as a returned value.  torch orders and keeps only calls with an effect, and ops taking
  opaque objects have none by default, so each op that writes or reads a state is
  registered ORDERED (clause 3 judges its events, the state each saw among their data).

PRECISION ELISION: Inductor keeps float32 between the ops it fuses where eager rounds
each result to float16 or bfloat16 ("Inductor will elide the downcast-upcast pairs",
``torch._inductor.config.emulate_precision_casts``, off by default), which the
tolerances mostly absorb, but not always: an intermediate rounded in eager before a
cancellation (a pair's part added to a custom op's result) can leave eager near the
reference by chance and compiled eight ulps off.  So a wrong value, mutation or logged
datum of a low-precision program on Inductor (:func:`elision_asked`) that the same
compile with eager's casts emulated no longer shows is that documented elision:
untested, ``precision-elided``; one that still shows is a finding.

AUTOCAST'S CASTS: autocast never casts a float64 tensor, so the float64 reference of
a program with an autocast region (a custom op's ``register_autocast`` rule) makes
none of the casts eager makes there: it computes the rule's op in float64, and eager's
error against it includes the rule's rounding.  A cast decides no size and no branch,
so the path the reference must share is compared without casts (:func:`without_casts`).
A value of the rule's dtype (``bfloat16``) is judged by that dtype's tolerances, and
compiled must give it that dtype: a cast compiled code drops or adds shows there.

ALLOWED TO DIFFER (never a finding): whether and how often a pure op runs, the
order of non-effectful work, writes to intermediates never read again, strides
(but those LAYOUT TAGS promise), recompilations, and the call counts of mutating ops
(only their visible writes are judged).

LAYOUT TAGS (torch's ``tags.yaml``): a custom op's layout tag says what strides compiled
code hands its kernel, and where it promises some, eager's are the answer
(:func:`layout_kept`): ``needs_exact_strides`` "the same strides as observed in eager"
(those of the dims longer than 1: Inductor compares no others, ``significant_strides_equal``),
``needs_fixed_stride_order`` "the same stride permutation" (each pair of dims eager lays
out one outside the other stays so), ``needs_contiguous_strides`` contiguous ones;
``flexible_layout`` any.  The most restrictive tag an op has governs; an untagged custom
op has the release's ``custom_op_default_layout_constraint`` (:func:`layout_tag`).  A
kernel may read what its tag promises, so compiled code that hands it anything else
changes what it computes, and clauses 1, 2 and 4 judge that (its values, its writes, its
result's strides as ``assert_size_stride`` checks them against its fake's).  A program
hands a tagged op what its tag asks in eager (a contiguous op ``x.contiguous()``); an op
whose result depends on more than its tag promises (a ``flexible_layout`` kernel that
reads its strides) lies, and is never in a program (a user's op that does fails its
declaration check, ``fuzzer.user.strides``).

A BACKWARD ON ZEROS: autograd calls a backward with zeros for the outputs no gradient
reached (``set_materialize_grads``, on by default), and AOTAutograd compiles a graph
and its backward as one ``autograd.Function``; so compiled code may run an op's backward
on a zero gradient that eager never calls it for (an output a graph break hands to the
next graph, which the loss does not read).  An *extra* event logged by a backward
(``Asks.backward_logs``) that eager never logged, once, every tensor of which is all
zeros, is allowed (:func:`zero_gradient_events`); a missing, duplicated, reordered or
data-changed event is still a finding.

PROCESS, seen from outside the process (``fuzzer.isolation``): ``crash`` (the
process running the compiled program died: a signal, or past the memory cap) and
``timeout`` (it outlived the time limit), once its eager runs had finished.

STALE CACHE, judged on a cache pair (``fuzzer.cache``): a program compiled with
an op's *new* declaration, served by an on-disk cache that a compile with its *old*
declaration filled (the warm compile), must keep this contract wherever a compile
of the new declaration from empty caches (the cold compile) keeps it.  Each
correctness divergence of the warm compile whose bug class the cold compile does
not show is a ``stale-cache`` divergence (:func:`check_stale`), its symptoms the
variant's label, the kind and the kind's own symptoms.  What the cold compile gets
wrong too is an ordinary bug, not the cache's; a warm compile that is right where
the cold one is wrong is not judged.

PERFORMANCE, reported apart: ``missed-dce``, a call site of a pure custom op whose
result is dead in the program (``fuzzer.program.liveness.dead_pure_sites``) that the
compiled code executed; its symptoms say why such a call may be kept (it binds a size
from data, it is in a ``torch.cond``, neither), and each is another bug.  KEPT BY ITS
ASSERT: a dead call that a runtime assert of Dynamo's graph reads (the size from data
it binds, checked at run time: ``graphs.Graph``) is kept by torch's design, never a
finding; kept with no such assert, it still is.

A USER'S OP (``--ops``, ``fuzzer.user``) is judged by every clause its declaration
calls for (its writes, its effect, both when it has both; its backward), like
dcefuzz's own, except where it cannot say which call ran: it takes
no call-site argument, so its effect events are ``(op, None)`` (clause 3 compares
the sequence of op names and the data each event saw), and ``missed-dce`` is not
judged for it.  An op that fails its declaration check (``fuzzer.user.audit``) is
never in a program: the compiler may break a call whose declaration lies.

THE BUG CLASS (:func:`bug_class`) of the divergences of one kind is what a
confirmation, a shrink step, a replay and a repro must see again: the kind plus
each divergence's *symptom* (how an effect log changed, what about a value
differed, the normalised error or death).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from fuzzer.judge.artifacts import not_real
from fuzzer.judge.guarded import GUARD_ERROR, GUARD_ON_MARKED, GUARD_ON_UNKNOWN
from fuzzer.judge.identity import (
    CACHE_KINDS, COMPILE_ERROR, CORRECTNESS_KINDS, CRASH, EFFECT_LOG, ERROR_KINDS, INVALID, KINDS, MISSED_DCE,
    NONDETERMINISTIC, OK, PERFORMANCE_KINDS, PROCESS_KINDS, RUNTIME_ERROR, STALE_CACHE, TIMEOUT, WRONG_MUTATION,
    WRONG_OUTPUT, BugClass, Kind, Status)
from fuzzer.judge.numeric import agrees, bitwise_equal, tensor_difference
from fuzzer.judge.observe import (
    COMPILE, HOP_INLINED, HOP_LIMIT, NO_GRAPH, REFERENCE_DIVERGED,
    REFUSED, REQUESTED_BREAK, RUNTIME, UNBACKED_EDGE, BindingRuns, Event, Failure, Gap, Run)
from fuzzer.judge.wrapped import Wrapped, form_of, leaves


#: how an effect log can change (its symptoms; "data": an event saw other data)
MISSING, EXTRA, DUPLICATED, REORDERED, DATA = "missing", "extra", "duplicated", "reordered", "data"
#: what about a value can differ
COUNT, SHAPE, DTYPE, NON_FINITE, VALUES = "count", "shape", "dtype", "non-finite", "values"
#: what a value is, a tensor subclass of another class, context or parts, or none, where
#: eager's is another (SUBCLASS VALUES)
OTHER_FORM = "subclass"
#: a value that is not a real tensor where eager's is one (``artifacts.not_real``)
NOT_REAL = "not-real"

_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")  # an object's address in a repr: another in every process
_NAMES = re.compile(r"\b([svux]|buf|op|arg|primals_|tangents_)\d+(?:_\d+)?\b")  # FX's ``arg3_1`` too
#: a size symbol is a size like any number: a stride ``s33`` where another compile
#: has ``1`` is the same message
_SIZE_SYMBOL = re.compile(r"\b[su]#")
#: what a FakeTensor's repr adds that says nothing of the bug: the program's dtype,
#: whether it takes gradients
_TENSOR_ATTRS = re.compile(r",\s*(dtype=torch\.\w+|grad_fn=<\w+>|requires_grad=True)")
#: which of our custom ops an error names is the program's business, not the bug's:
#: the shrinker may swap an op for a simpler one of the same kind
_OUR_OPS = re.compile(r"\b(?:torch\.ops\.)?dcefuzz(?:\.|::)\w+(?:\.default)?")
#: an op's schema, as a message quotes it after its name: which of ours it is says
#: nothing of the bug either
_OUR_SCHEMA = re.compile(r"\b(dcefuzz::\w+)\(.*?\) -> (?:\(.*?\)|\S+?)(?=[.,;]?(?:\s|$))")


def normalise_message(line: str) -> str:
    """An error or death message with numbers, value names and our op names removed."""
    line = _OUR_SCHEMA.sub(r"\1", line)
    line = _OUR_OPS.sub("dcefuzz.<op>", line)
    line = _TENSOR_ATTRS.sub("", line)
    line = _ADDRESS.sub("0x#", line)
    line = _NAMES.sub(lambda match: match.group(1) + "#", line)
    line = _SIZE_SYMBOL.sub("#", line)
    line = _NUMBER.sub("#", line)
    return re.sub(r"\s+", " ", line).strip()[:200]


#: what a :class:`Place` names: a returned value (by its index), an input (by its
#: name), an effectful or pure call (by its ``(op, site)``)
OUTPUT, INPUT, CALL = "output", "input", "call"


@dataclass(frozen=True)
class Place:
    """Where a divergence shows, as the run names it: returned value ``key`` (its index
    among the values ``step`` returns), input ``key`` (its name), or call ``key`` (its
    ``(op, site)``).  A shrink keeps a finding to the places it showed at
    (``fuzzer.judge.spots``), so that a candidate of the same class that breaks the
    clause somewhere else, another bug of one kind, is never taken for it."""

    what: str
    key: object


@dataclass(frozen=True)
class Divergence:
    """One broken clause on one binding.

    ``symptoms`` say how it broke, in the words the bug class is made of; an error
    has one, where torch raised it (``raised.raised_at``); a death, or an error no
    frame of torch raised, has none: its normalised message is its symptom.  ``at``
    says where it shows (:class:`Place`; none for an error, a death or a count of
    values, which show nowhere in particular).
    """

    kind: str
    binding: int
    where: str
    detail: str
    symptoms: tuple[str, ...] = ()
    at: tuple[Place, ...] = ()

    def line(self) -> str:
        site = f" ({self.symptoms[0]})" if self.kind in ERROR_KINDS and self.symptoms else ""
        return f"[{self.kind}] binding {self.binding}, {self.where}: {self.detail}{site}"


def bug_class(kind: str, divs: list[Divergence]) -> BugClass:
    """The kind plus the symptoms of its divergences: what a replay must see again (of
    none: the empty class, which is false)."""
    if not divs:
        return BugClass("")
    if kind in ERROR_KINDS:
        # an error is classed by where torch raised it (``raised.raised_at``), and by
        # its message only where no frame of torch raised it (a death, our own code)
        site = divs[0].symptoms
        return BugClass(kind, (site[0] if site else normalise_message(divs[0].detail),))
    return BugClass(kind, tuple(sorted({word for div in divs for word in div.symptoms})))


def failed_otherwise(kind: str, divs: list[Divergence]) -> Divergence | None:
    """The first error of another kind among ``divs``: a compiled run that raised where a
    bug of ``kind`` was looked for, before the point where it would show or ending the
    binding that would have shown it; a replay that sees one calls it neither this bug nor fixed."""
    return next((div for div in divs if div.kind in ERROR_KINDS and div.kind != kind), None)


@dataclass
class Verdict:
    status: str
    divergences: list[Divergence] = field(default_factory=list)
    reason: str = ""
    #: a ``Gap`` (reason, message, cause) for each way a compiled run was not wholly
    #: compiled, or a binding could not be judged
    untested: list[Gap] = field(default_factory=list)
    #: the bindings after the first whose compiled run compiled a graph: Dynamo recompiled
    #: there (a guard failed), so that call ran code compiled for it
    recompiled: tuple[int, ...] = ()
    #: the bindings whose float64 reference took another path than eager
    diverged: list[int] = field(default_factory=list)
    #: the bindings whose compiled run logged events a backward ran on zeros for
    #: (A BACKWARD ON ZEROS: allowed, not judged as extra)
    zero_backward: list[int] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Divergence]:
        return [div for div in self.divergences if div.kind == kind]

    def kinds(self) -> list[str]:
        return [kind for kind in KINDS if kind in {div.kind for div in self.divergences}]


@dataclass(frozen=True)
class Asks:
    """What a program asks of the compiler beyond its body, which the verdict reads: its marks'
    kinds, the higher-order ops it means to have compiled (``cond``, ``invoke_subgraph``)."""

    marks: frozenset = frozenset()
    hops: frozenset = frozenset()
    #: why it is beyond what torch documents a higher-order op supports (``HOP LIMIT``)
    limits: frozenset = frozenset()
    declines: frozenset = frozenset()  # (type, stage, pattern its message starts with): its target declines them
    carry: bool = False  # its state carries over: a call after one that diverged is not judged (STATE CARRIED)
    #: (input position, dim) of each dim marked unbacked (UNBACKED EDGE)
    unbacked: frozenset = frozenset()
    #: (op, site) of each effect event an op's backward logs (A BACKWARD ON ZEROS)
    backward_logs: frozenset = frozenset()
    #: the reference objects whose states the step returns after every other value, in
    #: order (OBJECT STATE)
    states: tuple = ()
    #: it holds a tensor subclass: what torch documents it does not support for one is
    #: refused (SUBCLASS LIMITS, :data:`SUBCLASS_DECLINES`)
    subclass: bool = False
    #: whether it swaps an input's storage by ``set_``, or a value that a graph break
    #: made an input of the graph that resumes (INPUT SWAP LIMITS)
    swaps: bool = False
    #: whether it sets a tensor onto another's storage, making an alias that is no view
    #: (ALIAS MERGE LIMITS)
    set_aliases: bool = False
    #: whether aten writes through an ``as_strided`` of a window or alias input
    #: (STRIDED CHAIN LIMITS)
    lone_strided: bool = False


# ------------------------------------------------------------------ layout tags

#: the layout tags, most restrictive first: "only one of them can apply; if multiple are
#: assigned then we assume the most restrictive one" (torch's ``tags.yaml``,
#: ``torch._library.utils.tags_by_priority``)
EXACT_STRIDES, CONTIGUOUS_STRIDES = "needs_exact_strides", "needs_contiguous_strides"
FIXED_STRIDE_ORDER, FLEXIBLE_LAYOUT = "needs_fixed_stride_order", "flexible_layout"
LAYOUT_TAGS = (EXACT_STRIDES, CONTIGUOUS_STRIDES, FIXED_STRIDE_ORDER, FLEXIBLE_LAYOUT)


def layout_tag(tags, default: str) -> str:
    """LAYOUT TAGS: the tag that governs an op declared with ``tags`` (their names): the
    most restrictive of its layout tags, or ``default`` where it has none (a custom op:
    the release's ``custom_op_default_layout_constraint``; an aten op: ``flexible_layout``)."""
    return next((tag for tag in LAYOUT_TAGS if tag in set(tags)), default)


def _significant(sizes, strides) -> dict[int, int]:
    """The strides a layout is compared by: those of the dims longer than 1."""
    return {d: stride for d, (size, stride) in enumerate(zip(sizes, strides)) if size > 1}


def _contiguous(sizes) -> list[int]:
    strides, step = [], 1
    for size in reversed(sizes):
        strides.insert(0, step)
        step *= max(size, 1)
    return strides


def layout_kept(tag: str, eager: tuple, handed: tuple) -> bool:
    """LAYOUT TAGS: whether a kernel handed a tensor laid out ``handed`` gets what ``tag``
    promises it, where eager handed it one laid out ``eager`` (each ``(sizes, strides)``
    of one tensor; the same sizes, or nothing is kept; an empty one has no elements to
    lay out, so any layout keeps it).  A ``needs_fixed_stride_order``
    tensor keeps, for each two dims longer than 1, which of the two eager laid out
    outside the other; two eager lays over one another (stride 0) it may order either
    way, as the materialised copy Inductor makes does."""
    (sizes, eager_strides), (handed_sizes, handed_strides) = eager, handed
    if tuple(sizes) != tuple(handed_sizes):
        return False
    if 0 in tuple(sizes):
        return True
    was, now = _significant(sizes, eager_strides), _significant(sizes, handed_strides)
    if tag == EXACT_STRIDES:
        return was == now
    if tag == CONTIGUOUS_STRIDES:
        return now == _significant(sizes, _contiguous(sizes))
    if tag == FIXED_STRIDE_ORDER:
        return all(now[a] > now[b] for a in was for b in was if was[a] > was[b])
    if tag == FLEXIBLE_LAYOUT:
        return True
    raise ValueError(f"unknown layout tag {tag!r}")


# ------------------------------------------------------------------ clauses

def artifact(eager, compiled) -> str | None:
    """What ``compiled`` is instead of a real tensor, where eager's value ``eager`` is
    one (None: it is real too, or eager's is not): clause 1's ``not-real``, asked
    before any size or element of it is read (a ``FakeTensor``'s sizes are symbols,
    and comparing its elements raises)."""
    return not_real(compiled) if not_real(eager) is None else None


def _form_text(value) -> str:
    return value.text() if isinstance(value, Wrapped) else not_real(value) or "a plain tensor"


def subclass_difference(eager, compiled) -> tuple[str, str] | None:
    """SUBCLASS VALUES: (symptom, reason) when ``compiled`` is not what eager's value is
    (``wrapped.form_of``): a tensor subclass of another class, flatten context or inner
    tensors' names, or a plain tensor where eager's is a subclass, or the reverse."""
    if form_of(compiled) == form_of(eager):
        return None
    return OTHER_FORM, f"{_form_text(compiled)} != eager {_form_text(eager)}"


def _parts(value, k: int, form) -> object:
    """Part ``k`` of ``value`` where it has the form ``form`` (None where it has another:
    a noisy reference that made something else vouches for nothing there)."""
    return value.parts[k] if isinstance(value, Wrapped) and value.form == form else None


def _wrapped_value(ref, eager, compiled, noisy=()) -> tuple[str, str] | None:
    """SUBCLASS VALUES: a value that is a tensor subclass in eager or compiled is judged by
    what it is (:func:`subclass_difference`), then part by part by the numeric rule,
    against the reference's parts."""
    other = subclass_difference(eager, compiled)
    if other is not None:
        return other
    for k, name in enumerate(eager.names):
        noisy_parts = [part for part in (_parts(n, k, eager.form) for n in noisy) if part is not None]
        bad = _value(_parts(ref, k, eager.form), eager.parts[k], compiled.parts[k], noisy_parts)
        if bad:
            return bad[0], f"part {name}: {bad[1]}"
    return None


def _value(ref, eager, compiled, noisy=()) -> tuple[str, str] | None:
    """(symptom, reason) when compiled value ``compiled`` breaks the numeric rule (a
    tensor subclass: SUBCLASS VALUES)."""
    if isinstance(eager, Wrapped) or isinstance(compiled, Wrapped):
        return _wrapped_value(ref, eager, compiled, noisy)
    if (what := artifact(eager, compiled)) is not None:
        return NOT_REAL, f"{what} where eager returned a tensor"
    if tuple(compiled.shape) != tuple(eager.shape):
        return SHAPE, f"shape {tuple(compiled.shape)} != eager {tuple(eager.shape)}"
    if compiled.dtype != eager.dtype:
        return DTYPE, f"dtype {compiled.dtype} != eager {eager.dtype}"
    why = tensor_difference(ref, eager, compiled, noisy=noisy)
    return None if why is None else ((NON_FINITE if why.startswith("non-finite") else VALUES), why)


#: exception types by which Dynamo itself declines what a program asked of it, and the
#: marks (``Asks.marks``) that ask it: a dim marked dynamic (or unbacked) that the
#: program specialises.  Without such a mark the same error is Dynamo failing on a
#: program it had no reason to decline; raised from a backend they arrive wrapped
#: (InductorError, BackendCompilerFailed) and are findings too.  A guard on a size
#: marked unbacked is :func:`asked_marked_size`'s
REFUSALS: dict[str, frozenset] = {
    "ConstraintViolationError": frozenset({"dynamic", "unbacked"}),
    "UserError": frozenset({"dynamic", "unbacked"}),
}


#: SUBCLASS LIMITS: what AOTAutograd says "is not supported today" or "not allowed" for
#: tensor subclasses, as ``(exception type, stage, message pattern)`` triples read like a
#: target's (``Asks.declines``): graph inputs that alias one another (or are one tensor
#: given twice) and are mutated where an input or output of the graph is a subclass
#: (``runtime_wrappers``' ``AOTDedupeWrapper`` and ``AOTSyntheticBaseWrapper``), a
#: subclass input whose metadata is mutated (``collect_metadata_analysis``), a storage
#: resized under one (``functional_utils``).  Raised by a backend, they arrive wrapped.
def _declined(raised: str, *patterns: str) -> frozenset:
    """``(exception type, stage, message pattern)`` triples of what torch says it does not
    support, read like a target's declines: raised as ``raised`` while compiling, or by
    a backend, which wraps it (``BackendCompilerFailed``, ``InductorError``)."""
    wrapped = rf"(?:backend='\w+' raised:\s*{raised}:)?\s*"
    return frozenset((kind, COMPILE, wrapped + pattern)
                     for kind in ("BackendCompilerFailed", "InductorError", raised) for pattern in patterns)


SUBCLASS_DECLINES: frozenset = _declined(
    "RuntimeError",
    r"Encountered (?:aliased|duplicate) inputs that are mutated in the graph, but at least one "
    r"input/output\s+to the graph is a tensor subclass",
    r"Metadata mutations are currently not allowed on tensor subclasses",
    r"storage resizing is not supported on tensor subclass") | _declined(
    # "ANY output aliasing (even for regular tensors) is currently unsupported if there are
    # any subclass outputs" (``create_aot_state``: outputs aliasing one intermediate)
    "AssertionError",
    r"torch\.compile is currently being used with tensor subclass inputs\.\s+We are attempting to a compile a "
    r"graph with two graph outputs\s+that alias one another") | frozenset({
    # a backward handed a plain tangent (autograd's zeros) for a subclass output the loss
    # does not read: "call .detach() on forward outputs you don't need gradients for"
    # (``AOTDispatchAutograd.process_runtime_tangent``; #172556, #173123), raised when the
    # compiled backward runs; 2.11's message names the two types
    ("RuntimeError", RUNTIME, r"\s*During the backward, we encountered a tensor subclass where we guessed its\s+"
     r"metadata incorrectly\.\s+(?:Expected a \w+ tangent but got a plain Tensor|Expected metadata: .*, expected "
     r"type: <class '(?!torch\.Tensor')[^']+'>\s+Runtime metadata: .*, runtime type: <class 'torch\.Tensor'>)")})


#: INPUT SWAP LIMITS: AOTAutograd's own word on a ``set_`` (or ``resize_``) of a graph
#: input whose mutations it cannot keep in the graph: "This is not supported today"
#: (``functional_utils._check_if_mutation_can_be_in_graph``, Note [set_() Input
#: Mutations in AOTAutograd]), read like a target's declines. Raised by a backend, it
#: arrives wrapped.
SWAP_DECLINES: frozenset = _declined(
    "AssertionError",
    r"Encountered a (?:set_|resize_) on a graph input, but the input has other mutations that we cannot\s+keep in "
    r"the graph\. This is not supported today")


#: ALIAS MERGE LIMITS: AOTAutograd's word on mutated graph inputs that share storage but
#: are not differentiable views of one another: "does not yet handle non-differentiable
#: view input mutations" (``runtime_wrappers.merge_view_inputs``, whose comment says the
#: case is "not currently handled"; its sibling for views of another dtype is asked for
#: as an enhancement, pytorch#194747). Raised by a backend, it arrives wrapped.
MERGE_DECLINES: frozenset = _declined(
    "AssertionError", r"aot_autograd\(\) does not yet handle non-differentiable view input mutations")


#: STRIDED CHAIN LIMITS: functionalization's ban on an aten write through a chain of
#: views with an ``as_strided`` after its first: "as_strided() is non-compositional, and
#: therefore is not possible to functionalize properly today, so this behavior is banned
#: in compile" (``FunctionalStorageImpl::add_update``, pytorch#104505).  The IR draws an
#: aten write through an ``as_strided`` of a window (or alias) input only where no other
#: input of its storage is read, so that the window is a graph input of its own
#: (``strided_writes.LateStrided``); should a compile still make it a view, torch's ban is what
#: it meets.
STRIDED_DECLINES: frozenset = _declined(
    "RuntimeError", r"During torch\.compile, encountered a mutation on a view chain of length \d+, where view \d+ "
    r"was an as_strided\(\) call")


def asked_marked_size(f: Failure, asks: Asks) -> bool:
    """Whether failure ``f`` is what ``mark_unbacked`` documents for a dim it marks:
    "attempting to get the real value of this dimension will raise an exception".

    It is a ``GuardOnDataDependentSymNode`` (or wraps one) whose guarded expression's
    unbacked symbols are all sizes marked unbacked and which asks their value
    (``guarded.guarded_on``: ``GUARD_ON_MARKED``), at any stage and from any part of
    the compiler: a backward formula AOTAutograd traces asks the value as surely as
    Dynamo does.  One that asks only whether they are 0 or 1 is not: the documentation
    answers that ("always reported as not equal to zero or one"), so the compiler had
    no value to ask for.  Nor is one that asks a size from data: no mark asked for it.
    Where this torch cannot say (``GUARD_ON_UNKNOWN``), only Dynamo's own guard, raised
    unwrapped while compiling, is taken for it."""
    if "unbacked" not in asks.marks:
        return False
    if f.guarded == GUARD_ON_MARKED:
        return True
    return f.guarded == GUARD_ON_UNKNOWN and f.stage == COMPILE and f.type == GUARD_ERROR


#: the kinds a wrong value shows as (a logged datum among them): the ones PRECISION
#: ELISION asks about, and one bug family wherever they land (``triage.family``)
VALUE_KINDS = (WRONG_OUTPUT, WRONG_MUTATION, EFFECT_LOG)
#: the dtypes Inductor computes in float32 between fused ops (``emulate_precision_casts``)
LOW_PRECISION_DTYPES = ("float16", "bfloat16")


def elision_asked(dtype: str, backend: str, kind: str) -> bool:
    """PRECISION ELISION: whether a finding of ``kind`` in a program of ``dtype``,
    compiled by ``backend``, is judged again with eager's casts emulated."""
    return backend == "inductor" and dtype in LOW_PRECISION_DTYPES and kind in VALUE_KINDS


def refusal(compiled: Run, asks: Asks = Asks()) -> Gap | None:
    """The refusal, its cause the failure's type (the guard's, for a guard on a size marked unbacked),
    when the compiled run failed because the compiler declined what the program asked with its marks,
    as its target declines, or as torch documents it declines a tensor subclass (SUBCLASS LIMITS)
    (never a finding), else None."""
    if (f := compiled.failure) is None:
        return None
    if asked_marked_size(f, asks):
        return Gap(REFUSED, f.line(), GUARD_ERROR)
    marked = f.stage == COMPILE and REFUSALS.get(f.type, set()) & asks.marks
    declines = (asks.declines | (SUBCLASS_DECLINES if asks.subclass else frozenset())
                | (SWAP_DECLINES if asks.swaps else frozenset())
                | (MERGE_DECLINES if asks.set_aliases else frozenset())
                | (STRIDED_DECLINES if asks.lone_strided else frozenset()))
    declined = any((f.type, f.stage) == (t, s) and re.match(p, f.message) for t, s, p in declines)
    return Gap(REFUSED, f.line(), f.type) if marked or declined else None


def unbacked_edge(binding: int, eager: Run, asks: Asks) -> Gap | None:
    """UNBACKED EDGE: the gap when a dim marked unbacked (``Asks.unbacked``) has size 0 or 1
    on this binding, else None.

    ``mark_unbacked`` documents that the size "will always be reported as not equal to
    zero or one": the compiled code may assume it is neither (a runtime assert that
    needs it, a stride or broadcast chosen by it), so a binding where it is one is
    outside what that code promises.  The size is the marked dim's in the input handed
    over (eager's run records it), whatever the symbols say."""
    inputs = eager.inputs_after
    small = [(k, dim, inputs[k].shape[dim]) for k, dim in sorted(asks.unbacked)
             if k < len(inputs) and dim < inputs[k].dim() and inputs[k].shape[dim] in (0, 1)]
    if not small:
        return None
    sizes = ", ".join(f"input {k}'s dim {dim} is {size}" for k, dim, size in small)
    return Gap(UNBACKED_EDGE, f"binding {binding}: {sizes}, marked unbacked (mark_unbacked: its size is "
               "always reported as not equal to zero or one)", str(small[0][2]))


def check_outcome(binding: int, eager: Run, compiled: Run) -> list[Divergence]:
    """Clause 4: eager returned, so compiled must return too."""
    if compiled.failure is None:
        return []
    failure = compiled.failure
    kind = COMPILE_ERROR if failure.stage == COMPILE else RUNTIME_ERROR
    site = failure.site + (f": {normalise_message(failure.site_message)}" if failure.site_message else "")
    return [Divergence(kind, binding, failure.stage, failure.line(), (site,) if failure.site else ())]


def _noisy(noisy, field_of, index: int) -> list:
    """The ``index``-th tensor of each noisy reference's ``field_of`` (where it has one)."""
    return [values[index] for values in map(field_of, noisy) if index < len(values)]


def _wrong_count(binding: int, eager: Run, compiled: Run) -> list[Divergence]:
    """Clause 1 broken by the number of values compiled returned."""
    return [Divergence(WRONG_OUTPUT, binding, "outputs",
                       f"{len(compiled.outputs)} values returned, eager returned {len(eager.outputs)}", (COUNT,))]


def check_outputs(binding: int, eager: Run, ref: Run, compiled: Run, noisy=()) -> list[Divergence]:
    """Clause 1: returned values."""
    if len(compiled.outputs) != len(eager.outputs):
        return _wrong_count(binding, eager, compiled)
    out = []
    for index, values in enumerate(zip(ref.outputs, eager.outputs, compiled.outputs)):
        bad = _value(*values, _noisy(noisy, lambda run: run.outputs, index))
        if bad:
            out.append(Divergence(WRONG_OUTPUT, binding, f"output {index}", bad[1], (bad[0],),
                                  (Place(OUTPUT, index),)))
    return out


def check_inputs(binding: int, names, eager: Run, ref: Run, compiled: Run, noisy=()) -> list[Divergence]:
    """Clause 2: final contents of every program input, a module's buffers included."""
    out = []
    for index, (name, *values) in enumerate(zip(names, ref.inputs_after, eager.inputs_after,
                                                compiled.inputs_after)):
        bad = _value(*values, _noisy(noisy, lambda run: run.inputs_after, index))
        if bad:
            out.append(Divergence(WRONG_MUTATION, binding, f"input {name}", bad[1], (bad[0],),
                                  (Place(INPUT, name),)))
    return out


def event_text(op: str, site) -> str:
    """``op@site``, or the bare op for a user's op, whose calls carry no site."""
    return op if site is None else f"{op}@{site}"


def _seq(calls) -> str:
    return "[" + ", ".join(event_text(op, site) for op, site in calls) + "]"


def sequence_change(expected: list, got: list) -> tuple[tuple[str, ...], str]:
    """How the effect sequence ``got`` departs from ``expected`` (each a list of
    ``(op, site)``, ``Event.call``): symptoms and words."""
    # counted, not just looked up: an identical call repeats its (op, site), and two
    # of them merged into one is an event missing
    missing = list(dict.fromkeys(call for call in expected if got.count(call) < expected.count(call)))
    extra = [call for call in got if call not in expected]
    duplicated = sorted({call for call in got if got.count(call) > expected.count(call) and call in expected})
    parts = []
    for word, calls in ((MISSING, missing), (EXTRA, extra), (DUPLICATED, duplicated)):
        if calls:
            parts.append((word, word + " " + ", ".join(event_text(op, site) for op, site in calls)))
    if not parts:
        parts.append((REORDERED, REORDERED))
    text = "; ".join(part for _, part in parts) + f" (eager {_seq(expected)}, compiled {_seq(got)})"
    return tuple(word for word, _ in parts), text


def changed_calls(expected: list, got: list) -> tuple:
    """The calls (``(op, site)``) a changed effect sequence is about: those run another
    number of times (missing, extra, duplicated), and both calls of each pair the two
    sequences run in another order (by where each first runs)."""
    counted = [call for call in dict.fromkeys(expected + got) if expected.count(call) != got.count(call)]
    common = [call for call in dict.fromkeys(expected) if call in got]
    first = {call: got.index(call) for call in common}
    swapped = [call for k, a in enumerate(common) for b in common[k + 1:] if first[b] < first[a] for call in (a, b)]
    return tuple(dict.fromkeys(counted + swapped))


def check_sequence(binding: int, eager: Run, compiled: Run) -> list[Divergence]:
    """Clause 3's first half: the (op, site) sequence of the ORDERED effects."""
    expected = [event.call for event in eager.effects]
    got = [event.call for event in compiled.effects]
    if expected != got:
        symptoms, text = sequence_change(expected, got)
        at = tuple(Place(CALL, call) for call in changed_calls(expected, got))
        return [Divergence(EFFECT_LOG, binding, "sequence", text, symptoms, at)]
    return []


def _event_where(number: int, event: Event, index: int) -> str:
    return f"event {number} ({event_text(event.op, event.site)}) input {index}"


def check_effects(binding: int, eager: Run, ref: Run, compiled: Run, noisy=()) -> list[Divergence]:
    """Clause 3: the ORDERED effect log, event by event."""
    wrong_order = check_sequence(binding, eager, compiled)
    if wrong_order:
        return wrong_order
    out = []
    for number, (ref_event, eager_event, compiled_event) in enumerate(zip(ref.effects, eager.effects,
                                                                          compiled.effects)):
        for index, seen in enumerate(zip(ref_event.tensors, eager_event.tensors, compiled_event.tensors)):
            seen_by_noisy = _noisy(noisy, lambda run: run.effects[number].tensors if number < len(run.effects) else (),
                                   index)
            bad = _value(*seen, seen_by_noisy)
            if bad:
                out.append(Divergence(EFFECT_LOG, binding, _event_where(number, eager_event, index),
                                      f"saw different data: {bad[1]}", (DATA,), (Place(CALL, eager_event.call),)))
    return out


def zero_gradient_events(eager: Run, compiled: Run, asks: Asks) -> list[int]:
    """A BACKWARD ON ZEROS: the numbers of ``compiled``'s effect events that an op's
    backward logged on a zero gradient eager never gave it, which are allowed.

    Autograd hands a backward zeros for the outputs no gradient reached
    (``set_materialize_grads``, on by default), and AOTAutograd compiles a graph and its
    backward as one ``autograd.Function``: where the loss reads one of its outputs, the
    backward of every op in it runs, that of an op whose output the loss never reads on
    zeros.  So an event is allowed only when it is a backward's (``Asks.backward_logs``)
    whose (op, site) eager never logged, the first compiled logged, and every tensor it
    saw (at least one) is all zeros: a backward eager called too (its gradient reached
    it), a second such event, one that saw other data, or one out of order in what is
    left, is judged as any other."""
    if not asks.backward_logs:
        return []
    seen = {event.call for event in eager.effects}
    allowed = []
    for number, event in enumerate(compiled.effects):
        zeros = bool(event.tensors) and all(bool((tensor == 0).all()) for tensor in event.tensors)
        if event.call in asks.backward_logs and event.call not in seen and zeros:
            allowed.append(number)
        seen.add(event.call)
    return allowed


def without_events(run: Run, numbers: list[int]) -> Run:
    """``run`` with the effect events of these numbers left out: what is judged of it."""
    return replace(run, effects=[event for number, event in enumerate(run.effects) if number not in numbers])


def check_dead_calls(binding: int, dead_sites, compiled: Run, asserted=()) -> list[Divergence]:
    """Performance: dead pure call sites the compiled code still ran.  ``dead_sites``
    maps each site to why the compiler may keep it (``liveness.dead_site_causes``: a
    size from data, a ``torch.cond``, nothing), the causes of those it ran its
    symptoms: each is a different bug (a set of sites alone gives none).

    A site a runtime assert of Dynamo's graphs reads (``asserted``,
    ``graphs.Graph``: the size its result has, checked at run time) must run for the
    assert to be checked: keeping it is torch's design, never a finding.  Only what
    the graphs compiled so far say counts, so a call kept with no assert, or with the
    asserts turned off (``do_not_emit_runtime_asserts``), is still one."""
    ran = sorted({site for op, site in compiled.calls if site in dead_sites and site not in asserted})
    if not ran:
        return []
    names = {site: op for op, site in compiled.calls}
    causes = tuple(sorted({dead_sites[site] for site in ran})) if isinstance(dead_sites, dict) else ()
    executed = ", ".join(f"{names[site]}@{site}" for site in ran)
    return [Divergence(MISSED_DCE, binding, "calls", f"dead pure call sites executed: {executed}", causes,
                       tuple(Place(CALL, (names[site], site)) for site in ran))]


def _message_symptom(detail: str) -> str:
    """An error's message as one symptom word: normalised, its first clause only (an
    assertion on sizes repeats itself once per dim), and no commas (they part words)."""
    return normalise_message(detail).split(";")[0].replace(",", "")


def check_stale(warm: Verdict, cold: Verdict, label: str) -> list[Divergence]:
    """Stale cache: the warm compile's correctness divergences of a kind whose bug
    class the cold compile of the same declaration does not show."""
    out = []
    for kind in CORRECTNESS_KINDS:
        seen = warm.of_kind(kind)
        if not seen or bug_class(kind, seen) == bug_class(kind, cold.of_kind(kind)):
            continue
        for div in seen:
            # an error here is what the stale code tripped over, in its own words: where
            # it was raised moves between releases (a runtime size check that 2.14.1
            # makes in another function) while the words and the cache say which bug
            symptoms = (_message_symptom(div.detail),) if kind in ERROR_KINDS else div.symptoms
            out.append(Divergence(STALE_CACHE, div.binding, div.where, f"{label}: [{kind}] {div.detail}",
                                  (label, kind) + tuple(symptoms)))
    return out


# ------------------------------------------------------------------ verdict

def _tensor_pairs(first: Run, second: Run) -> list:
    pairs = list(zip(first.outputs, second.outputs)) + list(zip(first.inputs_after, second.inputs_after))
    return pairs + [pair for ours, theirs in zip(first.effects, second.effects)
                    for pair in zip(ours.tensors, theirs.tensors)]


def _bitwise(ours, theirs) -> bool:
    """Bit-identical values (NaN equal NaN), a tensor subclass of the same form part by
    part; an artifact where the other is real never (its elements cannot be read)."""
    if form_of(ours) != form_of(theirs):
        return False
    return all(artifact(a, b) is None and bitwise_equal(a, b) for a, b in zip(leaves(ours), leaves(theirs)))


def _same_record(first: Run, second: Run) -> bool:
    """Bit-identical records (NaN equal NaN): nothing any clause could flag."""
    if second.failure is not None or len(first.outputs) != len(second.outputs):
        return False
    if [event.call for event in first.effects] != [event.call for event in second.effects]:
        return False
    return all(_bitwise(ours, theirs) for ours, theirs in _tensor_pairs(first, second))


def _tensors_of(run: Run) -> list:
    """Every value a run recorded, a tensor subclass as itself (its parts: ``leaves``)."""
    seen = [tensor for event in run.effects for tensor in event.tensors]
    return list(run.outputs or []) + list(run.inputs_after) + seen


def _step_text(step) -> str:
    op, said = step
    return f"{op} gave {said!r}" if not isinstance(said, tuple) or said else op


#: the op a cast records on a path (``observe.PathRecorder``): AUTOCAST'S CASTS
CAST = "aten._to_copy"


def without_casts(path: tuple) -> tuple:
    """AUTOCAST'S CASTS: a path without its casts.  Autocast never casts a float64
    tensor (a custom op's rule, ``torch._library.custom_ops._cast``, and aten's own
    autocast kernels take only the floating dtypes below it), and ``Tensor.to`` the dtype
    a tensor has already dispatches nothing, so the float64 reference makes none of the
    casts eager makes in and out of an autocast region: a cast decides nothing (no size,
    no branch), so it is no step of the path the reference must share."""
    return tuple(step for step in path if step[0] != CAST)


def another_path(eager: Run, ref: Run) -> str | None:
    """How the float64 reference ``ref`` left eager's path on a binding (None: it did
    not): another path recorded (``observe.PathRecorder``: a size from data, a
    ``torch.cond`` branch; casts aside, :func:`without_casts`), other call sites run,
    other counts or shapes of values.  Its values then say nothing of the error eager's
    path may carry."""
    eager_path = None if eager.path is None else without_casts(eager.path)
    ref_path = None if ref.path is None else without_casts(ref.path)
    if eager_path is not None and ref_path is not None and eager_path != ref_path:
        for eager_step, ref_step in zip(eager_path, ref_path):
            if eager_step != ref_step:
                return f"eager's {_step_text(eager_step)}, float64's {_step_text(ref_step)}"
        return f"eager's path has {len(eager_path)} ops, float64's {len(ref_path)}"
    if eager.calls != ref.calls:
        return "float64 ran other custom-op call sites"
    eager_values, ref_values = _tensors_of(eager), _tensors_of(ref)
    if (len(eager_values) != len(ref_values) or len(eager.outputs or []) != len(ref.outputs or [])
            or len(eager.effects) != len(ref.effects)):
        return "float64 returned or logged another number of values"
    for eager_value, ref_value in zip(eager_values, ref_values):
        if form_of(eager_value) != form_of(ref_value):
            return f"float64 made {_form_text(ref_value)} where eager made {_form_text(eager_value)}"
        for eager_leaf, ref_leaf in zip(leaves(eager_value), leaves(ref_value)):
            if tuple(eager_leaf.shape) != tuple(ref_leaf.shape):
                return (f"float64 made a value of shape {tuple(ref_leaf.shape)} where eager made "
                        f"{tuple(eager_leaf.shape)}")
    return None


def judge_off_path(binding: int, names, binding_runs: BindingRuns, compiled: Run) -> tuple[list[Divergence], list[str]]:
    """A binding whose reference left eager's path (``another_path``): what still can
    be judged, and the values that cannot.

    The effect sequence, the number of returned values, every dtype and every value
    that is not a real tensor (``not-real``) are judged as anywhere.  A value is right
    when it agrees with eager's (``numeric.agrees``, the dtype's ``assert_close``
    tolerances: compiled took eager's path) or with the reference's (compiled took the
    float64 path: a size or branch off by eager's rounding); one that does neither is
    not judged, since compiled may have taken a path of its own through the same
    rounding, and no reference says what error that path may carry.  The reference
    never widens a tolerance here."""
    eager, ref = binding_runs.eager, binding_runs.checks.reference
    divs = check_sequence(binding, eager, compiled)
    if len(compiled.outputs) != len(eager.outputs):
        return divs + _wrong_count(binding, eager, compiled), []
    values = [(WRONG_OUTPUT, f"output {index}", Place(OUTPUT, index), *triple)
              for index, triple in enumerate(zip(ref.outputs, eager.outputs, compiled.outputs))]
    values += [(WRONG_MUTATION, f"input {name}", Place(INPUT, name), *triple)
               for name, *triple in zip(names, ref.inputs_after, eager.inputs_after, compiled.inputs_after)]
    if not divs and len(ref.effects) == len(eager.effects):
        values += [(EFFECT_LOG, _event_where(number, eager_event, index), Place(CALL, eager_event.call), *seen)
                   for number, (ref_event, eager_event, compiled_event)
                   in enumerate(zip(ref.effects, eager.effects, compiled.effects))
                   for index, seen in enumerate(zip(ref_event.tensors, eager_event.tensors, compiled_event.tensors))]
    unjudged = []
    for kind, where, place, ref_value, eager_value, compiled_value, other in _by_part(values):
        if other is not None:
            divs.append(Divergence(kind, binding, where, other, (OTHER_FORM,), (place,)))
        elif (what := artifact(eager_value, compiled_value)) is not None:
            divs.append(Divergence(kind, binding, where, f"{what} where eager returned a tensor", (NOT_REAL,),
                                   (place,)))
        elif compiled_value.dtype != eager_value.dtype:
            divs.append(Divergence(kind, binding, where, f"dtype {compiled_value.dtype} != eager {eager_value.dtype}",
                                   (DTYPE,), (place,)))
        elif not (agrees(eager_value, compiled_value)
                  or (ref_value is not None and agrees(ref_value.to(compiled_value.dtype), compiled_value))):
            unjudged.append(where)
    return divs, unjudged


def _by_part(values: list) -> list:
    """Values to judge, ``(kind, where, place, reference, eager, compiled)``, with each
    that is a tensor subclass in eager or compiled made its parts (SUBCLASS VALUES), and
    last the reason one of another form than eager's differs by (None for the others)."""
    out = []
    for kind, where, place, ref_value, eager_value, compiled_value in values:
        if not (isinstance(eager_value, Wrapped) or isinstance(compiled_value, Wrapped)):
            out.append((kind, where, place, ref_value, eager_value, compiled_value, None))
        elif (other := subclass_difference(eager_value, compiled_value)) is not None:
            out.append((kind, where, place, ref_value, eager_value, compiled_value, other[1]))
        else:
            out += _by_part([(kind, f"{where} part {name}", place, _parts(ref_value, k, eager_value.form),
                              eager_value.parts[k], compiled_value.parts[k])
                             for k, name in enumerate(eager_value.names)])
    return out


def needs_checks(runs: list[BindingRuns], asks: Asks = Asks()) -> list[int]:
    """The bindings :func:`judge_runs` judges against their check runs
    (``observe.Checks``: eager again, the float64 reference), which whoever ran the
    program makes for them and hands over with the rest: those whose compiled run is
    not bit-identical to eager (one that is breaks no clause) and is no refusal.
    None when eager failed anywhere: the case is invalid whatever the rest says."""
    if any(binding_runs.eager.failure is not None for binding_runs in runs):
        return []
    return [binding for binding, binding_runs in enumerate(runs)
            if binding_runs.compiled is not None and refusal(binding_runs.compiled, asks) is None
            and not _same_record(binding_runs.eager, _as_judged(binding_runs, asks)[0])]


def _as_judged(binding_runs: BindingRuns, asks: Asks) -> tuple[Run, bool]:
    """The compiled run as the clauses judge it, and whether it logged events a backward
    ran on zeros for (A BACKWARD ON ZEROS), which are left out of it."""
    allowed = zero_gradient_events(binding_runs.eager, binding_runs.compiled, asks)
    return (without_events(binding_runs.compiled, allowed), True) if allowed else (binding_runs.compiled, False)


def _unsound(binding: int, binding_runs: BindingRuns) -> Verdict | None:
    """The verdict when a binding's check runs (:func:`needs_checks`) show eager
    cannot be judged by: it raised, or disagreed with itself."""
    checks = binding_runs.checks
    if checks is None:
        raise ValueError(f"binding {binding}'s compiled run differs from eager and it has no check runs "
                         "(contract.needs_checks names the bindings that need them)")
    for run in (checks.eager_again, checks.reference):
        if run.failure is not None:
            return Verdict(INVALID, reason=f"eager raised on binding {binding}: {run.failure.line()}")
    if not _same_record(binding_runs.eager, checks.eager_again):
        return Verdict(NONDETERMINISTIC, reason=f"eager disagrees with itself on binding {binding}")
    return None


def _judge_on_path(binding: int, names, binding_runs: BindingRuns, compiled: Run) -> list[Divergence]:
    """Clauses 1 to 3 on a binding whose reference kept to eager's path."""
    eager, ref = binding_runs.eager, binding_runs.checks.reference
    noisy = [run for run in binding_runs.checks.noisy if run.failure is None and run.path == ref.path]
    return (check_outputs(binding, eager, ref, compiled, noisy)
            + check_inputs(binding, names, eager, ref, compiled, noisy)
            + check_effects(binding, eager, ref, compiled, noisy))


@dataclass(frozen=True)
class _Judged:
    """What the clauses found on one binding, and what else the verdict reads of it."""

    #: the compiled run as judged (:func:`_as_judged`)
    compiled: Run
    divergences: list = field(default_factory=list)
    #: whether ``missed-dce`` may judge it: not where it raised (clause 4 ends it), nor
    #: outside ``mark_unbacked``'s promise
    dce: bool = True
    #: the reference took another path than eager (``another_path``)
    left: bool = False
    #: what could not be judged there (``reference-diverged``, ``unbacked-edge``)
    gap: Gap | None = None
    #: it logged events a backward ran on zeros for (A BACKWARD ON ZEROS)
    zero_backward: bool = False


def _clauses(binding: int, names, binding_runs: BindingRuns, compiled: Run) -> _Judged | Verdict:
    """Clauses 1 to 4 on one binding whose compiled run differs from eager, once its
    check runs show eager sound (else their verdict, :func:`_unsound`)."""
    unsound = _unsound(binding, binding_runs)
    if unsound is not None:
        return unsound
    failed = check_outcome(binding, binding_runs.eager, compiled)
    if failed:
        return _Judged(compiled, failed, dce=False)
    left = another_path(binding_runs.checks.eager_again, binding_runs.checks.reference)
    if left is None:
        return _Judged(compiled, _judge_on_path(binding, names, binding_runs, compiled))
    found, unjudged = judge_off_path(binding, names, binding_runs, compiled)
    gap = Gap(REFERENCE_DIVERGED, f"binding {binding}: {left}; {', '.join(unjudged)} follow neither eager nor "
              "float64") if unjudged else None
    return _Judged(compiled, found, left=True, gap=gap)


def object_states(divergences: list[Divergence], count: int, states) -> list[Divergence]:
    """OBJECT STATE: ``divergences`` with those of the last ``len(states)`` of ``count``
    returned values named as what they are, the state each of the program's reference
    objects ``states`` was left in by the call (the step returns them after every other
    value, ``objects.states``); judged as returned values (clause 1), where they stay."""
    first = count - len(states)
    out = []
    for div in divergences:
        at = div.at[0] if len(div.at) == 1 else None
        if states and at is not None and at.what == OUTPUT and first <= at.key < count:
            div = replace(div, where=f"state of {states[at.key - first]}")
        out.append(div)
    return out


def _judge_binding(binding: int, names, binding_runs: BindingRuns, asks: Asks) -> _Judged | Verdict:
    """One binding that is no refusal: its compiled run as judged (events a backward ran
    on zeros for left out), the clauses where it differs from eager, and, on a binding
    outside ``mark_unbacked``'s promise (:func:`unbacked_edge`), nothing judged: a gap
    where a clause broke there, none where it kept them all anyway."""
    compiled, on_zeros = _as_judged(binding_runs, asks)
    judged = _Judged(compiled, zero_backward=on_zeros)
    if not _same_record(binding_runs.eager, compiled):
        judged = _clauses(binding, names, binding_runs, compiled)
        if isinstance(judged, Verdict):
            return judged
        judged = replace(judged, zero_backward=on_zeros,
                         divergences=object_states(judged.divergences, len(binding_runs.eager.outputs), asks.states))
    edge = unbacked_edge(binding, binding_runs.eager, asks)
    if edge is None:
        return judged
    broke = bool(judged.divergences) or judged.gap is not None
    return _Judged(compiled, dce=False, gap=edge if broke else None)


def judge_runs(input_names, dead_sites, runs: list[BindingRuns], asks: Asks = Asks()) -> Verdict:
    """Apply every clause to every binding's runs.

    A compiled run bit-identical to eager breaks no clause, so only the call trace
    (missed-dce) is looked at; any other is judged with its binding's check runs
    (``BindingRuns.checks``: the bindings :func:`needs_checks` names), which first
    show eager sound (:func:`_judge_binding`; one whose reference took another path
    than eager by :func:`judge_off_path`).  What a binding outside ``mark_unbacked``'s
    promise breaks is a gap, not a finding (:func:`unbacked_edge`).
    """
    for binding, binding_runs in enumerate(runs):
        if binding_runs.eager.failure is not None:
            return Verdict(INVALID, reason=f"eager raised on binding {binding}: {binding_runs.eager.failure.line()}")
    if asks.limits:  # HOP LIMIT: beyond what torch documents, nothing is judged
        return Verdict(OK, untested=[Gap(HOP_LIMIT, why) for why in sorted(asks.limits)])
    divergences: list[Divergence] = []
    untested: list[Gap] = []
    diverged: list[int] = []
    zero_backward: list[int] = []
    crossed = False  # a requested graph break was met
    asserted: set = set()  # call sites the runtime asserts of the graphs so far read
    for binding, binding_runs in enumerate(runs):
        compiled = binding_runs.compiled
        if asks.carry and (divergences or diverged or any(u.reason in (REFUSED, UNBACKED_EDGE) for u in untested)):
            break  # STATE CARRIED: this call starts from another state than eager's
        if compiled is None:
            continue
        if compiled.coverage is not None:
            asserted.update(compiled.coverage.asserted)
            untested += [gap for gap in compiled.coverage.gaps if gap not in untested and gap.reason != REQUESTED_BREAK]
            crossed = crossed or any(gap.reason == REQUESTED_BREAK for gap in compiled.coverage.gaps)
        if (declined := refusal(compiled, asks)) is not None:
            untested.append(declined)
            continue
        judged = _judge_binding(binding, input_names, binding_runs, asks)
        if isinstance(judged, Verdict):
            return judged
        divergences += judged.divergences
        diverged += [binding] if judged.left else []
        zero_backward += [binding] if judged.zero_backward else []
        untested += [judged.gap] if judged.gap is not None else []
        if judged.dce and not untested and not crossed:
            divergences += check_dead_calls(binding, dead_sites, judged.compiled, asserted)
    compiled = [binding_runs.compiled for binding_runs in runs if binding_runs.compiled is not None]
    if (compiled and all(run.coverage is not None and run.failure is None for run in compiled)
            and sum(run.coverage.graphs for run in compiled) == 0):
        untested.append(Gap(NO_GRAPH, "Dynamo compiled no graph: the program ran eagerly"))
        divergences = [div for div in divergences if div.kind != MISSED_DCE]
    missing = _hops_missing(asks, compiled)
    if missing:
        untested.append(missing)
    recompiled = tuple(binding for binding, binding_runs in enumerate(runs) if binding > 0
                       and binding_runs.compiled is not None and binding_runs.compiled.coverage is not None
                       and binding_runs.compiled.coverage.graphs > 0)
    return Verdict(OK, divergences, untested=untested, diverged=diverged, recompiled=recompiled,
                   zero_backward=zero_backward)


def _hops_missing(asks: Asks, compiled: list) -> Gap | None:
    """What the program asked to have compiled as a higher-order op and Dynamo's graphs
    do not hold (None: all there, or this torch cannot say)."""
    if not asks.hops or not compiled or any(run.coverage is None or run.coverage.hops is None for run in compiled):
        return None
    if sum(run.coverage.graphs for run in compiled) == 0:
        return None  # no graph at all: said already
    seen = {hop for run in compiled for hop in run.coverage.hops}
    if not (missing := sorted(asks.hops - seen)):
        return None
    return Gap(HOP_INLINED, f"the program asked for {', '.join(missing)}; Dynamo's graphs hold "
               f"{', '.join(sorted(seen)) or 'no higher-order op'} (it inlined the rest)", ",".join(missing))
