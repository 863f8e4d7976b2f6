"""RequestScope (audit/http/credentials.py): the rule the client applies per request,
which credentials go where and when certificate checks are off."""

from __future__ import annotations

from audit.core.config import CrawlConfig
from audit.http.credentials import RequestScope, credential_headers, request_headers, user_agent_of
from audit.http.hosts import HostPool
from tests.http.test_access import COOKIE, CREDS, HEADER, TOKEN


def test_request_scope_sends_credentials_to_the_scope_only() -> None:
    config = CrawlConfig(**CREDS, credential_origins=("https://stage.test",))
    scope = RequestScope(config)
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0)
    inside, outside = hosts.get("https://stage.test/p"), hosts.get("https://other.test/p")
    headers, verify = scope.prepare(inside, False, {"If-None-Match": '"x"'}, None)
    assert verify and headers is not None
    assert headers["Authorization"] == f"Basic {TOKEN}"
    assert headers["Cookie"] == f"sid={COOKIE}" and headers["X-Staging-Key"] == HEADER
    assert headers["If-None-Match"] == '"x"'
    assert scope.prepare(outside, False, None, None) == (None, True)
    # a stream asks for the raw bytes, with or without credentials
    assert scope.prepare(outside, True, None, None) == ({"Accept-Encoding": "identity"}, True)
    # with a scope, the chain's origin does not matter
    assert scope.chain_origin("https://stage.test/p") is None
    assert credential_headers(config) == scope.credentials
    assert request_headers(False, None) is None


def test_request_scope_without_a_scope_binds_to_the_chain_origin() -> None:
    scope = RequestScope(CrawlConfig(**CREDS))
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0)
    start = scope.chain_origin("http://a.test/x")
    assert start is not None
    own, _ = scope.prepare(hosts.get("http://a.test/y"), False, None, start)
    assert own is not None and "Authorization" in own
    other, _ = scope.prepare(hosts.get("http://b.test/y"), False, None, start)
    assert other is None


def test_request_scope_turns_verification_off_for_insecure_https_hosts_only() -> None:
    config = CrawlConfig(insecure_hosts=("Stage.Test",))
    scope = RequestScope(config)
    assert scope.adds and not scope.credentials
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0)
    assert scope.prepare(hosts.get("https://stage.test/"), False, None, None) == (None, False)
    assert scope.prepare(hosts.get("http://stage.test/"), False, None, None) == (None, True)
    assert scope.prepare(hosts.get("https://other.test/"), False, None, None) == (None, True)
    assert not RequestScope(CrawlConfig()).adds
    agent = CrawlConfig(extra_headers=(("user-agent", "Mine/1"), ("X-A", "b")))
    assert user_agent_of(agent) == "Mine/1"
    assert "user-agent" not in {k.lower() for k in RequestScope(agent).credentials}
