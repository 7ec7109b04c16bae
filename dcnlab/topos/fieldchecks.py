"""What a topology file's names, ports and addresses may be, as dcnlab emulates them on BMv2 and Linux.

Each check returns None for a valid value or a phrase saying what is wrong and what is valid; the
reader (:mod:`dcnlab.topos.files`) puts the file and the element first. They run on every topology
format before anything is created.

- **Node names**: a letter, then letters, digits or ``_`` (no space, newline, ``;``, ``/``, ``-`` or
  control character: a name becomes part of interface names, file names in the run directory and
  Mininet commands). A switch's port ``N`` is the interface ``NAME-ethN``, and Linux allows at most
  :data:`IFNAMSIZ` (15) characters, so a name has at most 10 characters, and fewer when its highest
  port has more digits (9 for ports 10..99, 8 for 100..510). Names are then unique in their first 15
  characters, and so are the interface names made from them.
- **Ports**: 0..:data:`MAX_PORT` (510). v1model's ``egress_spec`` has 9 bits, and BMv2 drops what is
  sent to port 511 (its default drop port), so 511 is no port a link can use, and 512 does not fit.
- **MACs** of hosts (and of gateways): unicast and not all-zero (a multicast or broadcast source
  address is dropped by every switch and host; ``00:00:00:00:00:00`` is no address).
- **Host IPv4 addresses**: not multicast (224.0.0.0/4), not 255.255.255.255, not 0.0.0.0, not loopback
  (127.0.0.0/8), not reserved (240.0.0.0/4), and neither the network nor the broadcast address of the
  host's own subnet (for prefixes up to /30). A gateway is a usable address of the host's subnet
  other than the host's own.
"""

from __future__ import annotations

import ipaddress
import re

IFNAMSIZ = 15
"""Characters of a Linux interface name (``IFNAMSIZ`` - 1)."""
MAX_PORT = 510
"""The highest port number a link may use (BMv2: 511 is the drop port; v1model ports have 9 bits)."""
MAX_NAME = IFNAMSIZ - len("-eth0")
"""The longest node name (10): ``NAME-eth0`` fits :data:`IFNAMSIZ`."""
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
NAME_RULE = (f"a letter, then letters, digits or '_', at most {MAX_NAME} characters (its interfaces NAME-ethN "
             f"have at most {IFNAMSIZ}, Linux's limit)")
PORT_RULE = f"0..{MAX_PORT} (511 is BMv2's drop port; v1model ports have 9 bits)"


def name_problem(name: str) -> str | None:
    """Why ``name`` is no valid node name (see the module docstring), or None."""
    if not NAME.fullmatch(name):
        return "is invalid"
    if len(name) > MAX_NAME:
        return "is too long"
    return None


def ifname(name: str, port: int) -> str:
    """The interface of a node's port (as :func:`dcnlab.emu.network.intf_name` names it)."""
    return f"{name}-eth{port}"


def ifname_problem(name: str, highest_port: int) -> str | None:
    """Why the interface of ``name``'s highest port does not fit :data:`IFNAMSIZ`, or None."""
    n = ifname(name, highest_port)
    if len(n) <= IFNAMSIZ:
        return None
    longest = IFNAMSIZ - len(ifname("", highest_port))
    return (f"its port {highest_port} makes interface name {n} of {len(n)} characters; valid: interface names of "
            f"at most {IFNAMSIZ} characters (Linux), so a name of at most {longest} characters for ports up to "
            f"{highest_port}")


def port_problem(port: int, of: str = "") -> str | None:
    """Why ``port`` (of node ``of``, if given) is no port a link may use, or None."""
    if 0 <= port <= MAX_PORT:
        return None
    what = ("BMv2's drop port" if port == 511 else "beyond v1model's 9-bit ports" if port > 511 else "negative")
    return f"port {port}{f' of {of}' if of else ''} is invalid ({what}); valid: {PORT_RULE}"


def mac_problem(mac: str) -> str | None:
    """Why ``mac`` (``xx:xx:xx:xx:xx:xx``) cannot be a host's address, or None."""
    octets = [int(x, 16) for x in mac.split(":")]
    if all(o == 0xFF for o in octets):
        what = "the broadcast address"
    elif all(o == 0 for o in octets):
        what = "the all-zero address"
    elif octets[0] & 1:
        what = "a multicast address (the first octet is odd)"
    else:
        return None
    return f"{mac} is {what}; valid: a unicast MAC other than 00:00:00:00:00:00 (e.g. 08:00:00:00:01:11)"


def _kind_of(ip: ipaddress.IPv4Address) -> str | None:
    if ip == ipaddress.IPv4Address("255.255.255.255"):
        return "the broadcast address"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_multicast:
        return "a multicast address"
    if ip in ipaddress.IPv4Network("240.0.0.0/4"):
        return "a reserved address (240.0.0.0/4)"
    return None


def host_ip_problem(ip: str, prefix_len: int) -> str | None:
    """Why ``ip`` cannot be a host's address in its subnet of ``prefix_len`` bits, or None."""
    addr = ipaddress.IPv4Address(ip)
    what = _kind_of(addr)
    if what is None and prefix_len <= 30:
        net = ipaddress.IPv4Network(f"{ip}/{prefix_len}", strict=False)
        if addr == net.network_address:
            what = f"the network address of {net}"
        elif addr == net.broadcast_address:
            what = f"the broadcast address of {net}"
    if what is None:
        return None
    return f"{ip} is {what}; valid: a unicast address of the host's subnet (e.g. 10.0.1.1/24)"


def gateway_problem(gateway: str, ip: str, prefix_len: int) -> str | None:
    """Why ``gateway`` cannot be the gateway of a host with ``ip``/``prefix_len``, or None."""
    if gateway == ip:
        return f"{gateway} is the host's own address; valid: another address of its subnet"
    what = host_ip_problem(gateway, prefix_len)
    if what is not None:
        return what.replace("the host's subnet", "the host's subnet other than its own address")
    net = ipaddress.IPv4Network(f"{ip}/{prefix_len}", strict=False)
    if ipaddress.IPv4Address(gateway) not in net:
        return f"{gateway} is outside the host's subnet {net}; valid: an address of {net}"
    return None
