#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""fake-redis.py SOCKET SEED SECONDS [REPORT]: a server on a Unix socket that speaks RESP but
answers every command with a reply of a random shape (seeded): errors, integers, nils,
strings, and arrays nested a few deep, some shaped almost like what XREAD, XRANGE, XINFO or
HGETALL give, with a wrong type somewhere inside. bloomd's cluster code must take each as an
error on that connection, never crash. It stops by itself after SECONDS.

With REPORT, each command name is answered in turn with each reply of EVERY_KIND instead,
so every callback meets every type, and then with a reply that lets the next command come
(EXEC an ID for each XADD it ran, so WAIT follows; EVAL a stream trimmed past the node and
XREAD nothing new, so HGETALL follows), and REPORT gets the number of kinds, then a line a command: its
name and how many of the kinds it was sent. SOCKET tcp:PORT listens on 127.0.0.1:PORT instead;
there, once SENTINEL has been sent every kind, it is answered with the server's own address, so
that a node asking it as a sentinel then connects to it as the master (and ROLE meets every
kind too).

With REPORT stall:LOG, it answers as an empty Redis instead, except for the first EXEC it is
sent: that one it holds 1.5 s (so that the node asks more behind it), answers with a shape EXEC
never gives, and then answers nothing more on that connection. LOG gets a line a connection
made and an EXEC answered, each with the time."""
import os
import random
import socket
import sys
import threading
import time

path, seed, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
report = sys.argv[4] if len(sys.argv) > 4 else None
stall_log = report[6:] if report and report.startswith("stall:") else None
if stall_log:
    report = None


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def array(items):
    return b"*%d\r\n" % len(items) + b"".join(items)


def scalar(rng):
    return rng.choice([
        b"+OK\r\n", b"-ERR fake\r\n", b":%d\r\n" % rng.randint(-2**63, 2**63 - 1), b"$-1\r\n", b"*-1\r\n",
        bulk(b"1-1"), bulk(b"99999999999999999999-1"), bulk(b"not-an-id"), bulk(b"add"), bulk(b"addr 192.0.2.1"),
        bulk(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))), b"*0\r\n",
    ])


def anything(rng, depth=0):
    if depth > 3 or rng.random() < 0.4:
        return scalar(rng)
    return array([anything(rng, depth + 1) for _ in range(rng.randint(0, 5))])


def entry(rng):
    """[ID, [field, value, ...]] with something wrong now and then."""
    fields = [bulk(b"op"), bulk(b"add"), bulk(b"entry"), bulk(b"addr 192.0.2.%d" % rng.randint(1, 254)),
              bulk(b"node"), bulk(b"fake")]
    if rng.random() < 0.5:
        fields[rng.randrange(len(fields))] = anything(rng, 2)
    if rng.random() < 0.2:
        fields = fields[:-1]
    ident = bulk(b"%d-%d" % (rng.randint(1, 2**40), rng.randint(0, 9))) if rng.random() < 0.7 else anything(rng, 2)
    return array([ident, array(fields) if rng.random() < 0.8 else anything(rng, 2)])


def almost(rng):
    shape = rng.randrange(4)
    if shape == 0:  # XREAD
        return array([array([bulk(b"bloomd:entries"), array([entry(rng) for _ in range(rng.randint(0, 4))])])])
    if shape == 1:  # XRANGE
        return array([entry(rng) for _ in range(rng.randint(0, 4))])
    if shape == 2:  # XINFO STREAM
        return array([bulk(b"length"), anything(rng, 2), bulk(b"entries-added"), anything(rng, 2),
                      bulk(b"last-generated-id"), anything(rng, 2), bulk(b"first-entry"), entry(rng)])
    return array([bulk(b"id"), anything(rng, 2), bulk(b"data"), anything(rng, 2)])  # HGETALL


class Closed(Exception):
    pass


class Incoming:
    """The bytes a client sends, read as RESP needs them."""

    def __init__(self, conn):
        self.conn, self.buf = conn, b""

    def more(self):
        chunk = self.conn.recv(65536)
        if not chunk:
            raise Closed
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self.more()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def skip(self, n):
        while len(self.buf) < n:
            self.more()
        self.buf = self.buf[n:]


def commands(conn):
    """One yield a command: its name (the first bulk string, upper case) and its second (an EVAL's
    script); the rest is skipped."""
    incoming = Incoming(conn)
    try:
        while True:
            head = incoming.line()
            if head.startswith(b"*"):
                words = []
                for i in range(int(head[1:])):
                    n = int(incoming.line()[1:])
                    if i < 2:
                        while len(incoming.buf) < n + 2:
                            incoming.more()
                        words.append(incoming.buf[:n])
                    incoming.skip(n + 2)
                yield words[0].upper().decode(errors="replace"), (words[1:] or [b""])[0]
    except Closed:
        return


GOOD_ENTRY = array([bulk(b"1-1"), array([bulk(b"op"), bulk(b"add")])])
EVERY_KIND = [
    b":42\r\n",                                   # integer
    b"$-1\r\n",                                   # nil
    b"*-1\r\n",                                   # nil array
    b"*0\r\n",                                    # empty array
    b"-ERR fake\r\n",                             # error
    b"+OK\r\n",                                   # status
    array([b":7\r\n"]),                           # an array of an integer
    array([b"$-1\r\n"]),                          # an array of a nil
    array([GOOD_ENTRY, b"*0\r\n"]),               # an entry, then an empty array
    array([GOOD_ENTRY, b":7\r\n"]),               # an entry, then an integer
    array([array([array([b"*-1\r\n"])])]),       # nested arrays round a nil
    bulk(b"x" * (1 << 20)),                       # a huge bulk string
]
sent = {}  # command name: kinds sent
lock = threading.Lock()


def reply_to(name, script, rng, queued):
    if report is None:
        return almost(rng) if rng.random() < 0.6 else anything(rng)
    with lock:
        n = sent.get(name, 0)
        sent[name] = n + 1
    if n < len(EVERY_KIND):
        return EVERY_KIND[n]
    # Then replies that let the next command come, so that it meets every kind in its turn.
    if name == "SENTINEL" and port:  # itself, as the master: ROLE comes next
        return array([bulk(b"127.0.0.1"), bulk(b"%d" % port)])
    if name == "EXEC":  # an ID for each XADD queued: WAIT comes next
        return array([bulk(b"1-%d" % (i + 1)) for i in range(queued)])
    if name == "EVAL" and b"XREVRANGE" in script:  # the digest's place
        return bulk(b"1-1")
    if name == "EVAL" and b"'change'" in script:  # none of these changes is lost: the batch is in the stream still
        return b"*0\r\n"
    if name == "EVAL":  # a stream trimmed past a new node (XINFO's shape): the snapshot, HGETALL, comes next
        return array([bulk(b"length"), b":1\r\n", bulk(b"entries-added"), b":5\r\n", bulk(b"last-generated-id"),
                      bulk(b"9-9"), bulk(b"first-entry"), array([bulk(b"5-1"), b"*0\r\n"])])
    if name == "XREAD":  # nothing new
        return b"*-1\r\n"
    return EVERY_KIND[n % len(EVERY_KIND)]


def note(line):
    with lock, open(stall_log, "a") as f:
        f.write("%s %.3f\n" % (line, time.time()))


stalled = []  # the EXEC held, once


def empty_reply(name, script, queued):
    """What an empty Redis answers; None for the EXEC held, after which the connection is mute."""
    if name == "EXEC":
        with lock:
            first = not stalled
            stalled.append(1)
        if first:
            time.sleep(1.5)
            return None
        note("exec")
        return array([bulk(b"%d-1" % (time.time() * 1000 + i)) for i in range(queued)])
    if name == "EVAL" and b"XINFO" in script:  # the stream's check: there is none yet
        return array([bulk(b"length"), b":0\r\n", bulk(b"entries-added"), b":0\r\n", bulk(b"last-generated-id"),
                      bulk(b"0-0")])
    if name == "EVAL" and b"XRANGE" in script:  # the lag: nothing behind
        return array([b":0\r\n", bulk(b"")])
    if name == "XREAD":  # BLOCK: nothing new
        time.sleep(0.3)
        return b"*-1\r\n"
    if name == "HGETALL":
        return b"*0\r\n"
    return {"MULTI": b"+OK\r\n", "XADD": b"+QUEUED\r\n"}.get(name, b":1\r\n")


def serve(conn, rng):
    queued = 0  # XADDs since MULTI, on this connection
    if stall_log:
        note("connect")
    try:
        for name, script in commands(conn):
            queued = 0 if name == "MULTI" else queued + (name == "XADD")
            if stall_log:
                reply = empty_reply(name, script, queued)
                if reply is None:
                    note("held")
                    conn.sendall(b":1\r\n")
                    for _ in commands(conn):  # mute from now on
                        pass
                    return
                conn.sendall(reply)
                continue
            conn.sendall(reply_to(name, script, rng, queued))
    except OSError:
        pass
    finally:
        conn.close()


port = int(path[4:]) if path.startswith("tcp:") else 0
if port:
    server = socket.socket(socket.AF_INET)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
else:
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
server.listen(16)
server.settimeout(0.2)
end = time.time() + seconds
n = 0
while time.time() < end:
    try:
        conn, _ = server.accept()
    except socket.timeout:
        continue
    n += 1
    threading.Thread(target=serve, args=(conn, random.Random(seed * 1000 + n)), daemon=True).start()
server.close()
print(n)
if report:
    with open(report, "w") as f:
        f.write("kinds %d\n" % len(EVERY_KIND))
        for name, n in sorted(sent.items()):
            f.write("%s %d\n" % (name, min(n, len(EVERY_KIND))))
