"""What an issue of a stale-cache bug says: a cache, a declaration that changed, two
processes, where a plain trial's issue speaks of one compile against eager
(``fuzzer.render.report``, which asks a trial kind for these words)."""

from __future__ import annotations

from fuzzer.cache import variants
from fuzzer.render.report import Issue, says

#: the area tag of a stale-cache issue, and the cache's name, by the blamed cache
CACHE_AREA = {"aot_autograd_cache": ("aotdispatch", "AOTAutograd cache"),
              "fx_graph_cache": ("inductor", "FX graph cache")}


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _change(bug) -> str:
    """The bug's change of declaration, in words (its label is in the family)."""
    labels = [w.partition(":")[0] for w in bug.family.partition("|")[2].split(",")]
    return next((variants.CHANGE_WORDS[w] for w in labels if w in variants.CHANGE_WORDS), "it changes")


def title(bug) -> str:
    """``[area] the cache serves code compiled for a custom op's old declaration after ...``"""
    area, cache = CACHE_AREA.get(bug.culprit.subsystem if bug.culprit else "",
                                 ("torch.compile", "an on-disk compile cache"))
    return f"[{area}] {cache} serves code compiled for a custom op's old declaration after {_change(bug)}"


def evidence(culprit) -> list[str]:
    """Where it goes wrong: the pair run again with the FX graph cache alone."""
    if culprit is None or culprit.stage is None:
        return ["Not localised: the fuzzer's triage did not see the bug again with one cache alone."]
    alone = culprit.switches.get("fx_graph only")
    name = CACHE_AREA.get(culprit.subsystem, ("", culprit.subsystem))[1]
    lines = [f"- **Cache**: the {name}."]
    if alone == "gone":
        lines.append("- With the FX graph cache alone (`torch._functorch.config.enable_autograd_cache = False`) "
                     "the new process compiles afresh and is right: the AOTAutograd cache's key, computed "
                     "from Dynamo's graph, does not change with the declaration, and a hit loads the FX graph "
                     "it stored without computing that graph's key again.")
        lines.append("- **Workaround**: `torch._functorch.config.enable_autograd_cache = False`, or an empty "
                     "`TORCHINDUCTOR_CACHE_DIR` after changing an op's declaration.")
    elif alone == "stays":
        lines.append("- With the FX graph cache alone the new process is still served the old code: that "
                     "cache's key does not change with the declaration either.")
        lines.append("- **Workaround**: `torch._inductor.config.fx_graph_cache = False`, or an empty "
                     "`TORCHINDUCTOR_CACHE_DIR` after changing an op's declaration.")
    return lines


def issue(bug, entry) -> Issue:
    variant = variants.Variant.from_json(entry.variant)
    opening = (f"With the on-disk compile caches on (the default), a program compiled in a new process "
               f"after a custom op's declaration changed ({_code(variant.detail)}) is served the code "
               f"compiled for the old declaration: it {says(entry)}. Compiled from empty caches, it is right. "
               "The script below runs itself twice, as the old and then the new declaration, in two "
               "processes sharing one new cache folder; only the new one asserts. The new declaration "
               "is honest; the old one is what its author fixed.")
    runs = ("runs the old and the new declaration in two processes sharing a new cache folder, and "
            "judges the new one's cached compile against its compile from empty caches with the "
            "fuzzer's contract (float64 reference, effect log, inputs after the call)")
    return Issue(title(bug), opening, tuple(evidence(bug.culprit)), runs)
