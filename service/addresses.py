"""Whom a client is, by the address it connects from."""

from __future__ import annotations

import ipaddress


def client_address(address: str | None) -> str:
    """Whom a request counts against: its address, or for IPv6 the /64 network holding it.
    One host is commonly given a whole /64, so it could take a fresh address for every
    request; an IPv4 address mapped into IPv6 counts as itself. A port after the address
    (``192.0.2.1:4711``, ``[2001:db8::1]:4711``, as some proxies write X-Forwarded-For) is
    not part of it; anything else that is no address counts as it is."""
    if not address or ":" not in address:  # IPv4 without a port (most), or junk: as it is
        return address or "unknown"
    try:
        ip = ipaddress.ip_address(_without_port(address))
    except ValueError:  # not an address gunicorn or a proxy would give: as it is
        return address
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))


def _without_port(address: str) -> str:
    if address.startswith("["):  # [v6]:port, or [v6]
        return address[1:].partition("]")[0]
    host, colon, port = address.partition(":")
    return host if colon and ":" not in port else address
