"""Where the server may connect for a visitor: public addresses only, checked when it connects.

A visitor who names an endpoint (``COMPACTLENS_VISITOR_ENDPOINTS=on``) must not make the
server post into its own network: loopback, private, link-local, shared (100.64/10),
unspecified, multicast or reserved addresses, and IPv6 forms that carry one of those
IPv4 addresses (mapped, 6to4, Teredo, NAT64), are refused unless the operator lists the
host or its network in ``COMPACTLENS_ALLOWED_PRIVATE_HOSTS``.

The check runs where the connection is made, not before it: :class:`GuardedBackend`
resolves the host (every A and AAAA record), refuses it when any address is not allowed,
and then connects to one of the addresses it checked. A DNS answer that changes between
a check and the connection (rebinding) therefore has no second chance: the name is
resolved once per connection and the socket goes to what was checked. TLS still verifies
the certificate against the host name. :func:`guarded_http_client` is the ``httpx``
client built on it (no proxies from the environment, no redirects).

No Streamlit here.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAME = re.compile(r"^[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)*$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class EgressRefused(httpcore.ConnectError):
    """A connection the guard refused (the message is for the operator's log)."""


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: IPAddress) -> bool:
    """Whether ``address`` is a global unicast address (and so is any IPv4 it embeds)."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None and not is_public(inner):
            return False
    return (
        address.is_global
        and not address.is_multicast
        and not address.is_unspecified
        and not address.is_reserved
        and not address.is_link_local
        and not address.is_loopback
        and not address.is_private
    )


@dataclass(frozen=True, slots=True)
class PrivateHosts:
    """The non-public hosts the operator lets visitors' requests reach: host names (all
    their addresses) and networks (an address alone is a network of one)."""

    names: tuple[str, ...] = ()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, items: Iterable[str]) -> PrivateHosts:
        """From setting items; :class:`ValueError` names an item that is neither."""
        names: list[str] = []
        networks: list[Network] = []
        for item in items:
            text = item.strip().lower().rstrip(".")
            try:
                networks.append(ipaddress.ip_network(text.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if not _NAME.match(text) or text.replace(".", "").isdigit():
                raise ValueError(f"{item!r} is not a host name, an IP address or a network")
            names.append(text)
        return cls(tuple(dict.fromkeys(names)), tuple(dict.fromkeys(networks)))

    def allows(self, host: str, address: IPAddress) -> bool:
        """Whether a connection to ``address`` (resolved from ``host``) may be made."""
        if is_public(address) or host.lower().rstrip(".") in self.names:
            return True
        return any(address.version == n.version and address in n for n in self.networks)


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is one (``[v6]`` brackets allowed)."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def checked_addresses(host: str, port: int, allowed: PrivateHosts) -> list[str]:
    """Every address ``host`` resolves to, or :class:`EgressRefused` when one of them is
    not public and not listed by the operator (or the name does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise EgressRefused(f"{host}: does not resolve ({exc})") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for text in addresses:
        address = ipaddress.ip_address(text.split("%")[0])
        if not allowed.allows(host, address):
            raise EgressRefused(f"{host} resolves to {address}, which is not a public address")
    if not addresses:
        raise EgressRefused(f"{host}: no address")
    return addresses


class GuardedBackend(httpcore.SyncBackend):
    """Resolves, checks, then connects to a checked address (see the module docstring)."""

    def __init__(self, allowed: PrivateHosts) -> None:
        self.allowed = allowed

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        error: Exception | None = None
        for address in checked_addresses(host, port, self.allowed):
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        raise EgressRefused("unix sockets are not reachable for visitors")


class GuardedTransport(httpx.HTTPTransport):
    """An ``httpx`` transport whose connections go through :class:`GuardedBackend`."""

    def __init__(self, allowed: PrivateHosts) -> None:
        super().__init__(trust_env=False)
        # httpx builds its pool without a way to pass a network backend: replace it by
        # the same pool on the guarded backend (tests/app/test_hosting_egress.py checks it holds).
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=GuardedBackend(allowed),
        )


def guarded_http_client(allowed: PrivateHosts, timeout: float) -> httpx.Client:
    """An ``httpx`` client for visitors' endpoints: guarded connections, no environment
    proxies, no redirects."""
    return httpx.Client(
        transport=GuardedTransport(allowed),
        trust_env=False,
        follow_redirects=False,
        timeout=timeout,
    )


__all__ = [
    "EgressRefused",
    "GuardedBackend",
    "GuardedTransport",
    "PrivateHosts",
    "checked_addresses",
    "guarded_http_client",
    "is_public",
    "literal_address",
]
