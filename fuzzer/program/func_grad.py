"""What autograd allows a program whose gradients ``torch.func.grad`` takes
(``Mode.func_grad``, feature ``func-grad``), beside :class:`GradRules`' rules.

``torch.func.grad`` runs the program under functorch's grad transform, which refuses
more than ``backward()`` does and allows what the generator's :class:`GradRules` keep
out of every other program (so those programs stay as they were drawn):

* no form of a feature the transform cannot run (:data:`REFUSED`: those of
  ``features.FUNC_GRAD_EXCLUDES`` but a graph break, which runs), under ``no_grad``
  too: an ``autograd.Function`` without ``setup_context`` raises under any functorch
  transform, and torch's higher-order ops have no rule for it;
* no custom op reads, outside ``no_grad``, a value that requires grad:
  ``register_autograd`` makes an ``autograd.Function`` without ``setup_context``
  (pytorch/pytorch#168393), and an op without a formula raises so too;
* an aten write outside ``no_grad`` (``add_``, ``copy_``, ``index_put_``, ...) may
  read a value that requires grad and may write a value that requires grad, as
  autograd allows a write of a storage that is no input (a leaf) and that nothing has
  saved for backward (``GradRules.read_by_grad``; an op that keeps its own result, such
  as ``sigmoid``, saves it, so only a storage that required no grad before, or only by
  such writes, is written): ``y[:, 0] += x[:, 2].abs()`` into a ``zeros_like``, twice
  (pytorch/pytorch#136662).  The written storage and every view of it require grad from
  then on.  An additive write (:data:`ADDITIVE`: its
  backward keeps nothing of what it wrote) leaves its storage writable again; any
  other counts as a read of it for backward, and a write that reads what it overwrites
  through an op that saves it (:data:`SAVES_OWN_READ`) is never of such a storage.  A
  storage viewed under ``no_grad`` is
  never written so (autograd refuses: "A view was created in no_grad mode ..."), nor
  is a transform's result made under ``no_grad`` (a vmap's is a view where ``out_dims``
  moves the batch dim);
* a view made of a storage before a write first made it require grad is a leaf that
  requires grad from then on, with no history of its own, so it is never written after
  (autograd refuses: "a leaf Variable that requires grad is being used in an in-place
  operation", under ``backward()`` alike), nor is a view made of it; read, it is legal.
  A view made after that write is held to the rules above, which count the view itself
  as a read of the storage for backward (conservative: eager would let it be written).
"""

from __future__ import annotations

from fuzzer.program import features
from fuzzer.program.form_record import TRANSFORM, Illegal
from fuzzer.program.grad import GradRules

#: the features whose forms a program under ``torch.func.grad`` never has: those eager
#: cannot run under the transform (a graph break runs, eagerly: not drawn, but legal)
REFUSED = tuple(f for f in features.FUNC_GRAD_EXCLUDES if f != features.GRAPH_BREAK)
#: writes whose backward keeps nothing of the storage they write: a later write of it
#: changes nothing backward reads
ADDITIVE = frozenset({"add_", "sub_", "copy_", "fill_", "zero_", "index_add_", "index_copy_", "index_put_",
                      "masked_fill_"})
#: writes that read what they overwrite through an op whose backward saves it, by form
#: and its ``via`` (``transposed_forms``' ``x.copy_(torch.sin(x.mT).mT)``: ``sin`` saves
#: ``x.mT``, which the write then changes): never of a storage that requires grad
SAVES_OWN_READ: dict[str, frozenset[str]] = {"copy_back_": frozenset({"sin"}), "add_back_": frozenset({"sin"})}


class FuncGradRules(GradRules):
    """:class:`GradRules` for a program under ``torch.func.grad`` (the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        #: storages a view was made of under no_grad
        self.viewed_without_grad: set[str] = set()
        #: storages that require grad only by a write of values that do (``_write``)
        self.written_with_grad: set[str] = set()
        #: views made of a storage before a write made it require grad, and views of those:
        #: leaves that require grad, never written
        self.stale_views: set[str] = set()

    def admit(self, stmt, form, root: dict[str, str], inputs) -> None:
        no_grad = stmt.no_grad
        reads_grad = any(self.requires[a] for a in stmt.args)
        if form.feature in REFUSED:
            raise Illegal(f"torch.func.grad cannot run {form.name} (feature {form.feature}), even under no_grad")
        if form.ops and reads_grad and not no_grad:
            raise Illegal(f"torch.func.grad refuses {form.name}'s custom op on a value that requires grad")
        if form.mutates and not form.ops and not no_grad and not form.dirty:
            self._write(stmt, form, root, inputs, reads_grad)
            return
        super().admit(stmt, form, root, inputs)
        if form.aliases_operand and no_grad:
            self.viewed_without_grad.add(root[stmt.args[0]])
        if form.drawn_as == TRANSFORM and no_grad and stmt.out is not None:
            # a vmap's result is a view of what its rule made where out_dims moves the
            # batch dim (a transform's result counts so, conservatively)
            self.viewed_without_grad.add(stmt.out)
        if form.aliases_operand and stmt.out is not None and stmt.args[0] in self.stale_views:
            self.stale_views.add(stmt.out)

    def _write(self, stmt, form, root: dict[str, str], inputs, reads_grad: bool) -> None:
        """An aten write with grad on: legal where autograd takes it (the module's docstring)."""
        written = {root[stmt.args[w]] for w in form.mutates}
        if any(stmt.args[w] in self.stale_views for w in form.mutates):
            raise Illegal("autograd forbids writing a view made before its base required grad (a leaf)")
        for storage in written:
            computed = storage not in self.written_with_grad and any(
                self.requires[n] for n, r in root.items() if r == storage and n in self.requires)
            if storage in inputs or storage in self.read_by_grad or storage in self.viewed_without_grad or computed:
                # an input is a leaf; what backward saved, an op's own result among it
                # (sigmoid keeps its output), must stay as it was
                raise Illegal(f"autograd forbids writing {storage} here")
        if not (reads_grad or written & self.written_with_grad):
            return  # a write of values that require no grad, as GradRules allow it
        if stmt.attrs.get("via") in SAVES_OWN_READ.get(form.name, ()):
            raise Illegal(f"{form.name} saves for backward what it overwrites, of a storage that requires grad")
        through = {stmt.args[w] for w in form.mutates}
        self.stale_views |= {n for n, r in root.items() if r in written - self.written_with_grad
                             and n != r and n not in through and n in self.requires}
        self.written_with_grad |= written
        self.requires.update({n: True for n, r in root.items() if r in written and n in self.requires})
        self.read_by_grad |= {root[a] for k, a in enumerate(stmt.args) if k not in form.mutates or form.name not in ADDITIVE}


def grad_rules(func_grad: bool) -> GradRules:
    """What autograd allows a program that takes gradients, by ``backward()`` or
    (``func_grad``) by ``torch.func.grad``."""
    return FuncGradRules() if func_grad else GradRules()
