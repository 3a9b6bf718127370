"""Commands on a user's custom ops: ``check-ops``."""

from __future__ import annotations

import json
import sys

import click

from fuzzer.cli.app import main
from fuzzer.cli.options import DEVICE_HELP, resolve_device


@main.command("check-ops")
@click.argument("specs", nargs=-1, required=True, metavar="MODULE_OR_FILE...")
@click.option("--device", default=None, help=DEVICE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the ops and the problems found as JSON.")
def check_ops(specs, device, as_json):
    """Check the declarations of the custom ops each module registers, as `run --ops`
    does before a campaign: torch.library.opcheck (with test_aot_dispatch_dynamic) on
    sizes 0, 1 and 2, then what opcheck does not look for (an argument written but not
    declared, a declared write that never happens, a result that aliases an argument).

    Exit 1 when an op has a declaration finding, 0 when none has (warnings do not
    count), 2 when a module cannot be loaded or registers no op dcefuzz can call.
    """
    from fuzzer.user import library, selection

    try:
        chosen = selection.select(specs, device=resolve_device(device))
    except library.LoadError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        ops = [{"op": op.qualname, "module": lib.ref.name, "declaration": op.declaration,
                "signature": op.gufunc.text or None,
                "ok": op.qualname not in chosen.left_out}
               for lib in chosen.libraries for op in lib.ops]
        skipped = [{"op": q, "reason": why} for lib in chosen.libraries for q, why in lib.skipped]
        click.echo(json.dumps({"ops": ops, "skipped": skipped, "problems": chosen.to_json()}, indent=2))
    else:
        for line in chosen.lines():
            click.echo(line)
        click.echo(f"{sum(len(lib.ops) for lib in chosen.libraries)} ops, "
                   f"{len(chosen.left_out)} with a declaration finding")
    sys.exit(1 if chosen.findings else 0)
