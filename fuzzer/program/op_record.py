"""One custom op of dcefuzz's library, as a record: its name, what it declares (pure,
mutating, effectful) and its defining source, with the header every snippet shares.
The first library's ops are ``fuzzer.program.op_snippets``, each family's its module
of ``fuzzer.program.families``; the whole library, registered and carried, is
``fuzzer.program.custom_ops``."""

from __future__ import annotations

import re
from dataclasses import dataclass

NAMESPACE = "dcefuzz"

PURE = "pure"
MUTATING = "mutating"
EFFECTFUL = "effectful"
#: what an op's author declares it does, which is all the compiler may rely on
DECLARATIONS = (PURE, MUTATING, EFFECTFUL)

#: Shared by every snippet: the run-time trace and effect registration that works
#: across torch releases (``CustomOpDef.register_effect`` appeared after the private
#: ``_register_effectful_op``; feature-detect rather than pin a release).
HEADER = '''\
from typing import Optional

import torch

TRACE = {"calls": [], "effects": []}


def _hit(op, site, *tensors, effect=False):
    """Record that call site `site` of `op` ran; effects keep a copy of their inputs."""
    TRACE["calls"].append((op, site))
    if effect:
        TRACE["effects"].append((op, site, tuple(t.detach().to("cpu", copy=True) for t in tensors)))


def _register_ordered(opdef):
    """Mark a custom op as an ORDERED side effect on any torch from 2.11 on."""
    if hasattr(opdef, "register_effect"):
        from torch._library.effects import EffectType
        opdef.register_effect(EffectType.ORDERED)
    else:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _register_effectful_op(opdef._opoverload, _EffectType.ORDERED)
'''


@dataclass(frozen=True)
class CustomOp:
    """One registered operator: its name, what it declares (pure, mutating or
    effectful) and its defining source."""

    name: str
    declaration: str
    source: str
    doc: str
    #: the feature (``fuzzer.program.features``) whose programs call it: an op of a
    #: feature this torch cannot run is not registered (None: every torch has it)
    feature: str | None = None

    @property
    def qualname(self) -> str:
        return f"{NAMESPACE}::{self.name}"

    #: the library's ops its kernel calls (``fuzzer.program.families.calls``): a script
    #: that registers the op registers them too
    calls: tuple[str, ...] = ()
    #: library text its snippet needs before it (the opaque classes its signature names,
    #: ``fuzzer.program.objects.SOURCE``): a library or script holds each such text once,
    #: after the header and before every snippet
    preamble: str = ""
    #: its backward's registration (``register_autograd``, and the op it calls), kept
    #: apart from its snippet: a library registers it, a brief shows it only for a program
    #: that takes gradients (``fuzzer.program.custom_ops.with_backward``)
    backward: str = ""

    @property
    def by_schema(self) -> bool:
        """Whether it is defined by a hand-written schema (``define`` and ``impl``), not
        ``custom_op``: it declares its writes with the schema's ``(a!)``, not ``mutates_args``."""
        return f'custom_op("{NAMESPACE}::{self.name}"' not in self.source

    @property
    def writes_unknown(self) -> bool:
        """Whether it declares ``mutates_args="unknown"``: that it may write any argument."""
        return 'mutates_args="unknown"' in self.source

    @property
    def returns(self) -> bool:
        """Whether the op returns a tensor (read off its declared signature: the
        ``custom_op`` function's annotation, or a hand-written schema's returns)."""
        if f"def {self.name}(" in self.source:
            header = self.source.split(f"def {self.name}(", 1)[1].split(":\n", 1)[0]
            return not header.rstrip().endswith("-> None")
        schema = re.search(r'define\([^\n]*\) -> ([^"]*)"', self.source)
        if schema is None:
            raise ValueError(f"op {self.name}: no signature to read its results from")
        return schema.group(1).strip() != "()"


def op_maker(feature: str | None = None, **more):
    """A family module's ``_op``: an op of ``feature`` (and ``more`` of ``CustomOp``'s
    fields) from its snippet as the module writes it, a triple-quoted string whose
    leading and trailing blank lines are dropped; ``backward``, written the same way, is
    its backward's registration, kept apart (``CustomOp.backward``)."""
    def make(name: str, declaration: str, doc: str, source: str, backward: str = "") -> CustomOp:
        return CustomOp(name=name, declaration=declaration, source=source.strip("\n") + "\n", doc=doc,
                        feature=feature, backward=backward.strip("\n") + "\n" if backward else "", **more)
    return make
