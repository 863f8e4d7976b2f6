"""sitemap-audit: an asynchronous deep-crawl auditor for XML sitemaps."""

__version__ = "0.1.0"
