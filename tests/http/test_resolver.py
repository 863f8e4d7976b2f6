"""The connector's resolver (audit/http/resolver.py): real DNS answers (the machine's own
resolver, for `localhost` and the host's own name) judged by the run's private-address rule;
a name with only private answers fails like a DNS lookup."""

from __future__ import annotations

import socket

import pytest

from audit.http.addresses import PrivateGuard
from audit.http.resolver import PrivateAnswer, guarded_resolver

PUBLIC_RUN = PrivateGuard.of(["https://www.example.com"], allow_private=False)


def test_an_inactive_rule_keeps_aiohttp_s_own_resolver() -> None:
    assert guarded_resolver(PrivateGuard.of(["http://127.0.0.1:8000"], False)) is None
    assert guarded_resolver(PrivateGuard.of(["https://www.example.com"], True)) is None


async def test_a_name_that_answers_only_loopback_is_not_connected_to() -> None:
    resolver = guarded_resolver(PUBLIC_RUN)
    assert resolver is not None
    try:
        with pytest.raises(PrivateAnswer) as caught:
            await resolver.resolve("localhost", 80)
    finally:
        await resolver.close()
    assert isinstance(caught.value, socket.gaierror)  # reported as a DNS failure
    assert "--allow-private" in str(caught.value)


async def test_a_target_s_own_name_is_trusted_whatever_it_answers() -> None:
    guard = PrivateGuard.of(["http://localhost:8000/sitemap.xml", "https://www.example.com"], False)
    assert not guard.active  # a private target: everything may be requested
    trusted = PrivateGuard(frozenset({"localhost"}), True)  # a public run that names localhost
    resolver = guarded_resolver(trusted)
    assert resolver is not None
    try:
        answers = await resolver.resolve("localhost", 8000)
    finally:
        await resolver.close()
    assert answers and all(a["port"] == 8000 for a in answers)
    assert {a["host"] for a in answers} <= {"127.0.0.1", "::1"}
