"""`make demo`: serve the bundled demo site on 127.0.0.1 and audit it.

A newcomer with no network sees the main job work: the fixture server runs
in a background thread, `crawl` runs against it exactly as it would against a
real site, the report is printed, and an HTML report is written beside it.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

from audit.cli.main import main as cli_main
from audit.fixtures.server import run_server

DEMO_SITE = Path(__file__).resolve().parents[2] / "fixtures" / "demo"  # audit/cli/ -> repo
OUT_DIR = Path("demo-out")


class ServerThread(threading.Thread):
    """The fixture server on its own event loop, so the CLI can run its own."""

    def __init__(self, site: Path) -> None:
        super().__init__(daemon=True)
        self.site = site
        self.base_url = ""
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._error: BaseException | None = None

    def run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._runner, self.base_url = self._loop.run_until_complete(run_server(self.site))
        except BaseException as exc:  # reported by start_and_wait
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())

    def start_and_wait(self) -> str:
        self.start()
        self._ready.wait(30)
        if not self.base_url:  # (run sets it only once the server is up, never after an error)
            raise RuntimeError(f"the demo server did not start: {self._error}")
        return self.base_url

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self.join(10)


def main() -> int:
    server = ServerThread(DEMO_SITE)
    base = server.start_and_wait()
    OUT_DIR.mkdir(exist_ok=True)
    jsonl = OUT_DIR / "report.jsonl"
    html = OUT_DIR / "report.html"
    try:
        print(
            f"Demo site served on {base}/ (fixtures/demo, planted problems listed in its README)\n"
        )
        # the command printed is the command run: the README's demo block is checked against it
        crawl = ["crawl", f"{base}/", "--links", "--rate", "50", "--slow", "1"]
        crawl += ["--format", "jsonl", "--output", str(jsonl)]
        print(f"$ sitemap-audit {' '.join(crawl)}", flush=True)
        status = cli_main(crawl)
        print(f"(exit status {status}: 1 means findings at or above --fail-on error, as planted)\n")
        print(f"$ sitemap-audit report {jsonl} --format text", flush=True)
        cli_main(["report", str(jsonl), "--format", "text"])
        cli_main(["report", str(jsonl), "--format", "html", "--output", str(html)])
        print(f"\nHTML report: {html.resolve()}")
        print(f"\n$ sitemap-audit inspect {base}/sitemap_index.xml", flush=True)
        cli_main(["inspect", f"{base}/sitemap_index.xml"])
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
