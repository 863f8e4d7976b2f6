"""Per-URL verdicts: what a search engine sees in one answer.

`verdict` (`judge_url`: an answer -> one `UrlVerdict`, the record, the findings and
indexability as values, computed once; STYLE.md lesson 21),
`response` (a FetchResult -> the "URL checks" findings of RULES.md),
`pagefacts` (a page's one read and one lxml parse, shared by page checks, the
link crawl and content fingerprints; its sinks can be rebuilt in a fetch worker;
`hrefs` resolves a page's links as urllib does, quickly),
`page` (--page-checks: noindex, canonical, soft 404 from the HTML head), `links`
and `coverage` (--links), `content`, `agents`, `llms` (--llms: llms.txt's shape and
links) and `botsigs` (CDN and WAF challenge signatures). Pure: they judge records and bytes and send nothing.
"""
