"""Per-URL verdicts: what a search engine sees in one answer.

`response` (a FetchResult -> the "URL checks" findings of RULES.md),
`page` (--page-checks: noindex, canonical, soft 404 from the HTML head),
`htmlhead` (the streaming <head> reader) and `botsigs` (CDN and WAF
challenge signatures). Pure: they judge records and bytes and send nothing.
"""
