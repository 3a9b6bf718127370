"""Hints for a library you do not own: a TOML (or JSON) file beside it, not in it.

``--ops hints.toml`` (on ``run``, ``gen``, ``shrink`` and ``check-ops``) names the
library's module in the file and gives, per op, what its module would say of itself
(``DCEFUZZ_SIGNATURES``, ``DCEFUZZ_SCALARS``) and what it cannot:

    library = "bitsandbytes"                 # the module to import (or a .py file or
                                             # folder, relative to the hints file)
    include = ["bitsandbytes::*"]            # the ops to fuzz, by name or glob
    exclude = ["bitsandbytes::*_cuda"]       # and those not to

    [ops."bitsandbytes::quantize_4bit"]
    signature = "(n,m)->(n,m)"               # the gufunc signature
    dtypes = { A = "uint8" }                 # a tensor argument's fixed dtype, in every
                                             # run (the float64 reference's too)
    [ops."bitsandbytes::quantize_4bit".scalars]
    blocksize = [64, 128]                    # values, per scalar argument
    block = [[1, "n"]]                       # a List[int] in the signature's letters

A glob is ``fnmatch``'s.  Without ``include`` every op of the library's namespaces is
a candidate.  Programs record the hints file beside the module (``Program.imports``),
so every process that reads a program applies the same hints.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

#: file suffixes read as hints rather than as a module
SUFFIXES = (".toml", ".json")


class HintsError(ValueError):
    """A hints file that does not read."""


@dataclass(frozen=True)
class OpHints:
    signature: str | None = None
    scalars: dict = field(default_factory=dict)
    dtypes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Hints:
    path: str
    library: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    ops: dict = field(default_factory=dict)

    def wants(self, qualname: str) -> bool:
        """Whether ``qualname`` is one of the ops to fuzz (``include`` minus ``exclude``)."""
        base = qualname.split(".")[0]
        included = not self.include or any(fnmatch.fnmatchcase(n, g) for g in self.include for n in (qualname, base))
        return included and not any(fnmatch.fnmatchcase(n, g) for g in self.exclude for n in (qualname, base))

    def of(self, qualname: str) -> OpHints:
        return self.ops.get(qualname) or self.ops.get(qualname.split(".")[0]) or OpHints()


def is_hints(spec: str) -> bool:
    return Path(spec).suffix in SUFFIXES


def load(path: str | Path) -> Hints:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise HintsError(f"{path}: cannot read it: {exc}") from exc
    try:
        data = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise HintsError(f"{path}: {exc}") from exc
    if not isinstance(data.get("library"), str) or not data["library"]:
        raise HintsError(f'{path}: names the module to import as library = "..."')
    unknown = set(data) - {"library", "include", "exclude", "ops"}
    if unknown:
        raise HintsError(f"{path}: unknown keys {sorted(unknown)} (library, include, exclude, ops)")
    ops = {}
    for name, raw in (data.get("ops") or {}).items():
        if "::" not in name or not isinstance(raw, dict):
            raise HintsError(f"{path}: ops are tables named by qualified name (\"ns::op\"), not {name!r}")
        bad = set(raw) - {"signature", "scalars", "dtypes"}
        if bad:
            raise HintsError(f"{path}: {name}: unknown keys {sorted(bad)} (signature, scalars, dtypes)")
        scalars = raw.get("scalars") or {}
        if any(not isinstance(v, list) or not v for v in scalars.values()):
            raise HintsError(f"{path}: {name}: each scalar takes a non-empty list of values")
        ops[name] = OpHints(raw.get("signature"), {k: tuple(v) for k, v in scalars.items()},
                            dict(raw.get("dtypes") or {}))
    return Hints(str(path), data["library"], tuple(data.get("include") or ()), tuple(data.get("exclude") or ()),
                 ops)
