"""Commands on a user's custom ops: ``check-ops``."""

from __future__ import annotations

import json
import sys

import click

from fuzzer.cli.app import main
from fuzzer.cli.options import DEVICE_HELP, exit_with, resolve_device


@main.command("check-ops")
@click.argument("specs", nargs=-1, required=True, metavar="MODULE_OR_FILE...")
@click.option("--device", default=None, help=DEVICE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the ops and the problems found as JSON.")
def check_ops(specs, device, as_json):
    """Check the declarations of the custom ops each module registers, as `run --ops`
    does before a campaign: torch.library.opcheck (with test_aot_dispatch_dynamic) on
    sizes 0, 1 and 2, then what opcheck does not look for (an argument written but not
    declared, a declared write that never happens, a result that aliases an argument).

    MODULE_OR_FILE is a module, a file, or a hints file (.toml or .json) for a library
    you do not own (docs/user-ops.md).  One row per op: its kind (both, as
    `mutating+effectful`, for an op that writes and has an effect), whether a campaign
    would use it, and why not.  A declaration finding is evidence of a lie (an
    undeclared write, an aliased result, opcheck's schema, fake or autograd-registration
    test failing); no kernel for the device, an op that refuses dcefuzz's inputs, a type
    dcefuzz cannot make, or an AOT-dispatch failure the fake impl does not explain are
    skips, with advice.  Exit 1 when an op has a declaration finding, 0 when none has
    (skips and warnings do not count), 2 when a module cannot be loaded or registers
    no op dcefuzz can call.
    """
    from fuzzer.user import library, selection

    try:
        chosen = selection.select(specs, device=resolve_device(device))
    except library.LoadError as exc:
        exit_with(f"error: {exc}")
    rows = chosen.table()
    if as_json:
        ops = [{"op": op.qualname, "module": lib.ref.name, "declaration": op.declaration, "kinds": list(op.kinds),
                "signature": op.gufunc.text or None,
                "ok": op.qualname not in chosen.left_out}
               for lib in chosen.libraries for op in lib.ops]
        skipped = [{"op": r["op"], "reason": r["why"]} for r in rows if r["status"] == "skipped"]
        click.echo(json.dumps({"ops": ops, "skipped": skipped, "table": rows, "problems": chosen.to_json()},
                              indent=2))
    else:
        width = max((len(r["op"]) for r in rows), default=2)
        kind = max((len(r["kind"] or "-") for r in rows), default=4)
        click.echo(f"{'op':{width}}  {'kind':{kind}}  {'status':8}  why")
        for r in rows:
            click.echo(f"{r['op']:{width}}  {r['kind'] or '-':{kind}}  {r['status']:8}  {r['why']}")
        counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("used", "skipped", "finding")}
        click.echo(f"{len(rows)} ops: {counts['used']} used, {counts['skipped']} skipped, "
                   f"{counts['finding']} with a declaration finding")
    sys.exit(1 if chosen.findings else 0)
