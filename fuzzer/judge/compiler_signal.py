"""The signal: what the compiler did with one program, as a set of short tokens.

Feedback-directed generation (``fuzzer.feedback``) keeps the programs that made the
compiler do something it had not done before; this module says what "something" is.
A token names one behaviour, coarse enough to recur and fine enough to tell programs
apart, in the spirit of a coverage-guided fuzzer's edges and WhiteFox's pattern hits:

* ``dynamo:<op>``: an op (or higher-order op) in a graph Dynamo handed its backend;
* ``pass:<name>``: a graph pass of AOTAutograd or Inductor that changed its graph (each
  runs through ``torch.fx.passes.graph_transform_observer.GraphTransformObserver``),
  and ``pass:<name>:+<op>`` / ``pass:<name>:-<op>`` for the ops it added or removed;
* ``graph:<op>``: an op in a graph as the last pass left it (the post-grad graph that
  Inductor lowers, the forward and backward of a training graph), and
  ``edge:<op>><user>`` for each op that feeds another there, as a coverage-guided
  fuzzer counts edges and not only blocks: which ops meet is what a pass matches on,
  and the op set alone stops telling programs apart within minutes;
* ``metric:<name>:<bucket>``: Inductor's scheduler and codegen counts (kernels, nodes
  before fusion, loop reorderings), bucketed as AFL buckets hit counts;
* ``counter:<group>:<key>:<bucket>``: Dynamo's and Inductor's counters that grew
  (pattern-matcher hits, graph-break reasons, recompiles), without the caches' and the
  frames' bookkeeping, which every program has.

Recording costs a walk of each pass's graph before and after it (tens of nodes) and a
few dict reads; ``benchmarks/throughput.py`` measures it against blind generation.
Nothing here changes what the compiler does: the observer's methods are wrapped, never
replaced in what they return, and record only while a ``Recording`` is open.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator

from fuzzer.limits import FEEDBACK

#: counter groups and keys every compile grows, which tell programs apart by nothing
_DULL_GROUPS = frozenset({"frames", "stats", "resumes", "aot_autograd"})
_DULL_KEYS = ("cache", "bypass")
#: Inductor's ``metrics`` module counts that describe what its scheduler did
METRICS = ("generated_kernel_count", "generated_cpp_vec_kernel_count", "ir_nodes_pre_fusion",
           "cpp_to_dtype_count", "num_loop_reordering", "parallel_reduction_count",
           "num_matches_for_scatter_upon_const_tensor")


def bucket(n: int) -> str:
    """AFL's hit-count buckets: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+."""
    for low in (128, 32, 16, 8, 4, 3, 2, 1):
        if n >= low:
            return str(low)
    return "0"


def _name(node) -> str:
    target = node.target
    return str(target.name() if hasattr(target, "name") and callable(target.name) else
               getattr(target, "__name__", target))


def _targets(graph) -> Counter:
    return Counter(_name(node) for node in graph.nodes if node.op == "call_function")


def _users(node) -> list:
    """The ops that read ``node``, through the ``getitem`` that unpacks a tuple result
    (a higher-order op's, a mutating op's)."""
    out = []
    for user in node.users:
        if user.op != "call_function":
            continue
        out.extend(_users(user) if _name(user) == "getitem" else [user])
    return out


def _edges(graph) -> set[str]:
    """Each op that feeds another op of ``graph``, as ``edge:<op>><user>``."""
    return {f"edge:{_name(node)}>{_name(user)}" for node in graph.nodes
            if node.op == "call_function" and _name(node) != "getitem" for user in _users(node)}


class Recording:
    """The tokens of one program's compiles, while the recorder is open."""

    def __init__(self) -> None:
        self.tokens: set[str] = set()
        #: the tokens, once the recording has ended
        self.signal: frozenset[str] = frozenset()
        #: the op multiset of each graph module as its latest pass left it, and the
        #: module itself (its edges are read once, when the recording ends)
        self.last: dict[int, Counter] = {}
        self.modules: dict[int, object] = {}

    def passed(self, name: str, gm, before: Counter) -> None:
        after = _targets(gm.graph)
        self.last[id(gm)] = after
        self.modules[id(gm)] = gm
        if after == before:
            return
        self.tokens.add(f"pass:{name}")
        for op in set(after) | set(before):
            delta = after[op] - before[op]
            if delta:
                self.tokens.add(f"pass:{name}:{'+' if delta > 0 else '-'}{op}")

    def finish(self, counters_before: dict, metrics_before: dict, graphs_before: int) -> frozenset[str]:
        from fuzzer.judge.graphs import GRAPHS

        for graph in GRAPHS.graphs[graphs_before:]:
            self.tokens.update(f"dynamo:{op}" for op in graph.ops)
        for ops in self.last.values():
            self.tokens.update(f"graph:{op}" for op in ops)
        for gm in self.modules.values():
            self.tokens.update(_edges(gm.graph))
        self.modules.clear()
        for (group, key), n in _counters().items():
            grown = n - counters_before.get((group, key), 0)
            if grown > 0:
                self.tokens.add(f"counter:{group}:{key}:{bucket(grown)}")
        for name, n in _metrics().items():
            grown = n - metrics_before.get(name, 0)
            if grown > 0:
                self.tokens.add(f"metric:{name}:{bucket(grown)}")
        return frozenset(self.tokens)


def _counters() -> dict[tuple[str, str], int]:
    try:
        from torch._dynamo.utils import counters
    except ImportError:  # pragma: no cover - a torch without Dynamo's counters
        return {}
    out = {}
    for group, table in counters.items():
        if group in _DULL_GROUPS:
            continue
        for key, n in table.items():
            key = str(key).splitlines()[0][:FEEDBACK.counter_key_chars] if str(key) else ""
            if any(d in key for d in _DULL_KEYS):
                continue
            out[(group, key)] = out.get((group, key), 0) + int(n)
    return out


def _metrics() -> dict[str, int]:
    try:
        from torch._inductor import metrics
    except ImportError:  # pragma: no cover
        return {}
    return {name: int(getattr(metrics, name)) for name in METRICS if isinstance(getattr(metrics, name, None), int)}


class Recorder:
    """Wraps ``GraphTransformObserver``'s two pass methods once per process; they
    record into the open ``Recording``, if any, and otherwise only call through."""

    def __init__(self) -> None:
        self.installed = False
        self.current: Recording | None = None

    def install(self) -> bool:
        if self.installed:
            return True
        try:
            from torch.fx.passes.graph_transform_observer import GraphTransformObserver
        except ImportError:  # pragma: no cover - a torch without the observer: Dynamo's graphs only
            return False
        recorder = self
        for method in ("apply_gm_pass", "apply_graph_pass"):
            original = getattr(GraphTransformObserver, method, None)
            if original is None:  # pragma: no cover
                continue

            def wrapped(observer, pass_fn, _original=original):
                recording = recorder.current
                if recording is None:
                    return _original(observer, pass_fn)
                before = _targets(observer.gm.graph)
                result = _original(observer, pass_fn)
                recording.passed(observer.passname, observer.gm, before)
                return result

            setattr(GraphTransformObserver, method, wrapped)
        self.installed = True
        return True

    @contextlib.contextmanager
    def recording(self) -> Iterator[Recording]:
        """Record the compiles of the block; the tokens are ``recording.signal``
        once it ends."""
        from fuzzer.judge.graphs import GRAPHS

        self.install()
        GRAPHS.install()
        recording = Recording()
        counters, metrics, graphs = _counters(), _metrics(), len(GRAPHS.graphs)
        outer, self.current = self.current, recording
        try:
            yield recording
        finally:
            self.current = outer
            recording.signal = recording.finish(counters, metrics, graphs)


RECORDER = Recorder()
