"""The ``site`` command: a corpus or campaign folder as static HTML."""

from __future__ import annotations

import time

import click

from fuzzer.cli.app import main
from fuzzer.cli.options import exit_with


@main.command()
@click.argument("folder", required=False)
@click.option("--out", type=click.Path(file_okay=False), required=True,
              help="The folder the site is written into (index.html, campaign.html, bugs/, entries/).")
@click.option("--serve", "port", type=click.IntRange(0, 65535), is_flag=False, flag_value=8000, default=None,
              metavar="[PORT]",
              help="Also serve it on localhost (port 8000 if none is given; 0: any free port), rendering "
                   "it again whenever the campaign changes.  Stop with Ctrl-C.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The interface --serve binds to.  The pages hold this machine's programs and paths: "
                   "serve them wider only on a network you trust.")
def site(folder, out, port, host):
    """Render a corpus or campaign folder as a static site that opens from disk.

    DIR is a corpus folder or a campaign folder (default: the newest campaign under
    .dcefuzz/runs).  The index lists every bug (sortable, filterable by kind, by the
    newest release's verdict and by what is public); each bug has a page with its
    report, brief repro, entries and hits over time; a campaign folder adds the
    campaign's page (counts, curves, feedback, torch's log).  The site only renders
    entries: it never runs their programs.  Needs the site extra:
    pip install 'dcefuzz[site]'.
    """
    from fuzzer.cli.bugs import corpus_folder
    from fuzzer.website.build import SiteUnavailable, build

    source = corpus_folder(folder)  # a campaign folder's corpus: Source.of finds its campaign above
    try:
        if port is None:
            built = build(source, out)
            click.echo(f"wrote {built.out / 'index.html'} ({built.bugs} bugs, {len(built.pages)} pages)")
            return
        from fuzzer.website.serve import Server

        server = Server(source, out, port=port, host=host,
                        on_render=lambda b: click.echo(f"rendered again ({b.bugs} bugs)", err=True)).start()
    except SiteUnavailable as exc:
        exit_with(f"error: {exc}")
    except OSError as exc:
        exit_with(f"error: cannot serve on {host}:{port}: {exc}")
    click.echo(f"serving {server.url} ({server.built.bugs} bugs); Ctrl-C stops", err=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.close()

