"""The hook that keeps deploy stamps from reading as stale content (last-modified-deploy).

A host's `lastmod-stale`, `lastmod-ahead` and `last-modified-dynamic` findings (the
URL's verdict names the one its lastmod comparison gave, `UrlVerdict.deploy_held`) are
held back until its Last-Modified is judged (audit.checks.deploystamp: its first 50
qualifying answers, or at the end of the run at least 20 of them). A deploy stamp drops
them and gives one `last-modified-deploy` finding for the host at the end of the run;
otherwise the held findings go out as soon as the host is judged, and the later ones at
once. At most 50 answers' findings are held per undecided host, so memory stays bounded
and the report still streams.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from audit.checks.deploystamp import DeployStamp
from audit.core.records import FetchResult, Finding, UrlResult, finding, header_value
from audit.http.hosts import canonical_origin
from audit.pipeline.hooks import Hook
from audit.rules.dates import parse_http_date

if TYPE_CHECKING:
    from audit.pipeline.context import RunContext, UrlJob
    from audit.pipeline.recorder import Recorder

__all__ = ["DeployStampHook"]


@dataclass(slots=True)
class _Host:
    stamp: DeployStamp = field(default_factory=DeployStamp)
    held: list[Finding] = field(default_factory=list)
    suppressed: int = 0


class DeployStampHook(Hook):
    """RULES.md last-modified-deploy, decided per host as the answers arrive."""

    name = "deploy-stamp"
    _rec: Recorder  # set by attach, which the run calls before any other hook point

    def __init__(self) -> None:
        self._hosts: defaultdict[str, _Host] = defaultdict(_Host)

    def attach(self, ctx: RunContext) -> None:
        self._rec = ctx.recorder

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        listed = job.host  # looked up once when listed (None: a URL without a host)
        if result is None or job.lastmod is None or result.redirects or listed is None:
            return None
        # the verdict state of the URL's host (scheme://host:port, whatever the letter
        # case or a default port written out)
        host = self._hosts[listed.key]
        stamp = host.stamp
        if stamp.verdict is None:  # undecided: this answer counts towards the verdict
            modified = _header_date(result, "last-modified")
            if modified is None:
                return None
            if stamp.add(modified, _header_date(result, "date")):
                self._release(host)
        if stamp.verdict is False:
            return None  # a judged content date: nothing more to do per URL
        # this answer's lastmod finding (the verdict's comparison a deploy stamp may
        # explain) is taken out while the host is undecided or a deploy stamp; nothing
        # changes without one (most answers: no comparison finding)
        judged = job.verdict
        held = judged.deploy_held if judged is not None else None
        if held is None:
            return None
        kept = list(found)
        try:
            kept.remove(held)
        except ValueError:  # not among them (a feature's own delivery): nothing to hold
            return None
        if stamp.verdict is None:
            host.held.append(held)
        else:
            host.suppressed += 1
        return record, kept

    def _release(self, host: _Host) -> None:
        """The host was just judged: its held findings go out, or are dropped."""
        held, host.held = host.held, []
        if host.stamp.verdict:
            host.suppressed += len(held)
        else:  # (none held: none goes out)
            self._rec.findings(held)

    def end_of_run(self) -> None:
        for key, host in self._hosts.items():
            stamp = host.stamp
            if stamp.verdict is None:
                stamp.decide()
                self._release(host)
            if stamp.verdict:
                message = (
                    "Last-Modified on this host is a deploy stamp: 90% or more of the first "
                    f"{stamp.seen} answers fall within ten minutes ({stamp.span}), so it shows "
                    f"the build, not each page's last change; {host.suppressed} "
                    "lastmod-stale/lastmod-ahead comparisons (and last-modified-dynamic, for "
                    "files built seconds before the request) were not reported. Send each "
                    "page's real modification time to make them checkable"
                )
                origin = canonical_origin(key) or key
                self._rec.finding(finding("last-modified-deploy", message, url=origin + "/"))


def _header_date(result: FetchResult, name: str) -> datetime | None:
    """The answer's `name` header (Date, Last-Modified) as a date, or None (absent or not
    an HTTP date)."""
    header = header_value(result.headers, name)
    return parse_http_date(header) if header else None
