"""What autograd allows a program that takes gradients, statement by statement."""

from __future__ import annotations

from fuzzer.program.form_record import NO_BACKWARD, Illegal

#: the forms whose backward keeps their own result, by form and its ``fn``: autograd
#: saves ``tanh``'s, ``relu``'s and ``sigmoid``'s output (``derivatives.yaml``: their
#: formulas read ``result``), so a write of it, even one that marks it dirty, makes
#: backward raise ("modified by an inplace operation")
KEEPS_RESULT: dict[str, frozenset[str]] = {"unary": frozenset({"tanh", "relu", "sigmoid"})}


class GradRules:
    """What autograd allows a program whose inputs require grad, tracked value by value.

    A value *requires grad* when it was computed, outside ``torch.no_grad()``, from
    one that does; inputs do.  The rules keep eager from refusing the program (an
    eager failure makes it invalid, never a finding):

    * a form that has no backward (a mutating or effectful op, a size from data)
      may not read a value that requires grad, unless it returns nothing (``e_log``);
    * no view is made under ``no_grad`` of a value that requires grad: eager gives
      such a view ``requires_grad=True`` and no ``grad_fn`` where ``torch.no_grad``'s
      documentation says its results do not require grad, so what a loss over it
      means is not defined (a compiled program has given its base gradients);
    * a view requires grad when its base does, and so does a result that is its
      operand (a tagged op's);
    * a write goes only to a value that does not require grad, whose storage is not
      an input's (inputs are leaves), and that nothing requiring grad has read (the
      write would change what backward saved); outside ``no_grad`` every operand of
      a write must not require grad either;
    * except that an ``autograd.Function`` that marks its input dirty (``Form.dirty``)
      may write, outside ``no_grad``, a value that requires grad and is neither an
      input nor a view and that nothing requiring grad has read: autograd rebases its
      history onto the Function (``ctx.mark_dirty``); the result of a form that keeps
      it for its own backward (:data:`KEEPS_RESULT`) counts as read;
    * an ``as_strided`` box of a root (``Form.dense_root``) is taken of a value that
      requires grad only where that value is the root itself: of a view, the box may
      read elements outside the view, to which ``as_strided``'s backward gives no
      gradient (``as_strided_backward`` in ``FunctionsManual.cpp`` views its scratch
      storage with the input's geometry and drops them, with a TODO to raise instead),
      so the gradient has no defined meaning.
    """

    def __init__(self) -> None:
        self.requires: dict[str, bool] = {}
        self.read_by_grad: set[str] = set()

    def add_input(self, name: str) -> None:
        self.requires[name] = True

    def _rebased(self, target: str, root: dict[str, str], inputs) -> bool:
        """Whether an ``autograd.Function`` that marks ``target`` dirty may write it
        though it requires grad (``ctx.mark_dirty``: autograd moves its history onto
        the Function): it is no leaf (an input), no view (its base's history would
        move too) and nothing that requires grad has read it (backward would see the
        write)."""
        return root[target] == target and target not in inputs and target not in self.read_by_grad

    def admit(self, stmt, form, root: dict[str, str], inputs) -> None:
        """Raise :class:`form_record.Illegal` if autograd would refuse ``stmt``; else record it."""
        no_grad = stmt.no_grad
        reads_grad = any(self.requires[a] for a in stmt.args)
        if form.is_view and no_grad and reads_grad:
            raise Illegal("a view made under no_grad of a value that requires grad has no documented "
                                "meaning in a loss")
        if form.dense_root and reads_grad and not no_grad and root[stmt.args[0]] != stmt.args[0]:
            raise Illegal(f"an as_strided box of {stmt.args[0]}'s root may reach outside the view {stmt.args[0]}, "
                          "whose gradient as_strided's backward does not define")
        if form.mutates:
            for w in form.mutates:
                target = stmt.args[w]
                if form.dirty and self.requires[target] and not no_grad and self._rebased(target, root, inputs):
                    continue
                if self.requires[target] or root[target] in inputs or root[target] in self.read_by_grad:
                    raise Illegal(f"autograd forbids writing {target}")
            if reads_grad and not no_grad and not form.dirty:
                raise Illegal("a write outside no_grad reads a value that requires grad")
        if form.grad == NO_BACKWARD and reads_grad and not no_grad and form.returns:
            raise Illegal(f"{form.name} has no backward")
        result = reads_grad and not no_grad and form.grad != NO_BACKWARD
        if form.aliases_operand:
            result = self.requires[stmt.args[0]]
        if result:
            self.read_by_grad |= {root[a] for a in stmt.args}
            if stmt.out is not None and stmt.attrs.get("fn") in KEEPS_RESULT.get(form.name, ()):
                self.read_by_grad.add(stmt.out)
        if stmt.out is not None:
            self.requires[stmt.out] = result
