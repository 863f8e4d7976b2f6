"""A real nginx serving a directory on 127.0.0.1, for tests of static sites.

nginx answers as a static host does in production: Last-Modified from each file's
mtime, an ETag of mtime and size, `304 Not Modified` to If-None-Match and
If-Modified-Since, 404 for a missing file, and its access log says what was asked.
`make test` installs Debian's nginx (as root with apt-get, as on CI); CI sets
REQUIRE_NGINX so that a missing nginx fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["NGINX", "Nginx", "nginx_or_skip"]

NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
)


def nginx_or_skip() -> str:
    if NGINX is None:
        if os.environ.get("REQUIRE_NGINX"):
            pytest.fail("nginx is required here (REQUIRE_NGINX) but is not installed")
        pytest.skip("nginx is not installed (make test installs it as root)")
    return NGINX


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Nginx:
    """nginx serving `root` on a free loopback port until `stop()`."""

    def __init__(self, root: Path, work: Path, *, extra: str = "") -> None:
        self.root = root
        self.work = work
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = work / "access.log"
        conf = work / "nginx.conf"
        conf.write_text(
            f"""
daemon off;
master_process off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 256; }}
http {{
    types {{ text/html html; application/xml xml; text/plain txt; }}
    default_type application/octet-stream;
    access_log {self.log} combined;
    client_body_temp_path {work}/tmp;
    proxy_temp_path {work}/tmp;
    fastcgi_temp_path {work}/tmp;
    uwsgi_temp_path {work}/tmp;
    scgi_temp_path {work}/tmp;
    server {{
        listen 127.0.0.1:{self.port};
        root {root};
        {extra}
    }}
}}
""",
            encoding="utf-8",
        )
        (work / "tmp").mkdir(exist_ok=True)
        self.proc = subprocess.Popen(
            [nginx_or_skip(), "-c", str(conf), "-p", str(work)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(200):  # bounded: 10 s
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        err = self.proc.stderr.read().decode() if self.proc.stderr else ""
        self.stop()
        raise RuntimeError(f"nginx did not start: {err}")

    def requests(self) -> list[tuple[str, str, int]]:
        """(method, path, status) of every request logged so far."""
        out = []
        if not self.log.exists():
            return out
        for line in self.log.read_text(encoding="utf-8").splitlines():
            try:
                request = line.split('"')[1]
                status = int(line.split('"')[2].split()[0])
            except (IndexError, ValueError):
                continue
            method, path = request.split()[:2]
            out.append((method, path, status))
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def serving(root: Path, work: Path, *, extra: str = "") -> Iterator[Nginx]:
    """A generator for a fixture: nginx serving `root`, stopped at the end."""
    server = Nginx(root, work, extra=extra)
    try:
        yield server
    finally:
        server.stop()
