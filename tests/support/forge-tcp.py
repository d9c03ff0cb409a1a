#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""forge-tcp.py NEXTHOP DST DPORT PAYLOAD SECONDS PHASE < SOURCES

For each source address read (one a line), a TCP connection to DST:DPORT written onto the link
through a raw socket to NEXTHOP (-: each packet's own destination, by the routes), a phase at a
time, as a sensor there sees one: syn, the client's SYN; synack, the server's SYN-ACK
acknowledging it (sent from the server's side of the link: bloomd takes an answer from the SYN's
own link neighbour for one writer both ways); data, the ACK acknowledging that, then PAYLOAD,
sent again every 0.2 s (a retransmission, within the window) until SECONDS have passed (0: once).
No server answers: the test stands for one, so that a match of the payload has a sender a
handshake proved, from as many sources as it likes."""
import socket
import struct
import sys
import time


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF


def segment(src, dst, sport, dport, seq, ack, flags, payload=b""):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    pseudo = struct.pack("!4s4sBBH", src, dst, 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, src, dst)
    return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + tcp


def main():
    nexthop, dst, dport, payload = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    seconds, phase = float(sys.argv[5]), sys.argv[6]
    dst = socket.inet_aton(dst)
    data = payload.encode()
    sources = [socket.inet_aton(line.strip()) for line in sys.stdin if line.strip()]
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    client_isn, server_isn, sport = 1000, 5000000, 40000

    def send(packet, i):
        to = socket.inet_ntoa(packet[16:20]) if nexthop == "-" else nexthop
        s.sendto(packet, (to, 0))
        if i % 200 == 199:
            time.sleep(0.002)

    for i, src in enumerate(sources):
        if phase == "syn":
            send(segment(src, dst, sport, dport, client_isn, 0, 0x02), i)
        elif phase == "synack":
            send(segment(dst, src, dport, sport, server_isn, client_isn + 1, 0x12), i)
        else:
            send(segment(src, dst, sport, dport, client_isn + 1, server_isn + 1, 0x10), i)
    if phase != "data":
        return
    end = time.time() + seconds
    while True:
        for i, src in enumerate(sources):
            send(segment(src, dst, sport, dport, client_isn + 1, server_isn + 1, 0x18, data), i)
        if time.time() >= end:
            break
        time.sleep(0.2)


main()
