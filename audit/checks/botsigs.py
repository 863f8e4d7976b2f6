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
_CLOUDFLARE_MARKERS: tuple[tuple[str, str], ...] = tuple(
    (marker, "Cloudflare challenge")
    for marker in (
        "just a moment...",
        "cf-chl",
        "cf_chl_opt",
        "challenge-platform",
        "attention required! | cloudflare",
    )
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
    values: dict[str, list[str]] = {}  # lower-cased, for the signatures below
    for name, value in headers:
        if name in _HEADER_NAMES:  # a blocker named by a header alone
            return f"{_HEADER_NAMES[name]} ({name}: {value.strip()[:60]})"
        if name.startswith("cf-chl"):
            return f"Cloudflare challenge ({name})"
        values.setdefault(name, []).append(value.lower())
    server = values.get("server", [""])[-1]
    body = body_head[:16384].decode("utf-8", "replace").lower()
    # Cloudflare's page markers are trusted only on a 403/503 with its headers
    cloudflare = ("cf-ray" in values or "cloudflare" in server) and status in (403, 503)
    return (
        _marked(_COOKIE_MARKERS, values.get("set-cookie", []), "{vendor} (cookie {name})")
        or _marked(_CLOUDFLARE_MARKERS, [body] if cloudflare else [], _PAGE)
        or _akamai_page(server, body)
        or _marked(_BODY_MARKERS, [body], _PAGE)
    )


_PAGE = "{vendor} (page marker {marker!r})"


def _marked(markers: tuple[tuple[str, str], ...], texts: list[str], label: str) -> str | None:
    """The first (marker, vendor) found in one of `texts`, named by `label`."""
    for text in texts:
        for marker, vendor in markers:
            if marker in text:
                return label.format(vendor=vendor, marker=marker, name=marker.rstrip("="))
    return None


def _akamai_page(server: str, body: str) -> str | None:
    if "reference #" not in body:
        return None
    if "access denied" in body:
        return "Akamai (Access Denied page with a Reference #)"
    if "akamaighost" in server:
        return "Akamai (AkamaiGHost Reference # page)"
    return None
