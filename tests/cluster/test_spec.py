"""`--cluster SPEC` (audit/cluster/spec.py): local:N or tcp://HOST:PORT, and the runs a
cluster cannot do, refused in one line. No Dask needed."""

from __future__ import annotations

import pytest

from audit.cluster.spec import MAX_LOCAL_WORKERS, check_config, parse_spec
from audit.core.config import CrawlConfig
from audit.core.errors import TargetError


def test_spec_parsing() -> None:
    assert parse_spec("local:2").workers == 2
    assert parse_spec("tcp://10.0.0.5:8786").address == "tcp://10.0.0.5:8786"
    for bad in ("local:0", "local:x", "tcp://host", "udp://h:1", "h:1"):
        with pytest.raises(ValueError):
            parse_spec(bad)


def test_the_spec_s_parts() -> None:
    local = parse_spec(f" local:{MAX_LOCAL_WORKERS} ")
    assert (local.workers, local.address) == (MAX_LOCAL_WORKERS, None)
    remote = parse_spec("tcp://scheduler.internal:8786/")
    assert (remote.workers, remote.address) == (None, "tcp://scheduler.internal:8786")
    for bad, why in [
        (f"local:{MAX_LOCAL_WORKERS + 1}", "1 to"),
        ("tcp://h:99999", "tcp://HOST:PORT"),
        ("tcp://h:1/path", "tcp://HOST:PORT"),
    ]:
        with pytest.raises(ValueError, match=why) as caught:
            parse_spec(bad)
        assert bad in str(caught.value) and "\n" not in str(caught.value)


def test_check_config_refuses_what_a_cluster_cannot_do() -> None:
    check_config(CrawlConfig(), "validate")  # no --cluster: nothing to say
    check_config(CrawlConfig(cluster="local:2"), "crawl")
    with pytest.raises(TargetError, match=r"^--cluster 'local:0': local:N"):
        check_config(CrawlConfig(cluster="local:0"), "crawl")
    with pytest.raises(TargetError, match="validate checks no URL"):
        check_config(CrawlConfig(cluster="local:2"), "validate")
