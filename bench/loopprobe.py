#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""loopprobe.py SOCKET OUT - how long bloomd's loop keeps control waiting: `version` asked
over the control socket every 2 ms until SIGTERM, each reply's wait in ms written to OUT
(a line each), so a caller reads the longest and the 99th percentile of a span."""
import signal
import socket
import sys
import time

stop = False


def on_term(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
replies = sock.makefile("rb")
with open(sys.argv[2], "w") as out:
    while not stop:
        t0 = time.monotonic()
        sock.sendall(b"version\n")
        if not replies.readline():
            break
        out.write("%.2f\n" % ((time.monotonic() - t0) * 1000))
        out.flush()
        time.sleep(0.002)
