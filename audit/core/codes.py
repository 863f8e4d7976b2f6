"""The finding codes of RULES.md: code -> severity and what to fix.

This table is the single source of truth for severities; the validator, the URL
checks and the report writers (SARIF rules, markdown help) all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from audit.core.severity import Severity


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    severity: Severity
    summary: str


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741

_TABLE: tuple[tuple[str, Severity, str], ...] = (
    # Discovery and fetching sitemaps
    (
        "robots-unreachable",
        E,
        "robots.txt answers 5xx/429, times out or cannot be reached: the host is treated as disallowed",
    ),
    ("robots-missing", I, "robots.txt answers 4xx: everything is allowed"),
    ("robots-no-sitemap", I, "robots.txt declares no Sitemap: line"),
    ("sitemap-not-found", E, "no sitemap could be discovered, or a declared one answers 404/410"),
    ("sitemap-http-error", E, "the sitemap answers a non-2xx status or fails at network level"),
    ("sitemap-redirected", W, "the sitemap URL redirects; submit the final URL"),
    ("sitemap-robots-blocked", E, "the sitemap URL itself is disallowed by robots.txt"),
    ("sitemap-content-type", W, "Content-Type is not an XML, text or gzip type"),
    ("sitemap-is-html", E, "an HTML page was served where a sitemap was expected"),
    ("sitemap-gzip-invalid", E, "gzip data that is corrupt or truncated"),
    ("sitemap-xml-malformed", E, "the document is not well-formed XML"),
    (
        "sitemap-leading-whitespace",
        E,
        "something other than a UTF-8 BOM precedes the XML declaration",
    ),
    ("sitemap-doctype", W, "a DOCTYPE or entity declaration (never expanded, never fetched)"),
    ("sitemap-encoding", E, "the document is not UTF-8"),
    ("sitemap-root-invalid", E, "the root element is not urlset or sitemapindex (nor RSS/Atom)"),
    (
        "sitemap-namespace",
        E,
        "missing or wrong sitemap namespace http://www.sitemaps.org/schemas/sitemap/0.9",
    ),
    ("sitemap-too-many-urls", E, "more than 50,000 entries in one sitemap"),
    ("sitemap-too-large", E, "more than 52,428,800 bytes uncompressed"),
    ("sitemap-near-limit", W, "over 90% of the entry or size limit"),
    ("sitemap-empty", W, "the sitemap has no entries"),
    ("index-nested", E, "a sitemap index lists another sitemap index"),
    ("index-loop", E, "a sitemap is reached again through its own descendants"),
    ("element-unknown", W, "an undefined, unqualified, repeated or out-of-order element"),
    ("text-sitemap-invalid-line", E, "a line of a text sitemap is not one absolute URL"),
    # Entries
    ("loc-missing", E, "an entry without a <loc>, or an empty one"),
    ("loc-relative", E, "<loc> is not an absolute http(s) URL"),
    ("loc-invalid", E, "<loc> is not a valid RFC 3986 http(s) URI"),
    ("loc-too-long", E, "<loc> is longer than 2,048 characters"),
    ("loc-whitespace", W, "leading or trailing whitespace inside <loc>"),
    ("loc-not-encoded", W, "non-ASCII characters in <loc> are not percent-encoded"),
    ("loc-cross-host", E, "<loc> is on another host, scheme or port than the sitemap"),
    ("loc-outside-path", E, "<loc> is not under the directory of the sitemap file"),
    ("loc-duplicate", W, "the same URL is listed more than once"),
    ("loc-fragment", W, "the URL has a #fragment, which search engines ignore"),
    ("lastmod-invalid", E, "<lastmod> is not a valid W3C Datetime with a timezone"),
    ("lastmod-imprecise", W, "<lastmod> is valid W3C Datetime but rejected by the official XSD"),
    ("lastmod-future", W, "<lastmod> is later than the time of the audit"),
    ("lastmod-missing", I, "entries without <lastmod>"),
    (
        "lastmod-uniform",
        W,
        "nearly every <lastmod> is the same day: search engines will distrust it",
    ),
    (
        "changefreq-invalid",
        E,
        "<changefreq> is not always/hourly/daily/weekly/monthly/yearly/never",
    ),
    ("priority-invalid", E, "<priority> is not a decimal from 0.0 to 1.0"),
    ("priority-uniform", I, "every URL has the same <priority>"),
    ("image-loc-missing", E, "<image:image> without <image:loc>"),
    ("image-too-many", E, "more than 1,000 images for one URL"),
    ("image-deprecated-tag", W, "image:caption/title/geo_location/license are deprecated"),
    ("video-required-missing", E, "<video:video> lacks a required child"),
    ("video-invalid-value", E, "a <video:video> value is out of range or malformed"),
    (
        "news-required-missing",
        E,
        "<news:news> lacks publication name/language, publication_date or title",
    ),
    ("news-too-many", E, "more than 1,000 <news:news> URLs in one sitemap"),
    ("news-stale", W, "news publication_date is older than two days"),
    ("news-invalid-value", E, "news language is not an ISO 639 code, or a bad date"),
    (
        "hreflang-invalid",
        E,
        "hreflang is not a valid language(-region) or x-default, or href is not absolute",
    ),
    ("hreflang-missing-self", E, "a URL with alternates does not list itself"),
    ("hreflang-not-reciprocal", E, "A names B as an alternate but B does not name A"),
    # URL checks
    ("url-redirect", W, "the URL redirects; the sitemap should list the final URL"),
    ("url-redirect-chain", W, "more than one redirect hop"),
    ("url-redirect-loop", E, "the redirect chain loops or exceeds 10 hops"),
    ("url-redirect-error", E, "the redirect chain ends in an error or has no usable Location"),
    ("url-not-found", E, "the URL answers 404 or 410"),
    ("url-client-error", E, "the URL answers a 4xx status"),
    ("url-bot-blocked", W, "a bot challenge (CDN/WAF) blocked the auditor; the page may be fine"),
    ("url-server-error", E, "the URL answers 5xx after retries"),
    ("url-rate-limited", W, "the URL still answers 429 after retries"),
    ("url-unreachable", E, "DNS, connection, TLS failure or timeout after retries"),
    ("url-robots-blocked", E, "the URL is disallowed by robots.txt for the configured agent"),
    ("url-noindex", E, "X-Robots-Tag or meta robots says noindex"),
    ("url-canonical-mismatch", W, "rel=canonical names another URL"),
    ("url-soft-404", W, "a 200 page that reads as not found"),
    ("url-slow", W, "the response took longer than the threshold"),
    (
        "lastmod-stale",
        W,
        "Last-Modified is later than <lastmod>: the sitemap under-reports changes",
    ),
    ("lastmod-ahead", W, "<lastmod> is later than Last-Modified"),
    ("last-modified-dynamic", I, "Last-Modified is always the time of the request"),
    (
        "last-modified-deploy",
        I,
        "the host's Last-Modified is a deploy stamp (one time for most pages), not a content date",
    ),
    # lastmod over time (--state, second and later runs; RULES.md)
    (
        "lastmod-frozen",
        W,
        "the page's content changed since the previous run but its <lastmod> did not",
    ),
    (
        "lastmod-churn",
        W,
        "<lastmod> moved since the previous run but the page's content did not (a build stamp)",
    ),
    (
        "lastmod-page-date",
        W,
        "the page's own modification date (JSON-LD dateModified, article:modified_time) is "
        "more than one day away from <lastmod>",
    ),
    # What each bot sees (--agents; url-empty-shell with --page-checks; RULES.md)
    ("agent-blocked", I, "robots.txt disallows a named agent (--agents) from listed URLs"),
    ("agent-noindex", I, "X-Robots-Tag or robots meta says noindex for a named agent"),
    (
        "url-empty-shell",
        W,
        "a 200 HTML page with almost no visible text that loads scripts (an app shell)",
    ),
    # Migration checks (`sitemap-audit migrate OLD NEW`): every old URL on the new site
    ("migrate-not-found", E, "the old URL answers 404 or 410 on the new site"),
    (
        "migrate-temporary-redirect",
        W,
        "the old URL redirects with 302/303/307; a migration needs 301 or 308",
    ),
    ("migrate-chain", W, "more than one redirect hop from the old URL to its new page"),
    ("migrate-wrong-target", E, "the old URL lands on a 200 that is not its expected new URL"),
    (
        "migrate-to-homepage",
        E,
        "the old URL redirects to the new home page (search engines read it as a soft 404)",
    ),
    (
        "migrate-lost",
        E,
        "the old URL ends in an error, no answer, a redirect loop or off the new origin",
    ),
    ("migrate-noindex", E, "the old URL's new page says noindex (X-Robots-Tag)"),
    ("migrate-robots-blocked", E, "robots.txt of the new site disallows the old URL or its target"),
    ("migrate-not-in-new-sitemap", W, "the old URL's new page is not listed in the new sitemap"),
    ("migrate-new-sitemap-redirect", W, "a URL of the new sitemap redirects; list final URLs"),
)

CODES: dict[str, Code] = {c: Code(c, s, d) for c, s, d in _TABLE}


def severity_of(code: str) -> Severity:
    """Severity of a registered code; unknown codes are a programming error."""
    return CODES[code].severity
