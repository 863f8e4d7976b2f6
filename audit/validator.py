"""Protocol validator: entries in, findings out (RULES.md 'Entries' and counts).

Pure and synchronous: imports nothing of HTTP or asyncio. (Interface contract;
implementation owned by the validator work.)

    seen = SeenUrls()                               # one per run: loc-duplicate across sitemaps
    hreflang = HreflangGraph()                      # one per run: reciprocity across sitemaps
    v = SitemapValidator(source, sitemap_url=url_or_None, now=datetime_utc,
                         seen=seen, hreflang=hreflang,
                         cross_submitted=lambda loc: False)
    v.check(entry) -> list[Finding]                 # per entry, as it streams past
    v.finish(parser) -> list[Finding]               # per sitemap: counts, uniformity, empty
    hreflang.finish() -> list[Finding]              # end of run: hreflang-not-reciprocal
"""
