"""The protocol rules: entries in, findings out.

`validator` (RULES.md "Entries" and the per-sitemap counts) composes one checker per
concern: `locs` (<loc> syntax and scope), `urlkeys` (loc-duplicate), `lastmods`,
`crawlhints` (changefreq, priority), `extensions` (image, video, news, hreflang
entries) and `limits` (counts and sizes), sharing `findings`. Beside it: `urls`
(RFC 3986 syntax and normalisation), `fingerprints` (duplicate fingerprints), `dates`
(W3C and HTTP dates), `langtags` (hreflang codes), `hreflang` (reciprocity across an
audit, spilling to SQLite), `indexlastmod` and `intent`. Pure and synchronous: nothing
here knows HTTP.
"""
