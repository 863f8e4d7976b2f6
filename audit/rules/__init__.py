"""The protocol rules: entries in, findings out.

`validator` (RULES.md "Entries" and the per-sitemap counts), `urls`
(RFC 3986 syntax and normalisation, duplicate fingerprints), `dates` (W3C and
HTTP dates), `langtags` (hreflang codes) and `hreflang` (reciprocity across
an audit, spilling to SQLite). Pure and synchronous: nothing here knows HTTP.
"""
