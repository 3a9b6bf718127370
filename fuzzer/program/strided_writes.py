"""Which writes through an ``as_strided`` functionalization takes in compile, as the
generator and the IR check statements in order (``LateStrided``), apart from the rest of
what they keep of storage (``fuzzer.program.storage``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LateStrided:
    """The rule of aten writes through an ``as_strided`` taken of a view.

    Functionalization replays a write through a view by the view's chain of views from
    its storage's base, and refuses a chain with an ``as_strided`` after its first view:
    "as_strided() is non-compositional, and therefore is not possible to functionalize
    properly today, so this behavior is banned in compile" (``FunctionalStorageImpl::
    add_update``, pytorch#104505).  A custom op's write is functionalized through its
    base (``auto_functionalized_v2``: the base and the view's sizes, strides and
    offset), not through the chain, and is not refused.  So an ``as_strided``
    (``Form.dense_root``) of a value that is a view (its root is another value: a
    view, a window or an alias of an input) makes its result, and every value that is
    that result or a view of it, one that no aten form writes; reading it, and writing
    what it reads through other views, stay legal.

    One view is a view to the caller only: an input that is a window or an alias of
    another input's storage (``Mode.windows``, ``Mode.aliases``).  Dynamo lifts an input
    into the graph only where the program reads it, and AOTAutograd makes aliased
    graph inputs views of one synthetic base only where two of them are inputs of the
    graph; so where no other input of its storage is read, anywhere in the program,
    the window is a graph input of its own, its storage larger than itself (a slice of
    a buffer the caller keeps: a cache, a workspace), and an ``as_strided`` of it is
    the first view of its chain, which functionalization takes.  Such an
    ``as_strided`` (and the views of it, but an ``as_strided`` of one of those, which is
    a view's) may be written by aten (``lone``, by the
    input it is taken of) as long as no other input of the storage has been read; once
    one is written, those inputs are read no more (``unreadable``).  Whether compiled
    code then writes where eager writes is the contract's to judge."""

    values: set = field(default_factory=set)
    #: the ``as_strided`` results of an input that is a window or an alias (and the views
    #: of them), each with that input: written by aten only while the storage's other
    #: inputs are unread
    lone: dict = field(default_factory=dict)
    #: the inputs read so far, and those no statement may read any more
    read: set = field(default_factory=set)
    unreadable: set = field(default_factory=set)

    def copy(self) -> LateStrided:
        return LateStrided(set(self.values), dict(self.lone), set(self.read), set(self.unreadable))

    @staticmethod
    def _others(name: str, root: dict[str, str], inputs) -> set:
        """The other inputs of input ``name``'s storage: its base, the base's other windows and aliases."""
        return {i for i in inputs if i != name and root[i] == root[name]}

    def record(self, stmt, form, root: dict[str, str], inputs) -> None:
        self.read.update(a for a in stmt.args if a in inputs)
        if not form.is_custom:
            for w in form.mutates:
                if (target := self.lone.get(stmt.args[w])) is not None:
                    self.unreadable |= self._others(target, root, inputs)
        if stmt.out is None or not stmt.args or not form.aliases_operand:
            return
        first = stmt.args[0]
        if first in self.lone and not form.dense_root:  # a view of it; an as_strided of it is one of a view
            self.lone[stmt.out] = self.lone[first]
        elif form.dense_root and first in inputs and root[first] != first:
            self.lone[stmt.out] = first
        elif first in self.values or (form.dense_root and root[first] != first):
            self.values.add(stmt.out)

    def refused(self, stmt, form, root: dict[str, str], inputs) -> str | None:
        """Why ``stmt`` breaks the rule, or None: it reads an input no statement may read
        any more, or writes, not by a custom op, through such a chain (an ``as_strided``
        of a window or alias input, while another input of its storage was read)."""
        for a in stmt.args:
            if a in self.unreadable:
                return (f"reads input {a}, of the storage of a window written by aten through its as_strided: "
                        "read, it would make that window a view of a synthetic base, whose as_strided "
                        "functionalization refuses to write in compile")
        if form.is_custom:
            return None
        for w in form.mutates:
            a = stmt.args[w]
            if a in self.values:
                return (f"written operand {a} is an as_strided of a view (or a view of one), which "
                        "functionalization refuses to write in compile (as_strided is non-compositional)")
            target = self.lone.get(a)
            if target is not None and (seen := self._others(target, root, inputs) & self.read):
                return (f"written operand {a} is an as_strided of window {target}, whose storage's input "
                        f"{sorted(seen)[0]} was read: a view of a synthetic base in the graph, which "
                        "functionalization refuses to write in compile (as_strided is non-compositional)")
        return None
