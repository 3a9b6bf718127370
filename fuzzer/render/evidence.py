"""Where a bug lives, as its issue says it: the culprit's evidence (the first stage that
shows it, its cause, each switch thrown with the config line that throws it, the
bisector's pass), or why none is named."""

from __future__ import annotations

from fuzzer.corpus.bugs import Bug
from fuzzer.judge import contract, targets
from fuzzer.triage import aliasing, causes, rules, switches, within
from fuzzer.triage.stage import STAGES

#: how a switch's outcome reads in the table
OUTCOMES = {"gone": "**gone**", "stays": "stays", "changed": "changed (another failure instead)"}


def target_of(bug: Bug) -> str:
    """The one target all of ``bug``'s entries were found through, else ``compile``."""
    return bug.targets[0] if len(set(bug.targets)) == 1 else targets.DEFAULT


def _setting(name: str) -> str:
    """The config lines that throw a switch, or a pair of them (``a+b``)."""
    if any(part not in switches.BY_NAME for part in name.split(switches.PAIR)):
        return ""
    return "; ".join(f"torch._inductor.config.{key} = {value!r}" for key, value in switches.patch_of(name).items())


def unplaced(bug: Bug) -> str:
    """Why no stage is named: what the triage did, or why it did not run."""
    c, target = bug.culprit, target_of(bug)
    if c is not None:
        if c.budget_exhausted:
            return "Not localised: the fuzzer's triage ran out of budget before any stage showed the bug."
        where = (f"the pieces of {targets.get(target).pipeline}, each run alone" if within.walks(target)
                 and not c.via else "torch's debugging backends")
        return f"Not localised: the fuzzer's triage did not see the bug again on {where}."
    if any(kind in contract.PROCESS_KINDS for kind in bug.kinds):
        frame = (bug.blame or "").partition("process:")[2]
        return ("Not triaged: a process that dies is walked over torch's debugging backends each in a fresh "
                "process, and this entry's walk has not run; "
                + (f"the innermost frame of torch on its recorded stack is `{frame}`." if frame
                   else "its recorded stack holds no frame of torch."))
    if target != targets.DEFAULT and not within.walks(target):
        return (f"No stage is named: the fuzzer's triage places a finding of the `{target}` target only "
                "where plain `torch.compile` shows it too, and has no pieces of that target's pipeline to run "
                "alone.")
    return "Not triaged: this entry has no culprit (the fuzzer's triage did not run on it, or did not finish)."


def _piece(name: str) -> str:
    """What a piece of a target's pipeline runs, in words (``targets.PIECES``, or the
    target that is the walk's last piece)."""
    return targets.get(name).api


def _stage_line(bug: Bug) -> str:
    """Which stage shows the bug first, and which before it do not."""
    c = bug.culprit
    piece = within.blamed(c.stage)
    if piece is not None:  # a piece of a target's pipeline (``fuzzer.triage.within``)
        walk = within.walk_of(target_of(bug))
        earlier = walk[:walk.index(piece)] if piece in walk else ()
        pipeline = (targets.get(target_of(bug)).pipeline if walk else "") or "its target's pipeline"
        return (f"- **Stage**: `{c.stage}` ({_piece(piece)}) is the first piece of {pipeline}, each run "
                "alone, that shows it" + (f"; {', '.join(f'`{targets.get(p).blame}` ({_piece(p)})' for p in earlier)} "
                                          f"{'does' if len(earlier) == 1 else 'do'} not." if earlier else "."))
    earlier = STAGES[:STAGES.index(c.stage)] if c.stage in STAGES else ()
    clean = [s for s in earlier if s not in c.otherwise]
    return (f"- **Stage**: `{c.stage}` is the first of torch's debugging backends that shows it"
            + (f" ({', '.join(f'`{s}`' for s in clean)} {'does' if len(clean) == 1 else 'do'} not)."
               if clean else "."))


def culprit_lines(bug: Bug) -> list[str]:
    """The evidence of where the bug lives: stage, switches, the bisector's pass."""
    c = bug.culprit
    if c is None or c.stage is None:
        return [unplaced(bug)]
    lines = [_stage_line(bug)]
    for name, kinds in c.otherwise.items():
        lines.append(f"- **Fails otherwise**: `{name}` shows {', '.join(f'`{k}`' for k in kinds) or 'nothing judged'}"
                     " instead, which this bug may hide where it shows.")
    if c.dynamic_only is not None:
        lines.append("- **Shapes**: " + ("gone when compiled with `dynamic=False`: it needs symbolic shapes."
                                         if c.dynamic_only else "also with `dynamic=False` (static shapes)."))
    if c.cause in causes.BY_NAME:
        lines.append(f"- **Cause**: {causes.BY_NAME[c.cause].words} (`{c.cause}`: {causes.BY_NAME[c.cause].probes}).")
    if c.aliasing_changes:
        lines.append(f"- **Aliasing**: {aliasing.WORDS} (`window_calls={c.aliasing_changes}`); gone when they"
                     " alias at every call, the compiling one included: code compiled for one aliasing of its"
                     " inputs ran on another.")
    if c.subsystem is not None:
        lines.append(f"- **CompilerBisector**: subsystem `{c.subsystem}`"
                     + (f" (`{c.pass_name}`)" if c.pass_name else "") + ".")
    gone = [name for name, outcome in c.switches.items() if outcome == "gone" and _setting(name)]
    if gone:
        lines.append("- **Workaround**: " + " or ".join(f"`{_setting(n)}`" for n in gone) + ".")
    if c.budget_exhausted:
        lines.append("- The triage ran out of budget: the probes below are all that ran.")
    if c.switches:
        lines += ["", ("Inductor switches, each thrown alone (or two, `a+b`; or one rule of a pass, "
                       "`pass[op]`) on a fresh compile:"), "",
                  "| switch | setting | the bug |", "| --- | --- | --- |"]
        lines += [f"| {name} | {f'`{_setting(name)}`' if _setting(name) else rules.setting(name)} "
                  f"| {OUTCOMES.get(outcome, outcome)} |"
                  for name, outcome in c.switches.items()]
    return lines
