#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""refusing-proxy.py LISTEN UPSTREAM STREAM NTH SECONDS: a proxy on the Unix socket LISTEN to
the Redis at the Unix socket UPSTREAM that passes every byte both ways, but makes Redis refuse
the NTH XADD to STREAM (counted over all connections, from 1): its command name goes up as
XADX, which Redis refuses when it reads it ("unknown command"), as it refuses a write when it is
out of memory, while the commands around it go through. It stops by itself after SECONDS and
prints how many XADDs to STREAM it saw."""
import os
import socket
import sys
import threading
import time

listen, upstream, stream, nth, seconds = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4]), float(sys.argv[5])
seen = 0
lock = threading.Lock()


class Commands:
    """Whole commands (arrays of bulk strings) out of the bytes a client sends, as they come."""

    def __init__(self):
        self.buf = b""

    def feed(self, data):
        self.buf += data
        out = []
        while True:
            end = self.one()
            if end is None:
                return out
            out.append(self.buf[:end])
            self.buf = self.buf[end:]

    def one(self):
        """The length of the first whole command in buf, or None."""
        if not self.buf.startswith(b"*"):
            cut = self.buf.find(b"\r\n")  # an inline command
            return None if cut < 0 else cut + 2
        at = self.buf.find(b"\r\n")
        if at < 0:
            return None
        count, at = int(self.buf[1:at]), at + 2
        for _ in range(count):
            head = self.buf.find(b"\r\n", at)
            if head < 0:
                return None
            at = head + 2 + int(self.buf[at + 1:head]) + 2
            if at > len(self.buf):
                return None
        return at


def refused(command):
    """command with XADD made XADX if it is the one to refuse."""
    global seen
    if not command.startswith(b"*") or b"\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n" % (len(stream), stream) not in command[:64 + len(stream)]:
        return command
    with lock:
        seen += 1
        if seen != nth:
            return command
    return command.replace(b"$4\r\nXADD\r\n", b"$4\r\nXADX\r\n", 1)


def pump_up(client, server):
    commands = Commands()
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            server.sendall(b"".join(refused(c) for c in commands.feed(data)))
    except OSError:
        pass
    finally:
        server.close()
        client.close()


def pump_down(server, client):
    try:
        while True:
            data = server.recv(65536)
            if not data:
                break
            client.sendall(data)
    except OSError:
        pass
    finally:
        client.close()


if os.path.exists(listen):
    os.unlink(listen)
proxy = socket.socket(socket.AF_UNIX)
proxy.bind(listen)
proxy.listen(16)
proxy.settimeout(0.2)
end = time.time() + seconds
while time.time() < end:
    try:
        client, _ = proxy.accept()
    except socket.timeout:
        continue
    server = socket.socket(socket.AF_UNIX)
    server.connect(upstream)
    threading.Thread(target=pump_up, args=(client, server), daemon=True).start()
    threading.Thread(target=pump_down, args=(server, client), daemon=True).start()
proxy.close()
print(seen)
