"""A stale-cache finding's scripts: the full one, which runs its cache pair and judges
it with the carried contract, and the brief one an issue shows.  A cache pair's
program runs in two processes, each registering its own op library, so its scripts
are not a plain trial's (``fuzzer.render``, whose helpers they use)."""

from __future__ import annotations

import inspect
import pprint
import re

from fuzzer.cache import pair
from fuzzer.cache.trial import ALL_CACHES, spec_of
from fuzzer.cache.variants import Variant
from fuzzer.corpus.entry import Entry
from fuzzer.limits import REPORT
from fuzzer.program import codegen, custom_ops
from fuzzer.render.brief import HOOKS, binding_index, check_of, fold, input_lines, run_lines
from fuzzer.render.repro import CARRIED, PREAMBLE, carried_source

#: the modules a stale-cache script carries: a plain script's, then its pair
PAIR_CARRIED = CARRIED + (pair,)


def pair_spec(entry: Entry) -> dict:
    """What a stale-cache script's pair needs to know of its entry."""
    variant = Variant.from_json(entry.variant)
    program = entry.case.program
    return {
        "id": entry.id,
        "kind": entry.kind,
        "bug_class": entry.bug_class.text,
        "label": variant.label,
        "variant": variant.detail,
        "device": entry.device,
        **spec_of(entry.case, entry.backend),
        "input_names": [i.name for i in program.inputs],
        "grad": variant.grad,
        "config_old": dict(variant.config_old),
        "config_new": dict(variant.config_new),
        **({"twice": True} if variant.twice else {}),
        "caches": list(ALL_CACHES),
        "time_limit_s": REPORT.script_child_seconds,
        **({"hash_seed": entry.hash_seed} if entry.hash_seed is not None else {}),
    }


def script(entry: Entry) -> str:
    """The script of a stale-cache finding: each side's op library as a string (a
    process registers an op once, so each side registers its own, in a process of
    its own), the program as a string too; run bare, it runs itself twice more with
    ``--side``, the old then the new side, on one new, empty cache folder."""
    variant = Variant.from_json(entry.variant)
    names = entry.case.program.custom_ops()
    header = (
        f'"""dcefuzz finding {entry.id}: {entry.kind}\n\n'
        + (f"The declaration changed between two runs: {variant.detail}.\n"
           "A compile of the new declaration, served by the on-disk cache that a compile of the\n"
           "old one filled, breaks the contract where a compile from empty caches does not:\n\n"
           if variant.op else
           f"A setting changed between two runs: {variant.detail}.\n"
           "A compile under the new setting, served by the on-disk cache that a compile under the\n"
           "old one filled, breaks the contract where a compile from empty caches does not:\n\n")
        + "\n".join(entry.detail[:5]) + "\n\n"
        + f"Found with torch {entry.torch_version} on {entry.device}"
        + (f" with fault {entry.fault!r} planted" if entry.fault else "") + ".\n"
        + f"Run: python {entry.id}.py [cpu|cuda]   (default: {entry.device})\n"
        + f"It runs itself twice more (--side), as the old then the new {'declaration' if variant.op else 'setting'}, in two\n"
        + "fresh processes sharing a new, empty cache folder.\n"
        + "Exit 1: reproduces, 0: does not, 125: cannot judge (for git bisect run).\n"
        + '"""\n'
    )
    parts = [
        header + "\nfrom __future__ import annotations\n",
        PREAMBLE,
        *[carried_source(m) for m in PAIR_CARRIED],
        f"LIBRARY_OLD = {variant.library(names, pair.OLD)!r}\n",
        f"LIBRARY_NEW = {variant.library(names, pair.NEW)!r}\n",
        f"PROGRAM = {codegen.source(entry.case.program)!r}\n",
        "SPEC = " + pprint.pformat(pair_spec(entry), sort_dicts=False, width=100) + "\n",
        'if __name__ == "__main__":\n    sys.exit(pair_main(SPEC, LIBRARY_OLD, LIBRARY_NEW, PROGRAM))\n',
    ]
    return "\n\n".join(p.strip("\n") + "\n" for p in parts)


_PAIR_HEAD = '''\
import os, subprocess, sys, tempfile
import torch

if len(sys.argv) == 1:  # the old side, then the new, in two fresh processes sharing one cache
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp())
    for side in ("old", "new"):
        done = subprocess.run([sys.executable, __file__, side], env=env)
    sys.exit(done.returncode)
OLD = sys.argv[1] == "old"
'''


def _indented(text: str) -> str:
    return "".join("    " + line if line.strip() else line for line in text.splitlines(True))


#: a function's docstring, which a brief leaves out (the issue's text says what it does)
_DEF_DOCSTRING = re.compile(r'(\):\n)    """.*?"""\n', re.S)


def _value(value, parts: list) -> str:
    """A setting's value as source (a custom pass: its maker, added to ``parts``)."""
    if isinstance(value, dict) and "custom_pass" in value:
        maker = pair.CUSTOM_PASSES[value["custom_pass"]]
        parts.append(inspect.getsource(maker))
        return f"{maker.__name__}()"
    return repr(value)


def _setting_lines(path: str, variant: Variant, parts: list) -> str:
    """The lines that set ``path`` on the side or sides the variant sets it on."""
    module = path.rsplit(".", 1)[0]
    lines = [f"import {module}  # {variant.detail}"]
    if path in variant.config_old and path in variant.config_new:
        lines += [f"{path} = {_value(variant.config_old[path], parts)} if OLD else "
                  f"{_value(variant.config_new[path], parts)}"]
    elif path in variant.config_old:
        lines += [f"if OLD:\n    {path} = {_value(variant.config_old[path], parts)}"]
    else:
        lines += [f"if not OLD:\n    {path} = {_value(variant.config_new[path], parts)}"]
    return "\n".join(lines)


def brief(entry: Entry) -> str:
    """The brief of a stale-cache finding: the script runs itself as the old side and
    as the new one, on one new cache folder; only the new side asserts."""
    variant = Variant.from_json(entry.variant)
    check = check_of(entry)
    parts = [_PAIR_HEAD, HOOKS[check.records]]
    if variant.op:
        parts.append(f"if OLD:  # {variant.detail}\n" + _indented(custom_ops.brief_snippet(variant.old))
                     + "else:\n" + _indented(custom_ops.brief_snippet(variant.new)))
    for path in dict.fromkeys([*variant.config_old, *variant.config_new]):
        parts.append(_setting_lines(path, variant, parts))
    others = custom_ops.brief_source([n for n in entry.case.program.custom_ops() if n != variant.op],
                                     grad=entry.case.program.mode.grad)
    if variant.grad:
        names = [n for n in entry.case.program.custom_ops() if n != variant.op]
        others = "\n".join(custom_ops.brief_snippet(variant.library([n], "new").split(custom_ops.HEADER, 1)[1]) for n in names)
        parts.append(_DEF_DOCSTRING.sub(r"\1", inspect.getsource(pair.with_grads), count=1))
        if variant.twice:  # the new side takes the gradients twice
            parts.append("import functools; with_grads = functools.partial(with_grads, twice=not OLD)")
    parts += [others, codegen.source(entry.case.program)]
    runs = input_lines(entry, binding_index(entry)) + run_lines(entry, check, grads=variant.grad)
    if check.assertion:
        runs += ["if not OLD:", *(f"    {line}" for line in check.assertion)]
    else:  # the compiled run is what fails: the old side runs it too, and may fail it
        runs[-1:] = ["try:  # the old side's run only fills the cache: its old declaration may fail it",
                     f"    {runs[-1]}", "except Exception:", "    if not OLD:", "        raise"]
    parts.append("\n".join(runs))
    return "\n".join(fold(p) for p in parts if p.strip())
