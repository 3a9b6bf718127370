"""Which values the compiler computes, so which tensors of a fixed dtype can be judged
exactly.

A program computes in one floating dtype (``Mode.dtype``), and the contract lets a
compiled float differ from eager by what rounding allows.  A tensor of a *fixed*
dtype (an integer, bool or float8 tensor: a quantiser's codes, a packed weight) has no
such room: one float rounded the other way upstream flips a code, and a flipped code
is no bug.  So such a tensor is compared exactly (``docs/contract.md``), and the IR
makes that sound: it is made only from *exact* values, those whose contents the
compiled program and eager share bit for bit:

* an input is exact until something the compiler computes is written into it;
* the result of an opaque custom op (one the compiled program calls: the compiler
  sees the call and never what it computes) is exact when all its operands are, and
  so is what it writes;
* a view is as exact as its base, and so is a result that is its operand (a tagged
  in-place or out= op's);
* what an aten form computes is not exact, nor is a tensor an aten form writes into,
  unless the form has nothing to round (``Form.exact_result``, the ``int-tensors``
  feature's: a comparison, ``argmax``, a stable ``argsort``, a count, ``.to`` an integer
  dtype, integer and bool arithmetic, an index taken): its result is then as exact as
  its operands, whatever their dtypes.  A float the compiler computed never reaches
  one: an integer made from it (an ``argmax`` of a sum, a mask of a product) could
  flip with its rounding, so it is not made at all;
  nor is what an op computes that the compiler traces through, decomposes or lowers
  (``fuzzer.user.compiled``: it has a kernel of its own, but the compiled program
  does not run it), nor what a form computes around its call (``cond_sin``: the
  predicate and the false branch are the compiler's).

A statement that makes or writes a fixed-dtype tensor from a value that is not exact,
or whose fixed-dtype result the compiler itself computes (an op that is not opaque),
is illegal; so is one of a form that rounds its operands to a lower precision or
truncates their bits (``Form.exact_operands``: a custom op's autocast rule,
``dtype_reads``' ``trim_bits``) on a value that is not exact.
Such a form's casts are conversions rounded to nearest even, eager's and compiled
code's alike, so what it makes from exact values is exact.
"""

from __future__ import annotations

from fuzzer.program.dtypes import is_exact
from fuzzer.program.form_record import Form, Illegal


class ExactRules:
    """Exactness, tracked value by value and storage by storage in program order."""

    def __init__(self) -> None:
        self.inexact: set[str] = set()
        self.inexact_roots: set[str] = set()

    def is_exact(self, value: str, root: dict[str, str]) -> bool:
        return value not in self.inexact and root[value] not in self.inexact_roots

    def admit(self, stmt, form: Form, root: dict[str, str], fixed: set[str]) -> None:
        """Check ``stmt`` (its operands of a fixed dtype are ``fixed``) and record what it
        makes; raises ``form_record.Illegal``."""
        self.check(stmt, form, root, fixed)
        self.record(stmt, form, root)

    def check(self, stmt, form: Form, root: dict[str, str], fixed: set[str]) -> None:
        """Raise ``form_record.Illegal`` where ``stmt`` would make an integer or float8 tensor
        inexactly (``fixed``: its operands of such a dtype)."""
        exact = all(self.is_exact(a, root) for a in stmt.args)
        if form.exact_operands and not exact:
            raise Illegal(f"{form.name} rounds or truncates its operands: a value the compiler computes "
                          "may round the other way, so it reads exact values only")
        makes_fixed = is_exact(form.dtype_of_result(stmt.attrs)) and stmt.out is not None
        writes_fixed = any(stmt.args[w] in fixed for w in form.mutates)
        if makes_fixed or writes_fixed:
            if not exact:
                raise Illegal(f"{form.name} makes a tensor of a fixed dtype from a value the compiler "
                                    "computes: its exact comparison would catch rounding, not bugs")
            if not form.opaque or (not form.is_custom and not form.exact_result):
                raise Illegal(f"{form.name} is not opaque: the compiler computes its fixed-dtype result")

    def record(self, stmt, form: Form, root: dict[str, str]) -> None:
        """What ``stmt`` leaves inexact: its result, the storage it writes."""
        exact = all(self.is_exact(a, root) for a in stmt.args)
        computes = not (form.is_custom and form.opaque) and not form.exact_result
        if stmt.out is not None and (not exact or (computes and not form.aliases_operand)):
            self.inexact.add(stmt.out)  # a view computes nothing: it is as exact as its operand
        for w in form.mutates:
            if computes or not exact:
                self.inexact_roots.add(root[stmt.args[w]])
