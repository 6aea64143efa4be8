"""Whom a client is, by the address it connects from."""

from __future__ import annotations

import ipaddress


def client_address(address: str | None) -> str:
    """Whom a request counts against: its address, or for IPv6 the /64 network holding it.
    One host is commonly given a whole /64, so it could take a fresh address for every
    request; an IPv4 address mapped into IPv6 counts as itself."""
    if not address or ":" not in address:
        return address or "unknown"
    try:
        ip = ipaddress.IPv6Address(address)
    except ValueError:  # not an address gunicorn or a proxy would give: as it is
        return address
    if ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))
