"""A corpus or campaign folder rendered as a static site: an index of bugs, a page per
bug, and the campaign's page.

The site is built from records only: it reads entries, the upstream file and the
campaign's state and logs, and never runs an entry's program (an entry is code:
``replay`` runs it, the site does not).  It is self-contained, so it opens from disk:
styles and the little JavaScript (sorting and filtering the index, copying a repro)
are inline, each page's Content-Security-Policy admits only its own script, by hash,
and nothing is fetched.  Everything taken from an entry (a program, a message, a
user op's name, a path) is escaped: the templates autoescape, and a report's
markdown is rendered with raw HTML off.

Jinja2 and markdown-it-py are the ``site`` extra; without them :func:`build` raises
:class:`SiteUnavailable`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from fuzzer.campaign.plot import series
from fuzzer.campaign.state import CORPUS_FOLDER, CampaignFolder, Withdrawal
from fuzzer.corpus import releases, upstream
from fuzzer.corpus.bugs import Bug, group
from fuzzer.corpus.entry import SCRIPT_SUFFIX, Entry
from fuzzer.corpus.store import load_all
from fuzzer.files import atomic_write
from fuzzer.judge import kinds
from fuzzer.limits import SITE
from fuzzer.render.report import Stance, issue_of, render
from fuzzer.render.table import culprit_words
from fuzzer.website import svg

INSTALL_HINT = "pip install 'dcefuzz[site]'"
#: the tracker a link's ``owner/repo#number`` points into
TRACKER = "https://github.com/{repo}/issues/{number}"

INDEX_JS = """
(function () {
  var table = document.getElementById("bugs"), body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  function filter() {
    var kind = document.getElementById("f-kind").value, verdict = document.getElementById("f-verdict").value,
        up = document.getElementById("f-upstream").value, shown = 0;
    rows.forEach(function (r) {
      var ok = (!kind || r.dataset.kinds.split(" ").indexOf(kind) >= 0) &&
               (!verdict || r.dataset.verdict === verdict) && (!up || r.dataset.upstream === up);
      r.style.display = ok ? "" : "none"; if (ok) shown++;
    });
    document.getElementById("shown").textContent = shown + " of " + rows.length + " shown";
  }
  ["f-kind", "f-verdict", "f-upstream"].forEach(function (id) { document.getElementById(id).onchange = filter; });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.onclick = function () {
      var asc = !th.classList.contains("sorted-asc"), num = th.dataset.type === "num";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.classList.remove("sorted-asc", "sorted-desc"); });
      th.classList.add(asc ? "sorted-asc" : "sorted-desc");
      rows.sort(function (a, b) {
        var x = a.cells[col].textContent.trim(), y = b.cells[col].textContent.trim();
        var d = num ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
        return asc ? d : -d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    };
  });
  filter();
})();
"""
BUG_JS = """
document.getElementById("copy").onclick = function () {
  navigator.clipboard.writeText(document.getElementById("brief").textContent);
  this.textContent = "copied";
};
"""


_BACKTICKS = re.compile(r"`([^`]+)`")


def _when(iso: str) -> str:
    """``2026-11-30T15:09:40+00:00`` as ``2026-11-30 15:09`` (UTC)."""
    return iso[:16].replace("T", " ") if iso else "-"


class SiteUnavailable(RuntimeError):
    """Jinja2 or markdown-it-py is not installed."""


@dataclass(frozen=True)
class Source:
    """What a site is rendered from: a corpus, and the campaign it belongs to (if any)."""

    corpus: Path
    campaign: CampaignFolder | None

    @classmethod
    def of(cls, path: str | Path) -> Source:
        """``path`` a campaign folder (its corpus inside) or a corpus folder (its campaign
        the folder above, when that holds one)."""
        p = Path(path)
        if (p / CORPUS_FOLDER).is_dir() and CampaignFolder(p).holds_campaign():
            return cls(p / CORPUS_FOLDER, CampaignFolder(p))
        if CampaignFolder(p).holds_campaign():
            return cls(p / CORPUS_FOLDER, CampaignFolder(p))
        above = CampaignFolder(p.parent)
        return cls(p, above if p.name == CORPUS_FOLDER and above.holds_campaign() else None)


@dataclass(frozen=True)
class Built:
    out: Path
    bugs: int
    pages: tuple[Path, ...]


def _libraries():
    try:
        import jinja2
        import markupsafe
        from markdown_it import MarkdownIt
    except ImportError as exc:
        raise SiteUnavailable(f"the site needs Jinja2 and markdown-it-py ({exc.name} is missing): "
                              f"{INSTALL_HINT}") from exc
    env = jinja2.Environment(loader=jinja2.PackageLoader("fuzzer.website", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["code_spans"] = lambda text: markupsafe.Markup(
        _BACKTICKS.sub(r"<code>\1</code>", str(markupsafe.escape(text))))
    env.filters["when"] = _when
    # commonmark with raw HTML off: a message or program in a report cannot inject markup
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    return env, markdown


def _hash(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


def _url(ref: str) -> dict:
    repo, _, number = ref.partition("#")
    return {"url": TRACKER.format(repo=repo, number=number), "label": "#" + number}


def _link(link: upstream.Link) -> dict:
    return {**_url(link.ref), "ref": link.ref, "kind": link.kind, "state": link.status, "relation": link.relation,
            "note": link.note}


def _stance(stance: Stance | None) -> dict | None:
    """What maintainers have said of bugs like this one, beside the bug's facts: the
    report says it too, further down."""
    return None if stance is None else {"text": stance.text, "links": [_url(ref) for ref in stance.refs]}


def _upstream_state(records) -> str:
    if not records:
        return "not looked up"
    return "known" if any(r.known for r in records) else "new"


def _hours(times: list[str]) -> list[float]:
    stamps = [_dt.datetime.fromisoformat(t) for t in times]
    return [(s - stamps[0]).total_seconds() / 3600 for s in stamps]


def _hits_chart(members: list[Entry]) -> str:
    times = sorted(t for e in members for t in e.hit_times)
    if not times:
        return ('<p class="empty">Not timed: these entries were saved before dcefuzz recorded the time '
                'of each hit.</p>')
    return svg.chart("hits (all entries of the bug)", _hours(times), {"hits": list(range(1, len(times) + 1))},
                     x_label="hours since the first timed hit", step=True)


def _bug_row(b: Bug, members: list[Entry], known: upstream.Upstream) -> dict:
    records = known.of(b.entries)
    by_release = dict(releases.by_release(b.versions))
    return {"id": b.id, "title": b.title, "kinds": list(b.kinds), "where": "; ".join(culprit_words(b)),
            "hits": b.hits, "first_seen": b.first_seen, "last_seen": b.last_seen, "verdicts": by_release,
            "newest": list(by_release.values())[-1] if by_release else "",
            "links": [_link(link) for r in records for link in r.links],
            "upstream_state": _upstream_state(records), "upstream_line": upstream.line(records),
            "history": b.history.line(), "members": members}


def _campaign(cf: CampaignFolder, out: Path) -> dict:
    state = json.loads((cf.path / "state.json").read_text()) if (cf.path / "state.json").is_file() else {}
    lines = cf.stats_lines()
    s = series(lines) if lines else None
    charts = []
    if s is not None:
        if s["bugs"] is not None:
            charts.append(svg.chart("discovery: distinct bugs and entries", s["minutes"],
                                    {"bugs": s["bugs"], "entries": s["entries"]}, step=True))
        else:
            charts.append(svg.chart("discovery: entries", s["minutes"], {"entries": s["entries"]}, step=True))
        charts.append(svg.chart("programs per minute", s["minutes"], {"between lines": s["rate"],
                                                                      "smoothed": s["smooth"]}))
        if s["rss"]:
            charts.append(svg.chart("worker memory (MiB)", s["minutes"],
                                    {f"worker {k}": slot for k, slot in enumerate(s["rss"])}))
    last = lines[-1] if lines else {}
    log_cut = ""
    if cf.torch_log.is_file():
        size = cf.torch_log.stat().st_size
        with open(cf.torch_log, "rb") as fh:
            fh.seek(max(0, size - SITE.log_bytes))
            (out / "torch.log").write_bytes(fh.read())
        log_cut = f"{SITE.log_bytes // (1024 * 1024)} MiB" if size > SITE.log_bytes else ""
    seconds = state.get("seconds") or 0
    programs = state.get("programs", 0)
    return {"folder": str(cf.path), "seed": state.get("seed"), "shard": state.get("shard"),
            "programs": programs,
            "minutes": f"{seconds / 60:.1f}", "rate": f"{programs / seconds * 60:.1f}" if seconds else "-",
            "findings": sorted((state.get("findings") or {}).items()),
            "statuses": sorted((state.get("statuses") or {}).items()),
            "flaky": (state.get("statuses") or {}).get("flaky", 0),
            "invalid": (state.get("statuses") or {}).get("invalid", 0),
            "untested": sorted((state.get("untested") or {}).items()),
            "internal": sorted((state.get("internal_errors") or {}).items()),
            "reached": sorted((state.get("reached") or {}).items()),
            "withdrawn": [Withdrawal.from_json(w) for w in state.get("withdrawn") or []],
            "features": ", ".join(f"{k}={v}" for k, v in (state.get("features") or {}).items()) or "none",
            "bugs": last.get("bugs", "-"), "entries": last.get("entries", last.get("saved", "-")),
            "charts": charts,
            "torch_log": str(cf.torch_log) if cf.torch_log.is_file() else "", "log_cut": log_cut}


def build(path: str | Path, out: str | Path) -> Built:
    """Render ``path`` (a corpus or campaign folder) into the folder ``out``."""
    env, markdown = _libraries()
    source = Source.of(path)
    out = Path(out)
    (out / "bugs").mkdir(parents=True, exist_ok=True)
    (out / "entries").mkdir(parents=True, exist_ok=True)
    entries, unreadable = load_all([source.corpus]) if source.corpus.is_dir() else ([], [])
    known = upstream.load(source.corpus) if source.corpus.is_dir() else upstream.Upstream()
    bugs = group(entries)
    by_id = {e.id: e for e in entries}
    rendered = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    common = {"source": str(source.campaign.path if source.campaign else source.corpus), "rendered": rendered,
              "has_campaign": source.campaign is not None}
    for e in entries:
        shutil.copyfile(source.corpus / f"{e.id}.json", out / "entries" / f"{e.id}.json")
        # rendered, never copied: a script kept beside its entry may be older than the contract
        atomic_write(out / "entries" / f"{e.id}{SCRIPT_SUFFIX}", kinds.script(e))
    pages = []
    rows = []
    for b in bugs:
        members = [by_id[i] for i in b.entries]
        row = _bug_row(b, members, known)
        rows.append(row)
        lead = members[0]
        report = render(b, lead, f"{lead.id}{SCRIPT_SUFFIX}", known.of(b.entries))
        page = dict(row, shown=lead.id, brief=kinds.brief(lead), hits_chart=_hits_chart(members),
                    stance=_stance(issue_of(b, lead).stance),
                    report_html=markdown.render(report),
                    members=[{"id": e.id, "statements": e.statements, "script": True} for e in members])
        path_out = out / "bugs" / f"{b.id}.html"
        atomic_write(path_out, env.get_template("bug.html").render(
            bug=page, root="../", script=BUG_JS, script_hash=_hash(BUG_JS), **common))
        pages.append(path_out)
    releases_seen = sorted({r for row in rows for r in row["verdicts"]}, key=releases.release)
    index = out / "index.html"
    atomic_write(index, env.get_template("index.html").render(
        bugs=rows, entries=len(entries), releases=releases_seen, newest=releases_seen[-1] if releases_seen else "",
        kinds=sorted({k for row in rows for k in row["kinds"]}),
        verdicts=sorted({row["newest"] for row in rows if row["newest"]}),
        upstreams=sorted({row["upstream_state"] for row in rows}),
        unreadable=unreadable, root="", script=INDEX_JS, script_hash=_hash(INDEX_JS), **common))
    pages.insert(0, index)
    if source.campaign is not None:
        campaign = out / "campaign.html"
        atomic_write(campaign, env.get_template("campaign.html").render(
            c=_campaign(source.campaign, out), root="", script_hash="", **common))
        pages.insert(1, campaign)
    return Built(out, len(bugs), tuple(pages))
