"""Bot-challenge signatures of common CDNs and WAFs.

A 403/503/429 that carries one of these signatures means the auditor itself
was challenged or blocked by an edge service; the page behind it may well be
fine, so the URL checks report `url-bot-blocked` instead of a plain client or
server error. Pure and synchronous: imports nothing of HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CHALLENGE_STATUSES", "detect_bot_challenge"]

CHALLENGE_STATUSES = frozenset({403, 429, 503})

# Header names whose mere presence on a 403/503/429 identifies the blocker.
_HEADER_NAMES: dict[str, str] = {
    "cf-mitigated": "Cloudflare challenge",
    "x-datadome": "DataDome",
    "x-dd-b": "DataDome",
    "x-iinfo": "Imperva/Incapsula",
    "x-sucuri-id": "Sucuri WebSite Firewall",
    "x-sucuri-block": "Sucuri WebSite Firewall",
    "x-amzn-waf-action": "AWS WAF",
    "x-vercel-mitigated": "Vercel challenge",
}

# Body markers (matched lower-cased). Cloudflare's are only trusted together
# with its headers, because "just a moment" alone is too generic.
_CLOUDFLARE_MARKERS = (
    "just a moment...",
    "cf-chl",
    "cf_chl_opt",
    "challenge-platform",
    "attention required! | cloudflare",
)
_BODY_MARKERS: tuple[tuple[str, str], ...] = (
    ("incapsula incident id", "Imperva/Incapsula"),
    ("_incapsula_resource", "Imperva/Incapsula"),
    ("sucuri website firewall", "Sucuri WebSite Firewall"),
    ("px-captcha", "PerimeterX"),
    ("_pxhd", "PerimeterX"),
    ("captcha-delivery.com", "DataDome"),
    ("attention required! | cloudflare", "Cloudflare"),
)
_COOKIE_MARKERS: tuple[tuple[str, str], ...] = (
    ("_pxhd=", "PerimeterX"),
    ("datadome=", "DataDome"),
    ("incap_ses_", "Imperva/Incapsula"),
)


def detect_bot_challenge(
    status: int | None, headers: Iterable[tuple[str, str]], body_head: bytes = b""
) -> str | None:
    """Name the CDN/WAF whose challenge answered, or None.

    `headers` are (lower-case name, value) pairs as in FetchResult.
    """
    if status not in CHALLENGE_STATUSES:
        return None
    named, server, cf_ray, cookies = _scan_headers(headers)
    if named is not None:
        return named
    return _cookie_signature(cookies) or _body_signature(status, server, cf_ray, body_head)


def _scan_headers(headers: Iterable[tuple[str, str]]) -> tuple[str | None, str, bool, list[str]]:
    """A blocker named by a header alone, else what the later signatures need: the Server
    value (lower-cased), whether a CF-Ray came, and the Set-Cookie values (lower-cased)."""
    server = ""
    cf_ray = False
    cookies: list[str] = []
    for name, value in headers:
        if name in _HEADER_NAMES:
            return f"{_HEADER_NAMES[name]} ({name}: {value.strip()[:60]})", server, cf_ray, cookies
        if name.startswith("cf-chl"):
            return f"Cloudflare challenge ({name})", server, cf_ray, cookies
        if name == "server":
            server = value.lower()
        elif name == "cf-ray":
            cf_ray = True
        elif name == "set-cookie":
            cookies.append(value.lower())
    return None, server, cf_ray, cookies


def _cookie_signature(cookies: list[str]) -> str | None:
    for cookie in cookies:
        for marker, vendor in _COOKIE_MARKERS:
            if marker in cookie:
                return f"{vendor} (cookie {marker.rstrip('=')})"
    return None


def _body_signature(status: int, server: str, cf_ray: bool, body_head: bytes) -> str | None:
    body = body_head[:16384].decode("utf-8", "replace").lower() if body_head else ""
    return (
        _cloudflare_page(status, server, cf_ray, body)
        or _akamai_page(server, body)
        or _vendor_page(body)
    )


def _vendor_page(body: str) -> str | None:
    for marker, vendor in _BODY_MARKERS:
        if marker in body:
            return f"{vendor} (page marker {marker!r})"
    return None


def _cloudflare_page(status: int, server: str, cf_ray: bool, body: str) -> str | None:
    """Cloudflare's page markers, trusted only on a 403/503 with its headers."""
    if not (cf_ray or "cloudflare" in server) or status not in (403, 503):
        return None
    marker = next((m for m in _CLOUDFLARE_MARKERS if m in body), None)
    return None if marker is None else f"Cloudflare challenge (page marker {marker!r})"


def _akamai_page(server: str, body: str) -> str | None:
    if "reference #" not in body:
        return None
    if "access denied" in body:
        return "Akamai (Access Denied page with a Reference #)"
    if "akamaighost" in server:
        return "Akamai (AkamaiGHost Reference # page)"
    return None
