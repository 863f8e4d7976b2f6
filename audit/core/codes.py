"""The finding codes of RULES.md: code -> severity and what to fix.

This table is the single source of truth for severities; the validator, the URL
checks and the report writers (SARIF rules, markdown help) all read it. Each code also
carries how to fix it and the name Search Console gives the same problem, if any:
`sitemap-audit codes` and the generated docs/codes.md list them. Imports only core.
"""

from __future__ import annotations

from dataclasses import dataclass

from audit.core.severity import Severity


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    severity: Severity
    summary: str
    fix: str = ""  # what a site owner does about it
    search_console: str | None = None  # Search Console's name for the same problem


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
    ("sitemap-xml-malformed", E, "the document is not well-formed XML, or empty (no document)"),
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
    ("sitemap-empty", W, "the sitemap has a root element but no entries"),
    ("index-nested", E, "a sitemap index lists another sitemap index"),
    ("index-loop", E, "a sitemap is reached again through its own descendants"),
    # Index <lastmod> truth (contracts/nights.md 4; -frozen and -churn need --state)
    (
        "index-lastmod-behind",
        W,
        "a sitemap index entry's <lastmod> is earlier than the newest <lastmod> in its child: "
        "the index under-reports the child's changes",
    ),
    (
        "index-lastmod-now",
        W,
        "every <lastmod> of a sitemap index (2 entries or more, all with a time) is within 60 s "
        "of the time it was served: generated on the fly (replaces lastmod-uniform)",
    ),
    (
        "index-lastmod-frozen",
        W,
        "--state: the child's entries changed since the previous run but the index entry's "
        "<lastmod> did not move",
    ),
    (
        "index-lastmod-churn",
        W,
        "--state: the index entry's <lastmod> moved but the child's entries are identical",
    ),
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
    # Across nights: the published-URL ledger (--state; nights.md section 2)
    (
        "url-dropped-redirect",
        I,
        "a URL listed before and not tonight redirects permanently (301/308) to a page: a "
        "correct removal",
    ),
    (
        "url-dropped-gone",
        I,
        "a URL listed before and not tonight answers 410 (or 404 under a `gone` intent)",
    ),
    ("url-dropped-404", W, "a URL listed before and not tonight is now broken (404)"),
    (
        "url-dropped-to-home",
        W,
        "a URL listed before and not tonight redirects to the home page: a soft 404",
    ),
    (
        "url-dropped-temporary",
        W,
        "a URL listed before and not tonight reaches a page through a temporary redirect",
    ),
    (
        "url-dropped-live",
        W,
        "a URL listed before and not tonight still answers 200 and is indexable: the sitemap "
        "lost a live page",
    ),
    (
        "url-dropped-error",
        W,
        "a URL listed before and not tonight ends in another 4xx, a 5xx or no answer",
    ),
    (
        "lastmod-page-date",
        W,
        "the page's own modification date (JSON-LD dateModified, article:modified_time) is "
        "more than one day away from <lastmod>",
    ),
    # What each bot sees (--agents; url-empty-shell with --page-checks; RULES.md)
    ("agent-blocked", I, "robots.txt disallows a named agent (--agents) from listed URLs"),
    ("agent-noindex", I, "an X-Robots-Tag or robots meta scoped to a named agent says noindex"),
    (
        "url-empty-shell",
        W,
        "a 200 HTML page with almost no visible text that loads scripts (an app shell)",
    ),
    # What each agent is served and may use (--agents-fetch, usage signals; contracts/agents.md)
    (
        "agent-served-differently",
        W,
        "sampled listed URLs answer 200 to the main agent and another status class to an agent",
    ),
    (
        "agent-challenged",
        W,
        "sampled listed URLs answer 403, 429 or 503 to an agent (a WAF, challenge or rate limit)",
    ),
    (
        "agent-payment-required",
        I,
        "sampled listed URLs answer 402 with a crawler-price header to an agent (pay-per-crawl)",
    ),
    (
        "agent-shell-only",
        W,
        "sampled listed URLs give an agent an empty app shell where the main agent got text",
    ),
    (
        "usage-contradiction",
        W,
        "robots.txt usage signals say yes to a use for agents it disallows from the whole site",
    ),
    # llms.txt (crawl --llms; contracts/agents.md)
    (
        "llms-link-broken",
        W,
        "an llms.txt link answers 4xx/5xx, fails, or redirects to such an answer",
    ),
    ("llms-link-redirect", W, "an llms.txt link redirects to a 2xx answer: link the final URL"),
    ("llms-link-noindex", W, "an llms.txt link answers 200 with noindex for the main agent"),
    ("llms-md-html", W, "an llms.txt link to a .md markdown twin answers 200 with HTML"),
    (
        "llms-link-not-in-sitemap",
        I,
        "an llms.txt link answers 200 with an indexable page that no audited sitemap lists",
    ),
    ("llms-link-blocked", W, "robots.txt disallows an llms.txt link for the main or a named agent"),
    ("llms-invalid", W, "an llms.txt breaks the llmstxt.org shape (H1 title, link lists)"),
    ("llms-too-large", W, "an llms.txt is longer than 50,000 characters: agents truncate it"),
    ("llms-html-shell", E, "/llms.txt or /llms-full.txt answers 200 with HTML (an app shell)"),
    # Site coverage (crawl --links; RULES.md)
    (
        "url-orphan",
        W,
        "a listed, indexable URL that no crawled page links to (the link crawl was complete)",
    ),
    ("page-not-in-sitemap", W, "an indexable page reached by links that no audited sitemap lists"),
    ("link-broken", W, "an internal link answers 4xx/5xx or fails (once per target)"),
    (
        "coverage-incomplete",
        W,
        "the link crawl stopped before its frontier was empty: orphan verdicts withheld",
    ),
    # Raw HTML against the rendered page (crawl --render; contracts/render.md)
    (
        "render-noindex-raw-only",
        E,
        "the raw HTML says noindex, the rendered page does not: Google never renders it",
    ),
    ("render-noindex-added", E, "a script adds noindex: Google renders the page and drops it"),
    ("render-canonical-changed", W, "the rendered canonical differs from the raw HTML's"),
    ("render-title-changed", W, "the rendered title differs from the raw HTML's"),
    ("render-links-only", W, "internal links that exist only after rendering (JS-only links)"),
    (
        "render-content-only",
        W,
        "an empty shell whose content exists only after rendering (200+ characters)",
    ),
    ("render-hreflang-changed", W, "the rendered hreflang alternates differ from the raw HTML's"),
    ("render-js-redirect", W, "the page loads another URL by itself (script or meta refresh)"),
    ("render-failed", I, "the page could not be rendered (timeout, error status, crash)"),
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
    # --intent (contracts/nights.md section 3)
    (
        "intent-violated",
        E,
        "a URL does not do what its --intent row says (keep, redirect, gone)",
    ),
    # --budget (contracts/manysites.md)
    (
        "budget-unchecked",
        I,
        "a budgeted run (--budget) leaves listed URLs that no run on this state has checked yet",
    ),
    # crawl --indexnow (contracts/fix.md)
    (
        "indexnow-key-invalid",
        E,
        "--indexnow: the key file ORIGIN/KEY.txt does not answer 200 with exactly the key: "
        "nothing of that origin is submitted",
    ),
    (
        "indexnow-rejected",
        E,
        "--indexnow: the endpoint refused a POST (4xx other than 429) or still failed after "
        "the retries: its URLs are sent again next run",
    ),
)

# How to fix each code: one or two sentences a site owner can act on (`sitemap-audit codes`,
# docs/codes.md). A code added to the table above needs its line here too (a test says so).
_FIX: dict[str, str] = {
    "robots-unreachable": "Make /robots.txt answer 200 (or 404 if you have none) quickly and "
    "reliably; crawlers stop crawling the whole host while it fails.",
    "robots-missing": "Nothing is required; publish a /robots.txt with a Sitemap: line if you "
    "want crawlers to find your sitemaps on their own.",
    "robots-no-sitemap": "Add a `Sitemap: https://.../sitemap.xml` line to robots.txt for each "
    "sitemap or sitemap index.",
    "sitemap-not-found": "Publish the sitemap at the URL you declare (robots.txt, Search Console) "
    "or correct the declared URL.",
    "sitemap-http-error": "Make the sitemap URL answer 200; check server errors, access rules "
    "and firewalls for crawler requests.",
    "sitemap-redirected": "Declare and submit the final URL of the sitemap instead of one that "
    "redirects.",
    "sitemap-robots-blocked": "Remove or narrow the robots.txt Disallow rule that matches the "
    "sitemap URL.",
    "sitemap-content-type": "Serve the sitemap as application/xml (or text/xml, text/plain for "
    "a text sitemap, application/gzip for .gz).",
    "sitemap-is-html": "Point the declared URL at the XML sitemap itself, not at an HTML page, "
    "login screen or error page.",
    "sitemap-gzip-invalid": "Regenerate the .gz file and make sure the server does not compress "
    "it a second time or cut it short.",
    "sitemap-xml-malformed": "Fix the XML at the reported line and column: escape & as &amp;, "
    "avoid HTML entities such as &nbsp;, close every tag. An empty file: regenerate it (the "
    "generator that wrote it failed).",
    "sitemap-leading-whitespace": "Remove everything before <?xml (blank lines, spaces, output "
    "of a template or plugin); only a UTF-8 BOM may precede it.",
    "sitemap-doctype": "Remove the DOCTYPE and entity declarations; sitemaps need none.",
    "sitemap-encoding": 'Write the sitemap in UTF-8 and declare encoding="UTF-8".',
    "sitemap-root-invalid": "Make the root element <urlset> (URLs) or <sitemapindex> (sitemaps).",
    "sitemap-namespace": 'Declare xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" on the '
    "root element, exactly.",
    "sitemap-too-many-urls": "Split the sitemap into files of at most 50,000 entries and list "
    "them in a sitemap index.",
    "sitemap-too-large": "Split the sitemap into files of at most 50 MB uncompressed and list "
    "them in a sitemap index.",
    "sitemap-near-limit": "Split the sitemap before it reaches 50,000 entries or 50 MB.",
    "sitemap-empty": "List the site's URLs in it, or stop declaring it.",
    "index-nested": "List only sitemaps (urlset files) in a sitemap index; submit each index "
    "separately.",
    "index-loop": "Remove the entry that points back to a sitemap above it in the chain.",
    "index-lastmod-behind": "Set each index entry's <lastmod> to the time its child sitemap "
    "last changed (the newest <lastmod> of its entries).",
    "index-lastmod-now": "Give each index entry the time its child last changed, not the time "
    "the index is generated.",
    "index-lastmod-frozen": "Update the index entry's <lastmod> whenever its child's entries "
    "change (Bing may skip a child whose <lastmod> does not move).",
    "index-lastmod-churn": "Move the index entry's <lastmod> only when its child's entries "
    "change, not on every build.",
    "element-unknown": "Use only the protocol's elements, in the order of the XSD, each once, "
    "in the sitemap namespace (extensions in their own namespaces).",
    "text-sitemap-invalid-line": "Put exactly one absolute URL on each line of a text sitemap, "
    "nothing else.",
    "loc-missing": "Give every <url> and <sitemap> entry one non-empty <loc>.",
    "loc-relative": "Write the full URL in <loc>, with scheme and host (https://www.example.com/"
    "page).",
    "loc-invalid": "Percent-encode spaces and special characters and check the host and port "
    "of the URL.",
    "loc-too-long": "Shorten the URL to at most 2,048 characters.",
    "loc-whitespace": "Remove spaces and line breaks around the URL inside <loc>.",
    "loc-not-encoded": "Percent-encode non-ASCII characters in <loc> (UTF-8, then %XX).",
    "loc-cross-host": "List only URLs of the sitemap's own scheme, host and port, or declare "
    "the sitemap in the other host's robots.txt (cross-submission).",
    "loc-outside-path": "Move the sitemap to the site root (or a directory above the URLs) so "
    "every listed URL is under its directory.",
    "loc-duplicate": "List each URL once across all sitemaps.",
    "loc-fragment": "Remove the #fragment; list the URL of the page itself.",
    "lastmod-invalid": "Write <lastmod> as W3C Datetime: YYYY-MM-DD, or a full time with "
    "seconds and a timezone (2024-05-01T12:00:00+00:00).",
    "lastmod-imprecise": "Give a full date (YYYY-MM-DD) or a time with seconds and timezone.",
    "lastmod-future": "Set <lastmod> to when the page really changed, never later than now; "
    "check the generator's clock and timezone.",
    "lastmod-missing": "Add <lastmod> with the date each page's content last changed.",
    "lastmod-uniform": "Set <lastmod> from each page's real content change, not from the time "
    "the sitemap is generated or deployed.",
    "changefreq-invalid": "Use one of always, hourly, daily, weekly, monthly, yearly, never, or "
    "drop <changefreq> (Google ignores it).",
    "priority-invalid": "Use a decimal from 0.0 to 1.0, or drop <priority> (Google ignores it).",
    "priority-uniform": "Drop <priority>, or set values that differ; the same value everywhere "
    "says nothing.",
    "image-loc-missing": "Give every <image:image> an <image:loc>.",
    "image-too-many": "List at most 1,000 images for one URL.",
    "image-deprecated-tag": "Remove image:caption, image:title, image:geo_location and "
    "image:license; Google no longer reads them.",
    "video-required-missing": "Add the missing child: thumbnail_loc, title, description, and "
    "content_loc or player_loc.",
    "video-invalid-value": "Correct the value named in the finding to the range or form of the "
    "video sitemap specification.",
    "news-required-missing": "Add <news:publication> with name and language, "
    "<news:publication_date> and <news:title>.",
    "news-too-many": "Keep at most 1,000 URLs in a news sitemap; move older articles out.",
    "news-stale": "Keep only articles of the last two days in the news sitemap.",
    "news-invalid-value": "Use an ISO 639 language code and a W3C Datetime publication date.",
    "hreflang-invalid": "Use an ISO 639-1 language, optionally -region (ISO 3166-1 alpha-2), or "
    "x-default, and absolute href URLs.",
    "hreflang-missing-self": "Add an alternate link for the URL itself among its alternates.",
    "hreflang-not-reciprocal": "Make each alternate name the other back (A lists B and B lists A).",
    "url-redirect": "List the final URL (the redirect target) in the sitemap instead.",
    "url-redirect-chain": "List the final URL, and make old URLs redirect to it in one hop.",
    "url-redirect-loop": "Fix the redirect rules so the chain ends at a page within 10 hops.",
    "url-redirect-error": "Fix the redirect target (it fails) or the Location header, or remove "
    "the URL from the sitemap.",
    "url-not-found": "Restore the page, redirect it to its replacement, or remove it from the "
    "sitemap.",
    "url-client-error": "Make the page publicly readable (no login, no IP or bot rule), or "
    "remove it from the sitemap.",
    "url-bot-blocked": "Check the CDN or WAF rules; allow the auditor (and search crawlers) or "
    "rerun from an allowed address.",
    "url-server-error": "Fix the server error for this URL (logs at the time of the audit); "
    "crawlers slow down on sites that fail.",
    "url-rate-limited": "Raise the rate limit for crawlers or run the audit with a lower --rate.",
    "url-unreachable": "Check DNS, the TLS certificate and that the server accepts connections "
    "within the timeout.",
    "url-robots-blocked": "Remove the URL from the sitemap, or allow it in robots.txt if it "
    "should be crawled.",
    "url-noindex": "Remove the noindex (X-Robots-Tag header or meta robots), or remove the URL "
    "from the sitemap.",
    "url-canonical-mismatch": "List the canonical URL in the sitemap, or make the page's "
    "canonical point to itself.",
    "url-soft-404": "Answer 404 or 410 for pages that do not exist, and remove them from the "
    "sitemap.",
    "url-slow": "Speed up the page's response (caching, server capacity); slow pages are "
    "crawled less.",
    "lastmod-stale": "Update <lastmod> whenever the page changes (or fix Last-Modified if it "
    "changes without the content).",
    "lastmod-ahead": "Set <lastmod> to the page's real change date (or send a correct "
    "Last-Modified).",
    "last-modified-dynamic": "Send Last-Modified from the content's change date, not the time "
    "of the request (or send none).",
    "last-modified-deploy": "Send Last-Modified from each page's content date rather than the "
    "build time, or rely on <lastmod> alone.",
    "lastmod-frozen": "Update <lastmod> when the page's content changes.",
    "lastmod-churn": "Move <lastmod> only when the page's content changes, not on every build.",
    "url-dropped-redirect": "Nothing to do: the old URL moved permanently; list its target.",
    "url-dropped-gone": "Nothing to do: the page was removed on purpose.",
    "url-dropped-404": "Redirect (301) the removed page to its successor, restore it, or answer "
    "410 if it is gone for good.",
    "url-dropped-to-home": "Redirect the removed page to the page that replaced it, or answer "
    "410; a redirect to the home page reads as a soft 404.",
    "url-dropped-temporary": "Make the redirect permanent (301 or 308).",
    "url-dropped-live": "List the page again if it should be indexed; otherwise redirect it, "
    "noindex it or remove it.",
    "url-dropped-error": "Fix the server's answer for the removed page, or answer 410.",
    "lastmod-page-date": "Make <lastmod> and the page's own modified date agree.",
    "migrate-not-found": "Add a 301 redirect from the old URL to its new page.",
    "migrate-temporary-redirect": "Use a permanent redirect (301 or 308) for the old URL.",
    "migrate-chain": "Redirect the old URL straight to its final new page in one hop.",
    "migrate-wrong-target": "Redirect the old URL to its expected new URL (see --map).",
    "migrate-to-homepage": "Redirect the old URL to its closest new page, or let it answer 410 "
    "if it has none.",
    "migrate-lost": "Make the old URL redirect, in one permanent hop on the new origin, to a "
    "page that answers 200.",
    "migrate-noindex": "Remove the noindex from the new page before launch.",
    "migrate-robots-blocked": "Allow the old URL and its new page in the new site's robots.txt.",
    "migrate-not-in-new-sitemap": "List the old URL's new page in the new sitemap.",
    "migrate-new-sitemap-redirect": "List final URLs in the new sitemap, not ones that redirect.",
    "budget-unchecked": "Nothing to fix on the site: later runs check these URLs first; "
    "raise --budget to cover the site in fewer runs.",
    "intent-violated": "Make the URL do what the plan says (keep: answer 200 and be indexable; "
    "redirect: one or more 301/308 hops to the target, which answers 200; gone: answer 404 "
    "or 410 itself), or correct the row of the intent file.",
    "agent-blocked": "If the agent should read these pages, allow it in robots.txt; if the "
    "block is meant, nothing to do.",
    "agent-noindex": "If the agent should index these pages, remove the noindex scoped to it.",
    "url-empty-shell": "Render the page's main content on the server (server-side rendering or "
    "prerendering) so crawlers without JavaScript see it.",
    "agent-served-differently": "Serve the agent what the main crawler gets, or make the "
    "difference deliberate (a redirect or error rule for that user agent at the edge).",
    "agent-challenged": "If the agent should read the site, let its user agent through the "
    "WAF, bot challenge or rate limit (verify it by its published IP ranges).",
    "agent-payment-required": "Pay-per-crawl charges this agent: nothing to do if meant; "
    "otherwise exempt it in the edge's crawler pricing.",
    "agent-shell-only": "Add the agent's user agent to the prerender allowlist, or render the "
    "content on the server for every client.",
    "usage-contradiction": "Make robots.txt consistent: allow the agents the use is granted "
    "to, or say no to the use.",
    "llms-link-broken": "Fix or remove the link in llms.txt, or restore its target.",
    "llms-link-redirect": "Link the final URL in llms.txt, not one that redirects.",
    "llms-link-noindex": "Remove the noindex from the page, or the link from llms.txt.",
    "llms-md-html": "Serve the .md twin as markdown (text/markdown or text/plain), or link "
    "the HTML page instead.",
    "llms-link-not-in-sitemap": "List the page in a sitemap too (or drop it from llms.txt if "
    "it should not be found).",
    "llms-link-blocked": "Allow the linked URL in robots.txt for the agents llms.txt is for, "
    "or remove the link.",
    "llms-invalid": "Start llms.txt with one '# Title' line and make every list item under "
    "an '## Section' a markdown link (llmstxt.org).",
    "llms-too-large": "Keep llms.txt under 50,000 characters: link sections out, put the "
    "full text in llms-full.txt.",
    "llms-html-shell": "Serve /llms.txt and /llms-full.txt as text/plain or text/markdown "
    "files, before the app's catch-all route.",
    "url-orphan": "Link to the page from at least one crawlable page of the site, or remove it "
    "from the sitemap if it is obsolete.",
    "page-not-in-sitemap": "Add the page to a sitemap (or noindex, canonicalise or remove it if "
    "it should not be indexed).",
    "link-broken": "Fix or remove the link on the linking page, or restore its target.",
    "render-noindex-raw-only": "Remove the noindex from the HTML the server sends (a script "
    "cannot undo it for Google), or keep it there if the page is not meant to be indexed.",
    "render-noindex-added": "Decide whether the page should be indexed and say so in the HTML "
    "the server sends; do not add or rewrite the robots meta with a script.",
    "render-canonical-changed": "Write the intended canonical in the server's HTML and keep "
    "scripts from adding or rewriting it.",
    "render-title-changed": "Send the final title in the server's HTML (server-side rendering "
    "or prerendering); a script's title is only seen by crawlers that render.",
    "render-links-only": "Write the links as <a href> in the server's HTML so crawlers that do "
    "not run JavaScript find the pages.",
    "render-content-only": "Render the page's main content on the server (server-side "
    "rendering or prerendering).",
    "render-hreflang-changed": "Put the hreflang alternates in the server's HTML (or the "
    "sitemap) and keep scripts from changing them.",
    "render-js-redirect": "List the final URL in the sitemap and redirect on the server with a "
    "301 instead of a script or meta refresh.",
    "render-failed": "Make the page load within --render-timeout, answer 2xx to the browser, "
    "or raise --render-timeout; check the page in a browser.",
    "coverage-incomplete": "Raise --max-pages / --max-depth (or let the run finish) to get "
    "orphan verdicts.",
    "indexnow-key-invalid": "Serve a text file at https://HOST/KEY.txt (no redirect) whose only "
    "content is the key given to --indexnow.",
    "indexnow-rejected": "Check the key, the host and the endpoint named in the message; a 429 "
    "or 5xx usually passes on the next run, which sends the same URLs again.",
}

# The name Search Console gives the same problem (Page indexing or Sitemaps report), for
# matching the audit with what a site owner sees there. Only where Search Console has one:
# a code without a counterpart has no entry (never a made-up name).
_SEARCH_CONSOLE: dict[str, str] = {
    "sitemap-not-found": "Couldn't fetch",
    "sitemap-http-error": "Couldn't fetch",
    "sitemap-is-html": "Sitemap is HTML",
    "sitemap-gzip-invalid": "Compression error",
    "sitemap-xml-malformed": "Parsing error",
    "sitemap-leading-whitespace": "Leading whitespace",
    "sitemap-root-invalid": "Unsupported format",
    "sitemap-namespace": "Incorrect namespace",
    "sitemap-too-many-urls": "Too many URLs",
    "sitemap-too-large": "Sitemap file size error",
    "sitemap-empty": "Empty sitemap",
    "index-nested": "Incorrect sitemap index format: Nested sitemap indexes",
    "text-sitemap-invalid-line": "Invalid URL",
    "loc-missing": "Missing XML tag",
    "loc-relative": "Invalid URL",
    "loc-invalid": "Invalid URL",
    "loc-cross-host": "URL not allowed",
    "loc-outside-path": "URL not allowed",
    "lastmod-invalid": "Invalid date",
    "changefreq-invalid": "Invalid tag value",
    "priority-invalid": "Invalid tag value",
    "image-loc-missing": "Missing XML tag",
    "video-required-missing": "Missing XML tag",
    "news-required-missing": "Missing XML tag",
    "news-too-many": "Too many News URLs",
    "url-redirect": "Page with redirect",
    "url-redirect-loop": "Redirect error",
    "url-redirect-error": "Redirect error",
    "url-not-found": "Not found (404)",
    "url-client-error": "Blocked due to unauthorized request (401) / Blocked due to access "
    "forbidden (403) / Blocked due to other 4xx issue",
    "url-server-error": "Server error (5xx)",
    "url-robots-blocked": "Blocked by robots.txt",
    "url-noindex": "Excluded by 'noindex' tag",
    "url-canonical-mismatch": "Alternate page with proper canonical tag",
    "url-soft-404": "Soft 404",
    "migrate-not-found": "Not found (404)",
    "migrate-to-homepage": "Soft 404",
    "migrate-noindex": "Excluded by 'noindex' tag",
    "migrate-robots-blocked": "Blocked by robots.txt",
    "migrate-new-sitemap-redirect": "Page with redirect",
}

CODES: dict[str, Code] = {
    c: Code(c, s, d, _FIX.get(c, ""), _SEARCH_CONSOLE.get(c)) for c, s, d in _TABLE
}

# Where a code is explained for users: docs/codes.md, generated by `sitemap-audit codes
# --format markdown` (one section per code, its anchor the code itself).
DOCS_PATH = "docs/codes.md"


def severity_of(code: str) -> Severity:
    """Severity of a registered code; unknown codes are a programming error."""
    return CODES[code].severity


def search_console_name(code: str) -> str | None:
    """The name Search Console gives the same problem, or None where it has none (and for
    a code not registered: every key of the table is a registered code)."""
    return _SEARCH_CONSOLE.get(code)


def fix_of(code: str) -> str:
    """How to fix a code's problem ('' for a code not registered: every key of the table
    is a registered code)."""
    return _FIX.get(code, "")


def doc_anchor(code: str) -> str:
    """The code's section in the generated docs, relative to the repository root
    (`docs/codes.md#url-not-found`): for report links and SARIF rule help."""
    return f"{DOCS_PATH}#{code}"
