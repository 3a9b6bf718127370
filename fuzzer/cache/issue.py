"""What an issue of a stale-cache bug says: a cache, a declaration that changed, two
processes, where a plain trial's issue speaks of one compile against eager
(``fuzzer.render.report``, which asks a trial kind for these words)."""

from __future__ import annotations

import dataclasses

from fuzzer.cache import variants
from fuzzer.render import makeup
from fuzzer.render.report import Issue, Stance, says

#: the area tag of a stale-cache issue, and the cache's name, by the blamed cache
CACHE_AREA = {"aot_autograd_cache": ("aotdispatch", "AOTAutograd cache"),
              "fx_graph_cache": ("inductor", "FX graph cache")}


#: what maintainers have said of a cache that serves code compiled for an op's old
#: declaration (read in both threads, 2026-12-04); a setting's key is another matter,
#: so an issue of a changed setting does not say it
EDITED_OP = Stance(
    "PyTorch maintainers have said that editing a custom op need not invalidate the compile "
    "caches. In pytorch/pytorch#144344 (a custom op's backward edited, the old compiled backward "
    "still served) a maintainer answered that this might be expected: changes to builtin operators "
    "do not invalidate the FX graph cache, and custom ops are designed to behave like builtin ones; "
    "the way out given there is `TORCHINDUCTOR_FX_GRAPH_CACHE=0`. pytorch/pytorch#187830, which "
    "put custom op schemas into the FX graph cache key, was closed without a merge after a maintainer "
    "said it would probably not be taken soon, its issue not being marked actionable. This report may "
    "therefore be judged expected behaviour; it shows what the edit costs with the caches on.",
    ("pytorch/pytorch#144344", "pytorch/pytorch#187830"))


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _labels(bug) -> list[str]:
    return list(bug.family.symptoms)


def _change(bug) -> str:
    """The bug's change of declaration or setting, in words (its label is in the
    family: the whole label's words, else its kind's)."""
    words = variants.CHANGE_WORDS
    keys = (key for label in _labels(bug) for key in (label, label.partition(":")[0]))
    return next((words[key] for key in keys if key in words), "it changes")


def _of_config(bug) -> bool:
    return any(w.partition(":")[0] == variants.CONFIG_CHANGED for w in _labels(bug))


def _judged(entry, variant) -> str:
    """What of the new side's runs the script judges, as far as its pair has it: an
    effect log where either declaration registers an effect, gradients where the pair
    takes them."""
    made = makeup.Makeup.of(entry.case.program)
    if variant.kind in (variants.EFFECT_ADDED, variants.EFFECT_REMOVED) and not made.effectful:
        made = dataclasses.replace(made, effectful=(variant.op,))
    return makeup.judged(dataclasses.replace(made, grad=made.grad or variant.grad))


def title(bug) -> str:
    """``[area] the cache serves code compiled for a custom op's old declaration after ...``
    (for a setting that changed: ``... code compiled under the old setting ...``)"""
    area, cache = CACHE_AREA.get(bug.culprit.subsystem if bug.culprit else "",
                                 ("torch.compile", "an on-disk compile cache"))
    old = "under the old setting" if _of_config(bug) else "for a custom op's old declaration"
    return f"[{area}] {cache} serves code compiled {old} after {_change(bug)}"


def evidence(culprit, change: str = "the declaration", after: str = "changing an op's declaration") -> list[str]:
    """Where it goes wrong: the pair run again with the FX graph cache alone (``change``:
    what differs between the processes; ``after``: what the user did)."""
    if culprit is None or culprit.stage is None:
        return ["Not localised: the fuzzer's triage did not see the bug again with one cache alone."]
    alone = culprit.switches.get("fx_graph only")
    name = CACHE_AREA.get(culprit.subsystem, ("", culprit.subsystem))[1]
    lines = [f"- **Cache**: the {name}."]
    if alone == "gone":
        lines.append("- With the FX graph cache alone (`torch._functorch.config.enable_autograd_cache = False`) "
                     "the new process compiles afresh and is right: the AOTAutograd cache's key, computed "
                     f"from Dynamo's graph, does not change with {change}, and a hit loads the FX graph "
                     "it stored without computing that graph's key again.")
        lines.append("- **Workaround**: `torch._functorch.config.enable_autograd_cache = False`, or an empty "
                     f"`TORCHINDUCTOR_CACHE_DIR` after {after}.")
    elif alone == "stays":
        lines.append("- With the FX graph cache alone the new process is still served the old code: that "
                     f"cache's key does not change with {change} either.")
        lines.append("- **Workaround**: `torch._inductor.config.fx_graph_cache = False`, or an empty "
                     f"`TORCHINDUCTOR_CACHE_DIR` after {after}.")
    return lines


def issue(bug, entry) -> Issue:
    variant = variants.Variant.from_json(entry.variant)
    if variant.kind == variants.CONFIG_CHANGED:
        return _config_issue(bug, entry, variant)
    opening = (f"With the on-disk compile caches on (the default), a program compiled in a new process "
               f"after a custom op's declaration changed ({_code(variant.detail)}) is served the code "
               f"compiled for the old declaration: it {says(entry)}. Compiled from empty caches, it is right. "
               "The script below runs itself twice, as the old and then the new declaration, in two "
               "processes sharing one new cache folder; only the new one is judged. The new declaration "
               "is honest; the old one is what its author fixed.")
    runs = ("runs the old and the new declaration in two processes sharing a new cache folder, and "
            "judges the new one's cached compile against its compile from empty caches with the "
            f"fuzzer's contract ({_judged(entry, variant)})")
    return Issue(title(bug), opening, tuple(evidence(bug.culprit)), runs, stance=EDITED_OP)


def _config_issue(bug, entry, variant) -> Issue:
    """A setting changed between the two processes, no op: the key must see the setting
    wherever the compiled code depends on it."""
    settings = ", ".join(f"{p} = {variant.config_new[p]!r}" if p in variant.config_new else f"{p} at its default"
                         for p in dict.fromkeys([*variant.config_old, *variant.config_new]))
    twice = (" and takes the gradients twice (`retain_graph=True` the first time), which is what that "
             "setting is for" if variant.twice else "")
    opening = (f"With the on-disk compile caches on (the default), a program compiled in a new process after a "
               f"setting changed ({_code(variant.detail)}) is served the code compiled under the old setting: "
               f"it {says(entry)}. Compiled from empty caches, it is right. The script below runs itself twice, "
               f"in two processes sharing one new cache folder: the first under the old setting, the second "
               f"with {_code(settings)}{twice}; only the second is judged.")
    runs = ("runs the old and the new setting in two processes sharing a new cache folder, and judges the new "
            f"one's cached compile against its compile from empty caches with the fuzzer's contract "
            f"({_judged(entry, variant)})")
    return Issue(title(bug), opening, tuple(evidence(bug.culprit, "the setting", "changing the setting")), runs)
