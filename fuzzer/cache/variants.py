"""Declaration variants: what an op's author changes between two runs of a program.

A cache pair (``fuzzer.cache.pair``) compiles one program twice, in two processes
sharing one on-disk cache: first with the *old* declaration of one op, then with
the *new* one.  A variant is that edit, kept as the two snippets of the op's
source (``fuzzer.program.custom_ops`` keeps every op as text), so an entry and its
repro carry exactly the code each side registered.

The old side may be dishonest: an author fixing a wrong ``mutates_args`` or a wrong
fake impl is the case that matters.  The new side is always honest, because it is
the one judged.  The kinds:

* ``mutates-fixed``     old ``mutates_args=()``, new the true one;
* ``mutates-narrowed``  old declares every tensor argument written, new the true one;
* ``mutates-widened``   old the true one, new every tensor argument (over-declaring
  a write is allowed);
* ``effect-added``      old registers no effect, new an ORDERED one;
* ``effect-removed``    old ORDERED, new a pure op that logs nothing;
* ``fake-changed``      old fake impl wrong in one ``aspect`` (shape, dtype or
  stride), new the true one;
* ``backward-changed``  old ``register_autograd`` formula scaled, new the true one;
  the program's gradients are part of what is judged;
* ``eager-changed``     old the op's body, new a body that computes other values: the
  op runs at run time in compiled code, so a cache must not matter here, and any
  difference is another bug;
* ``config-changed``    no op changes; a setting differs (``CONFIG_CHANGES``): the old
  side runs a user's custom post-grad pass that wrongly deletes every unused call,
  writes to inputs included, the new side runs none; or the old side donates the
  saved activations to the backward (``donated_buffer``, the default) and the new side
  turns that off, as a user does to take the gradients twice, and takes them twice.
  A config value the key ignored would serve the old code.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from fuzzer.judge.trial import VariantKind, VariantRecord
from fuzzer.program import forms
from fuzzer.program.custom_ops import (
    BACKWARD,
    BY_NAME,
    EFFECTFUL,
    MUTATING,
    PURE,
    backward_source,
    source_for,
)
from fuzzer.program.ir import Program

MUTATES_FIXED = "mutates-fixed"
MUTATES_NARROWED = "mutates-narrowed"
MUTATES_WIDENED = "mutates-widened"
EFFECT_ADDED = "effect-added"
EFFECT_REMOVED = "effect-removed"
FAKE_CHANGED = "fake-changed"
BACKWARD_CHANGED = "backward-changed"
EAGER_CHANGED = "eager-changed"
CONFIG_CHANGED = "config-changed"
KINDS = (MUTATES_FIXED, MUTATES_NARROWED, MUTATES_WIDENED, EFFECT_ADDED, EFFECT_REMOVED,
         FAKE_CHANGED, BACKWARD_CHANGED, EAGER_CHANGED, CONFIG_CHANGED)

#: what the author did, in the words of an issue title
CHANGE_WORDS = {
    MUTATES_FIXED: "its mutates_args is corrected",
    MUTATES_NARROWED: "its mutates_args is narrowed",
    MUTATES_WIDENED: "its mutates_args is widened",
    EFFECT_ADDED: "an ORDERED effect is registered for it",
    EFFECT_REMOVED: "its effect is removed",
    FAKE_CHANGED: "its fake impl is fixed",
    BACKWARD_CHANGED: "its backward formula is fixed",
    EAGER_CHANGED: "its implementation changes",
    CONFIG_CHANGED: "a custom pass is removed from Inductor's config",
    f"{CONFIG_CHANGED}:donated_buffer": "donated buffers are turned off to take the gradients twice",
}

#: how often each kind is drawn, relative to the others that apply: the kinds whose
#: change the compiled code depends on most, more; the two whose change a correct
#: key sees or need not see (a config value, an op's body), as controls, less
KIND_WEIGHTS = {MUTATES_FIXED: 3, MUTATES_NARROWED: 1, MUTATES_WIDENED: 1, EFFECT_ADDED: 2, EFFECT_REMOVED: 1,
                FAKE_CHANGED: 2, BACKWARD_CHANGED: 3, EAGER_CHANGED: 1, CONFIG_CHANGED: 1}

#: how an old fake impl lies about its output
FAKE_ASPECTS = ("shape", "dtype", "stride")
_FAKE_SKEW = {
    "shape": "(lambda t: t.new_empty((t.shape[0] + 1,) + tuple(t.shape[1:]) if t.dim() else (1,)))({})",
    "dtype": "({}).to(torch.float64)",
    "stride": "(lambda t: t.transpose(0, -1).contiguous().transpose(0, -1) if t.dim() >= 2 else t)({})",
}
#: the factor an old backward formula is off by
OLD_GRAD_SCALE = 2.0
#: what a changed body multiplies its result (or its write) by
EAGER_SCALE = 1.25

@dataclass(frozen=True)
class Variant:
    """One edit of the declarations between the old and the new side of a pair."""

    kind: VariantKind
    #: the op whose declaration changes ("" for a config change)
    op: str
    #: what changed, in words ("m_addto: mutates_args () -> ('a',)")
    detail: str
    #: the op's snippet on each side
    old: str = ""
    new: str = ""
    #: the program's gradients are computed and judged (every pure op gets a backward)
    grad: bool = False
    #: Inductor or functorch settings ("module.attr" -> value) on each side
    config_old: dict = field(default_factory=dict, hash=False)
    config_new: dict = field(default_factory=dict, hash=False)
    #: the new side takes the gradients twice, retaining the graph the first time (what
    #: a setting it turns off, such as donated buffers, forbids)
    twice: bool = False

    @property
    def label(self) -> str:
        """The kind, with the fake impl's aspect, or the setting the new side sets: part
        of a stale-cache bug class."""
        if self.kind == FAKE_CHANGED:
            return f"{self.kind}:{self.detail.rsplit(' ', 1)[-1]}"
        if self.kind == CONFIG_CHANGED and self.config_new:
            return f"{self.kind}:{next(iter(self.config_new)).rsplit('.', 1)[-1]}"
        return self.kind

    def library(self, names, side: str) -> str:
        """The op library the ``side`` ("old" or "new") registers for a program calling ``names``."""
        snippet = self.old if side == "old" else self.new
        replaced = {self.op: snippet} if self.op else {}
        return source_for(names, replaced, backward=self.grad)

    def to_json(self) -> VariantRecord:
        return {"kind": self.kind, "op": self.op, "detail": self.detail, "old": self.old, "new": self.new,
                "grad": self.grad, "config_old": dict(self.config_old), "config_new": dict(self.config_new),
                **({"twice": True} if self.twice else {})}

    @classmethod
    def from_json(cls, data: VariantRecord) -> Variant:
        return cls(kind=data["kind"], op=data.get("op", ""), detail=data.get("detail", ""),
                   old=data.get("old", ""), new=data.get("new", ""), grad=bool(data.get("grad", False)),
                   config_old=dict(data.get("config_old") or {}), config_new=dict(data.get("config_new") or {}),
                   twice=bool(data.get("twice", False)))


# ----------------------------------------------------------------- snippet edits

_MUTATES = re.compile(r"mutates_args=\(([^)]*)\)")


def _tensor_args(source: str, name: str) -> list[str]:
    header = source.split(f"def {name}(", 1)[1].split(")", 1)[0]
    return re.findall(r"(\w+): torch\.Tensor", header)


def _declared(source: str) -> list[str]:
    return re.findall(r'"(\w+)"', _MUTATES.search(source).group(1))


def _with_mutates(source: str, names: list[str]) -> str:
    text = "(" + "".join(f'"{n}", ' for n in names).rstrip(" ")
    text = text.rstrip(",") + ("," if len(names) == 1 else "") + ")" if names else "()"
    return _MUTATES.sub(f"mutates_args={text}", source, count=1)


def _real_and_fake(source: str, name: str) -> tuple[str, str]:
    cut = source.index(f"@{name}.register_fake")
    return source[:cut], source[cut:]


def _registration(name: str) -> str:
    return f"\n\n_register_ordered({name})\n"


def _hit_line(real: str) -> str:
    return re.search(r"^    _hit\(.*\)$", real, re.MULTILINE).group(0)


def _edit_fake(source: str, name: str, aspect: str) -> str:
    real, fake = _real_and_fake(source, name)
    line = re.search(r"^    return (.+)$", fake, re.MULTILINE)
    return real + fake.replace(line.group(0), "    return " + _FAKE_SKEW[aspect].format(line.group(1)), 1)


def _edit_body(source: str, name: str) -> str:
    """The op with a body that computes other values, its declaration unchanged."""
    real, fake = _real_and_fake(source, name)
    ret = re.search(r"^    return (.+)$", real, re.MULTILINE)
    hit = _hit_line(real)
    if ret:
        real = real.replace(ret.group(0), f"    return ({ret.group(1)} * {EAGER_SCALE}).contiguous()", 1)
    elif "effect=True" in hit:
        arg = _tensor_args(source, name)[0]
        real = real.replace(hit, hit.replace(f", {arg},", f", {arg} * {EAGER_SCALE},"), 1)
    else:
        real = real.replace(hit, hit + f"\n    {_declared(source)[0]}.mul_({EAGER_SCALE})", 1)
    return real + fake


def _add_effect(source: str, name: str) -> str:
    real, fake = _real_and_fake(source, name)
    hit = _hit_line(real)
    arg = _tensor_args(source, name)[0]
    real = real.replace(hit, hit[:-1] + f", {arg}, effect=True)", 1)
    return (real + fake).rstrip("\n") + "\n" + _registration(name)


def _remove_effect(source: str, name: str) -> str:
    real, fake = _real_and_fake(source, name)
    hit = _hit_line(real)
    real = real.replace(hit, f'    _hit("{name}", site)', 1)
    return (real + fake).replace(_registration(name), "\n").rstrip("\n") + "\n"


# ----------------------------------------------------------------- drawing

#: the ops a declaration variant can edit: those of programs without features, the
#: only programs cache pairs draw (a feature's ops have signatures these edits do not read)
VARIED = tuple(name for name in BY_NAME if forms.form(name).feature is None)


def _options(name: str, grad_ok: bool) -> list[tuple[str, str, str, str]]:
    """(kind, detail, old, new) of every variant of op ``name``."""
    if name not in VARIED:
        return []
    op = BY_NAME[name]
    src = op.source
    out = []
    if op.declaration == MUTATING:
        declared, tensors = _declared(src), _tensor_args(src, name)
        out.append((MUTATES_FIXED, f"mutates_args () -> {tuple(declared)}", _with_mutates(src, []), src))
        if set(tensors) - set(declared):
            every = _with_mutates(src, tensors)
            out.append((MUTATES_NARROWED, f"mutates_args {tuple(tensors)} -> {tuple(declared)}", every, src))
            out.append((MUTATES_WIDENED, f"mutates_args {tuple(declared)} -> {tuple(tensors)}", src, every))
    if op.declaration == EFFECTFUL:
        bare = src.replace(_registration(name), "\n").rstrip("\n") + "\n"
        out.append((EFFECT_ADDED, "ORDERED effect registered", bare, src))
        out.append((EFFECT_REMOVED, "ORDERED effect removed (the op no longer logs)", src,
                    _remove_effect(src, name)))
    if op.declaration == PURE:
        out.append((EFFECT_ADDED, "ORDERED effect registered (the op now logs its input)", src,
                    _add_effect(src, name)))
        if grad_ok and name in BACKWARD:
            out.append((BACKWARD_CHANGED, f"backward formula scaled by {OLD_GRAD_SCALE} -> the true one",
                        src + "\n\n" + backward_source(name, OLD_GRAD_SCALE),
                        src + "\n\n" + backward_source(name)))
    if op.returns:
        for aspect in FAKE_ASPECTS:
            out.append((FAKE_CHANGED, f"fake impl wrong -> right in {aspect}", _edit_fake(src, name, aspect), src))
    out.append((EAGER_CHANGED, f"body scaled by {EAGER_SCALE}", src, _edit_body(src, name)))
    return out


def grad_applicable(program: Program) -> bool:
    """Gradients can be taken: no statement writes in place (program inputs are leaves
    that require grad, and none of the mutating ops has a backward)."""
    return not any(forms.form(s.form).mutates for s in program.body)


@dataclass(frozen=True)
class ConfigChange:
    """A setting that differs between the sides of a ``config-changed`` pair."""

    #: "module.attr"
    setting: str
    #: what it is on the old side; on the new side (absent: its default)
    old: object
    new: object = None
    detail: str = ""
    #: the change only shows through the backward: the program's gradients are judged,
    #: the new side takes them twice (``Variant.twice``)
    backward: bool = False
    #: what else the setting needs to exist on this torch
    needs: str = ""

    def settings(self) -> tuple[dict, dict]:
        """(old side's settings, new side's)."""
        return {self.setting: self.old}, ({} if self.new is None else {self.setting: self.new})


#: the config variants
CONFIG_CHANGES = (
    ConfigChange("torch._inductor.config.post_grad_custom_post_pass", {"custom_pass": "naive-dce"},
                 detail="a custom post-grad pass that deletes every call whose result is unused, in-place "
                        "writes too -> none",
                 needs="torch._inductor.custom_graph_pass"),
    # the default donates saved activations the backward may overwrite; a user who takes
    # the gradients twice must turn it off, and the backward compiled then must not
    ConfigChange("torch._functorch.config.donated_buffer", True, False,
                 detail="on -> off, the gradients taken twice (retain_graph=True)", backward=True),
)


def config_options(grad_ok: bool = False) -> list[ConfigChange]:
    """The config variants this torch has (those through the backward where the
    program's gradients can be taken)."""
    import importlib
    out = []
    for change in CONFIG_CHANGES:
        module, attr = change.setting.rsplit(".", 1)
        try:
            present = hasattr(importlib.import_module(module), attr)
            if change.needs:
                importlib.import_module(change.needs)
        except ImportError:
            present = False
        if present and (grad_ok or not change.backward):
            out.append(change)
    return out


def variants_of(program: Program) -> list[Variant]:
    """Every variant that applies to ``program`` (the ops it calls, the switches here)."""
    grad_ok = grad_applicable(program)
    out = []
    for name in program.custom_ops():
        for kind, detail, old, new in _options(name, grad_ok):
            out.append(Variant(kind, name, f"{name}: {detail}", old, new, grad=kind == BACKWARD_CHANGED))
    for change in config_options(grad_ok):
        old, new = change.settings()
        out.append(Variant(CONFIG_CHANGED, "", f"{change.setting.rsplit('.', 1)[-1]}: {change.detail}",
                           grad=change.backward, config_old=old, config_new=new, twice=change.backward))
    return out


def _group(v: Variant) -> str:
    """What a variant is drawn as: its kind, or for a setting, the setting (two
    settings are two keys a cache may miss, each its own share)."""
    return v.label if v.kind == CONFIG_CHANGED else v.kind


def draw(program: Program, rng: random.Random) -> Variant | None:
    """A variant of ``program``: a kind first (each setting of ``config-changed`` on its
    own), by ``KIND_WEIGHTS`` among those that apply (so that each gets its share
    whatever the ops), then one of its variants; None when none applies."""
    every = variants_of(program)
    groups = sorted({_group(v) for v in every}, key=lambda g: (KINDS.index(g.partition(":")[0]), g))
    if not groups:
        return None
    group = rng.choices(groups, weights=[KIND_WEIGHTS[g.partition(":")[0]] for g in groups])[0]
    return rng.choice([v for v in every if _group(v) == group])

