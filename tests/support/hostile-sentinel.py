#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""hostile-sentinel.py PORT KIND: a Sentinel on 127.0.0.1:PORT that answers every command with
what no Sentinel sends, until killed. KIND garbage: bytes that are not RESP; KIND host: the
master's address as [host, port] with a host holding a carriage return and a newline."""
import socket
import sys
import threading

port, kind = int(sys.argv[1]), sys.argv[2]
ANSWERS = {
    "garbage": b"\xff\xfe\x00binary\x1b[31m garbage\r\n",
    "host": b"*2\r\n$16\r\n10.0.0.1\r\nX-Evil\r\n$4\r\n6379\r\n",
}


def serve(conn):
    try:
        while conn.recv(4096):
            conn.sendall(ANSWERS[kind])
    except OSError:
        pass
    finally:
        conn.close()


server = socket.socket(socket.AF_INET)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(16)
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
