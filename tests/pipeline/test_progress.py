"""The progress bar tells the truth while sitemaps are still streaming: the total is
shown as still growing, with no percentage and no ETA; once every sitemap is read the
bar has its real total."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable

from audit.api import Audit
from audit.core.config import CrawlConfig
from audit.pipeline.progress import BarProgress
from tests.crawlkit import HTML, XML, Serve, Site, index, urlset


def _last_frame(text: str) -> str:
    """The bar as last drawn (tqdm redraws with carriage returns)."""
    return re.split(r"[\r\n]+", text.strip())[-1]


def test_a_growing_total_shows_no_percentage_and_no_eta() -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        bar = BarProgress("checked")
        bar.add_total(60_046)
        bar.advance(20_692)
        bar.sitemap_done()
        streaming = _last_frame(err.getvalue())
        bar.close()
    assert "%" not in streaming and "<" not in streaming, streaming  # no share, no ETA
    assert "60,046+ listed so far" in streaming, streaming
    assert "20692" in streaming.replace(",", ""), streaming


def test_the_total_is_fixed_once_every_sitemap_is_read_and_grows_again_after() -> None:
    err = io.StringIO()
    bar = BarProgress("checked", file=err)
    bar.add_total(100)
    bar.advance(40)
    bar.listing_done()
    known = _last_frame(err.getvalue())
    assert "40%" in known and "40/100" in known and "so far" not in known, known
    bar.add_total(50)  # the next target's sitemaps start streaming
    again = _last_frame(err.getvalue())
    assert "%" not in again and "150+ listed so far" in again, again
    bar.close()


class Recording(BarProgress):
    """The real bar, also noting whether the total was known at each call."""

    def __init__(self) -> None:
        super().__init__("checked", file=io.StringIO())
        self.calls: list[tuple[str, bool]] = []

    def add_total(self, n: int) -> None:
        super().add_total(n)
        self.calls.append(("add", self._growing))

    def listing_done(self) -> None:
        super().listing_done()
        self.calls.append(("done", self._growing))


async def test_the_pipeline_says_when_the_listing_is_done(
    serve: Serve, fast_config: Callable[..., CrawlConfig]
) -> None:
    """A real crawl of an index and two children: every URL is added while the total is
    growing, and the listing ends once, after the last of them."""
    site = Site()
    base = await serve(site)
    for name, n in (("a", 3), ("b", 4)):
        site.routes[f"/{name}.xml"] = (200, XML, urlset(*(f"{base}/{name}/{i}" for i in range(n))))
        for i in range(n):
            site.routes[f"/{name}/{i}"] = (200, HTML, "<p>ok</p>")
    site.routes["/index.xml"] = (200, XML, index(f"{base}/a.xml", f"{base}/b.xml"))
    progress = Recording()
    run = Audit(f"{base}/index.xml", fast_config(), progress=progress)
    await run.run()
    run.finish()
    progress.close()
    assert progress.calls[-1] == ("done", False)
    assert [c for c in progress.calls if c[0] == "done"] == [("done", False)]
    assert progress.calls[:-1] == [("add", True)] * 7


def test_a_listing_without_urls_keeps_the_total_unknown() -> None:
    err = io.StringIO()
    bar = BarProgress("entries", file=err)
    bar.advance(49)
    bar.sitemap_done()
    bar.listing_done()
    bar.close()
    assert "%" not in _last_frame(err.getvalue()) and "49" in err.getvalue()
