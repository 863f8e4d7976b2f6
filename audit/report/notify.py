"""`--notify DEST`: tell a team about a run where it works.

`Notice` is what is sent: the run's summary record, the alert lines (diff thresholds,
or why the run counts as worse) and a verdict. `send(dest, notice, smtp=...)`:

- `http://` or `https://` URL: one JSON POST, Slack-compatible (`text`, one line per
  alert) plus structured fields (`verdict`, `targets`, `summary`, `alerts`, `tool`,
  `version`); a non-2xx answer or a network failure is a NotifyError;
- `mailto:ADDRESS[,ADDRESS...]`: one plain-text mail through the SMTP server of
  `--smtp HOST:PORT` (STARTTLS when the server offers it; a login with
  SITEMAP_AUDIT_SMTP_USER / SITEMAP_AUDIT_SMTP_PASSWORD from the environment when
  both are set; the sender is SITEMAP_AUDIT_SMTP_FROM, else sitemap-audit@<host>).

The verdict is `worse`, `unchanged`, `interrupted`, or `baseline` (no previous complete
run to compare with: a first night is never called "unchanged"). A mail carries `Date:`
and `Message-ID:` (RFC 5322 3.6.1, 3.6.4), as mail clients and filters expect.

Whether to send at all (by default only when the run got worse) is the caller's
decision (`Notice.worse`). Sent with the standard library only (urllib, smtplib): no
aiohttp, no event loop; a notification is one request after the run.
"""

from __future__ import annotations

import json
import os
import smtplib
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any, Final

from audit.core.version import __version__
from audit.report.aggregate import as_dict
from audit.report.verdict import stopped_how

__all__ = [
    "SMTP_ENV",
    "Notice",
    "NotifyError",
    "parse_smtp",
    "send",
    "validate_dest",
]

SMTP_ENV: Final = ("SITEMAP_AUDIT_SMTP_USER", "SITEMAP_AUDIT_SMTP_PASSWORD")
FROM_ENV: Final = "SITEMAP_AUDIT_SMTP_FROM"
TIMEOUT: Final = 20.0


class NotifyError(Exception):
    """A notification that could not be sent; one line naming the destination."""


@dataclass
class Notice:
    """What one notification says."""

    targets: list[str]
    summary: dict[str, Any]
    alerts: list[str] = field(default_factory=list)
    worse: bool = False  # something got worse since the previous run (or the run failed)
    baseline: bool = False  # no previous complete run: nothing was compared

    @property
    def verdict(self) -> str:
        if stopped_how(self.summary) is not None:  # interrupted or partial
            return "interrupted"
        if self.baseline:
            return "baseline"
        return "worse" if self.worse else "unchanged"

    def headline(self) -> str:
        found = as_dict(self.summary.get("findings"))
        counts = ", ".join(f"{found.get(s, 0)} {s}s" for s in ("error", "warning"))
        where = " ".join(self.targets)
        return f"sitemap-audit {self.verdict.upper()}: {where}: {self.summary.get('urls', 0)} URLs, {counts}"

    def text(self) -> str:
        lines = [self.headline(), *self.alerts]
        if self.baseline and not self.alerts:
            lines.append("no previous complete run to compare with: this run is the baseline")
        return "\n".join(lines)

    def payload(self) -> dict[str, Any]:
        return {
            "text": self.text(),
            "tool": "sitemap-audit",
            "version": __version__,
            "verdict": self.verdict,
            "targets": self.targets,
            "alerts": self.alerts,
            "summary": self.summary,
        }


def validate_dest(dest: str, smtp: str | None) -> str:
    """A --notify destination as given, or NotifyError saying what is wrong with it."""
    low = dest.lower()
    if low.startswith(("http://", "https://")):
        return dest
    if low.startswith("mailto:"):
        if "@" not in dest:  # (nor in "mailto:": an address, never blank, has its "@")
            raise NotifyError(f"--notify {dest}: no mail address after mailto:")
        if smtp is None:
            raise NotifyError(f"--notify {dest}: a mailto: notification needs --smtp HOST:PORT")
        return dest
    raise NotifyError(f"--notify {dest}: give an http(s) webhook URL or mailto:ADDRESS")


def parse_smtp(text: str) -> tuple[str, int]:
    """HOST:PORT (an IPv6 host in brackets) -> (host, port); ValueError when it is not."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]")  # ("" when there is no ":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--smtp {text!r}: give HOST:PORT, e.g. mail.example.com:587")
    return host, int(port)


def send(dest: str, notice: Notice, *, smtp: str | None = None) -> None:
    """Send one notification to a webhook URL or a mailto: address."""
    if dest.lower().startswith("mailto:"):
        if smtp is None:
            raise NotifyError(f"--notify {dest}: a mailto: notification needs --smtp HOST:PORT")
        _mail(dest[7:], notice, smtp)
    else:
        _post(dest, notice)


def _post(url: str, notice: Notice) -> None:
    body = json.dumps(notice.payload(), ensure_ascii=False).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": f"sitemap-audit/{__version__}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as resp:
            resp.read(65536)
    except urllib.error.HTTPError as exc:
        raise NotifyError(f"--notify {url}: the webhook answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NotifyError(f"--notify {url}: cannot post: {reason}") from None


# Headers on one line up to RFC 5322's limit of 998 characters: the default folding at 78
# puts a long subject (the targets' URLs) wholly on a continuation line.
_MAIL_POLICY: Final = policy.SMTP.clone(max_line_length=998)


def _message(to: str, notice: Notice) -> EmailMessage:
    msg = EmailMessage(policy=_MAIL_POLICY)
    sender = os.environ.get(FROM_ENV) or f"sitemap-audit@{socket.getfqdn() or 'localhost'}"
    msg["Subject"] = notice.headline()
    msg["From"] = sender
    msg["To"] = to
    msg["Date"] = formatdate(localtime=True)
    # the sender's domain, not a lookup of this host's name
    domain = sender.rpartition("@")[2].strip(" >") or "localhost"
    msg["Message-ID"] = make_msgid(idstring="sitemap-audit", domain=domain)
    body = notice.text() + "\n\n" + json.dumps(notice.summary, indent=2, ensure_ascii=False)
    msg.set_content(body + "\n")
    return msg


def _mail(to: str, notice: Notice, smtp: str) -> None:
    host, port = parse_smtp(smtp)
    user, password = map(os.environ.get, SMTP_ENV)
    try:
        with smtplib.SMTP(host, port, timeout=TIMEOUT) as server:
            server.ehlo()
            if server.has_extn("starttls"):
                server.starttls()
                server.ehlo()
            if user and password:
                server.login(user, password)
            server.send_message(_message(to, notice))
    except (smtplib.SMTPException, OSError) as exc:
        raise NotifyError(f"--notify mailto:{to}: mail through {smtp} failed: {exc}") from None
