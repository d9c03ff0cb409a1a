#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""nftprobe.py - an nftables set's elements as the kernel has them, by netlink alone (nft itself
reads every element of a set first: 50 s for a million).

  nftprobe.py get TABLE SET ADDRESS   exit 0 if the inet table's set holds the IPv4 address, 1 if not
  nftprobe.py watch TABLE SET         a line "SECONDS add|del ADDRESS" for each IPv4 element the
                                      kernel announces added to or deleted from the set (monotonic clock)
  nftprobe.py until TABLE SET:ADDRESS[:absent]...   polls every 5 ms (60 s at most) until each IPv4
                                      address is in its set (or, with :absent, is not): exit 0, or 1
  nftprobe.py dump TABLE SET...       every element of the sets (IPv4 or IPv6), a line each, sorted:
                                      an address, or an interval set's net as ADDRESS/LEN
"""
import ipaddress
import socket
import struct
import sys
import time

NETLINK_NETFILTER, NFNLGRP_NFTABLES, NFNL_SUBSYS_NFTABLES = 12, 7, 10
NFT_MSG_NEWSETELEM, NFT_MSG_GETSETELEM, NFT_MSG_DELSETELEM = 12, 13, 14
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP, NLMSG_ERROR, NLMSG_DONE = 1, 4, 0x300, 2, 3
ELEM_FLAGS, INTERVAL_END = 3, 1
NFPROTO_INET = 1
LIST_TABLE, LIST_SET, LIST_ELEMENTS, LIST_ELEM, ELEM_KEY, DATA_VALUE = 1, 2, 3, 1, 1, 1
NLA_F_NESTED = 0x8000


def attr(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def attrs(data):
    while len(data) >= 4:
        length, kind = struct.unpack_from("=HH", data)
        if length < 4:
            return
        yield kind & 0x3FFF, data[4:length]
        data = data[(length + 3) & ~3:]


def messages(data):
    while len(data) >= 16:
        length, kind, _flags, _seq, _pid = struct.unpack_from("=IHHII", data)
        if length < 16:
            return
        yield kind, data[16:length]
        data = data[(length + 3) & ~3:]


def get(table, set_name, address):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    key = attr(LIST_ELEM | NLA_F_NESTED, attr(ELEM_KEY | NLA_F_NESTED, attr(DATA_VALUE, socket.inet_aton(address))))
    body = struct.pack("=BBH", NFPROTO_INET, 0, 0) + attr(LIST_TABLE, table.encode() + b"\0") + \
        attr(LIST_SET, set_name.encode() + b"\0") + attr(LIST_ELEMENTS | NLA_F_NESTED, key)
    kind = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETSETELEM
    s.send(struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body)
    for kind, payload in messages(s.recv(65536)):
        if kind == NLMSG_ERROR:
            return 0 if struct.unpack_from("=i", payload)[0] == 0 else 1
        if kind & 0xFF == NFT_MSG_NEWSETELEM:
            return 0
    return 1


def watch(table, set_name):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((0, 1 << (NFNLGRP_NFTABLES - 1)))
    print("watching", flush=True)
    while True:
        data = s.recv(1 << 17)
        now = time.monotonic()
        for kind, payload in messages(data):
            op = {NFT_MSG_NEWSETELEM: "add", NFT_MSG_DELSETELEM: "del"}.get(kind & 0xFF)
            if op is None or (kind >> 8) != NFNL_SUBSYS_NFTABLES:
                continue
            fields = dict(attrs(payload[4:]))
            if fields.get(LIST_TABLE, b"").rstrip(b"\0").decode() != table or \
                    fields.get(LIST_SET, b"").rstrip(b"\0").decode() != set_name:
                continue
            for _, elem in attrs(fields.get(LIST_ELEMENTS, b"")):
                value = dict(attrs(dict(attrs(elem)).get(ELEM_KEY, b""))).get(DATA_VALUE, b"")
                if len(value) == 4:
                    print("%.6f %s %s" % (now, op, socket.inet_ntoa(value)), flush=True)


def elements(table, set_name):
    """(key bytes, is an interval's end) of each element the kernel holds in the set."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    body = struct.pack("=BBH", NFPROTO_INET, 0, 0) + attr(LIST_TABLE, table.encode() + b"\0") + \
        attr(LIST_SET, set_name.encode() + b"\0")
    kind = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETSETELEM
    s.send(struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
    out = []
    while True:
        for kind, payload in messages(s.recv(1 << 20)):
            if kind in (NLMSG_DONE, NLMSG_ERROR):
                return out
            fields = dict(attrs(payload[4:]))
            for _, elem in attrs(fields.get(LIST_ELEMENTS, b"")):
                e = dict(attrs(elem))
                key = dict(attrs(e.get(ELEM_KEY, b""))).get(DATA_VALUE, b"")
                flags = struct.unpack(">I", e[ELEM_FLAGS])[0] if ELEM_FLAGS in e else 0
                out.append((key, bool(flags & INTERVAL_END)))


def dump(table, *sets):
    lines = []
    for set_name in sets:
        interval = "nets" in set_name
        # by key; at one key an interval's end before the next one's start
        elems = sorted(((int.from_bytes(k, "big"), end, len(k) * 8) for k, end in elements(table, set_name)),
                       key=lambda e: (e[0], not e[1]))
        start = bits = None
        for value, end, bits in elems:
            if not interval:
                lines.append(str(ipaddress.ip_address(value.to_bytes(bits // 8, "big"))))
            elif end and start is not None:
                lines.append(str(ipaddress.ip_network((start, bits - (value - start).bit_length() + 1))))
                start = None
            elif not end:
                start = value
        if start is not None:  # an open interval: to the top of the address space
            lines.append(str(ipaddress.ip_network((start, bits - ((1 << bits) - start).bit_length() + 1))))
    for line in sorted(lines):
        print(line)


def until(table, *wants):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if all((get(table, *w.split(":")[:2]) == 0) != w.endswith(":absent") for w in wants):
            return 0
        time.sleep(0.005)
    return 1


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "until":
        sys.exit(until(*sys.argv[2:]))
    if len(sys.argv) >= 4 and sys.argv[1] == "dump":
        dump(*sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "get":
        sys.exit(get(*sys.argv[2:]))
    if len(sys.argv) == 4 and sys.argv[1] == "watch":
        watch(*sys.argv[2:])
    sys.exit(__doc__)
