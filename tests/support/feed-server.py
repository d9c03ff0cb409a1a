#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""feed-server.py - an HTTP(S) server on loopback that publishes feeds the way real ones fail.

usage: feed-server.py DIR PORTFILE LOG [CERT KEY]

Serves DIR/NAME at /NAME with an ETag (the content's hash) and a
Last-Modified (the file's mtime), answering 304 to a matching
If-None-Match (or, without one, a not-older If-Modified-Since). Special paths:
  /status/N        answers HTTP N with an HTML page (a 503 as a CDN gives it)
  /truncated/NAME  says the whole length of NAME, sends half and closes
  /huge            an endless body of addresses (chunked, no length)
  /huge-length     says 1 GiB in Content-Length and starts sending
  /slow/NAME       NAME a line a second
  /redirect/URL    a 302 to URL
  /lapi/NAME/...   a CrowdSec LAPI's stream: NAME (startup=true) or NAME.delta
                   (startup=false; nothing changed when there is none), as it is
It listens on FEED_ADDR (127.0.0.1 unless set), on a port of its own, written
to PORTFILE; each request is one line of LOG:
"METHOD PATH inm=ETAG ims=DATE key=X-API-KEY ua=USER-AGENT".
"""
import email.utils
import gzip
import hashlib
import http.server
import os
import ssl
import sys
import time


class Feed(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def note(self):
        with open(self.server.log, "a") as f:
            f.write("%s %s inm=%s ims=%s key=%s ua=%s\n" % (self.command, self.path,
                    self.headers.get("If-None-Match", ""),
                    self.headers.get("If-Modified-Since", ""),
                    self.headers.get("X-Api-Key", ""), self.headers.get("User-Agent", "")))

    def file(self, name):
        path = os.path.join(self.server.dir, os.path.basename(name))
        with open(path, "rb") as f:
            return f.read(), os.stat(path).st_mtime

    def do_GET(self):
        self.note()
        parts = self.path.split("/", 2)
        kind = parts[1]
        rest = parts[2] if len(parts) > 2 else ""
        try:
            if kind == "status":
                return self.page(int(rest))
            if kind == "truncated":
                return self.truncated(rest)
            if kind in ("gzip", "gzip-cut"):
                return self.gzipped(rest, kind == "gzip-cut")
            if kind == "huge":
                return self.huge()
            if kind == "huge-length":
                return self.huge_length()
            if kind == "slow":
                return self.slow(rest)
            if kind == "redirect":
                return self.redirect(rest)
            if kind == "lapi":
                return self.lapi(rest)
            return self.feed(kind)
        except FileNotFoundError:
            return self.page(404)
        except (BrokenPipeError, ConnectionResetError):
            return

    def feed(self, name):
        body, mtime = self.file(name)
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
        modified = email.utils.formatdate(mtime, usegmt=True)
        match, since = self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
        # As RFC 9110 says: If-None-Match, when sent, decides; If-Modified-Since only without it.
        fresh = match == etag if match else bool(
            since and email.utils.parsedate_to_datetime(since).timestamp() >= int(mtime))
        self.send_response(304 if fresh else 200)
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", modified)
        self.send_header("Content-Length", "0" if fresh else str(len(body)))
        self.end_headers()
        if not fresh:
            self.wfile.write(body)

    def page(self, code):
        body = b"<html><body><h1>%d</h1>Service Temporarily Unavailable</body></html>\n" % code
        self.send_response(code)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def truncated(self, name):
        body, _ = self.file(name)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.close_connection = True

    def gzipped(self, name, cut):
        """The file with Content-Encoding gzip; cut: its stream without its last 20 bytes (the end
        of the deflate data, the CRC and the length), in a response whose framing is whole."""
        body, _ = self.file(name)
        packed = gzip.compress(body)
        if cut:
            packed = packed[:-20]
        self.send_response(200)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(packed)))
        self.end_headers()
        self.wfile.write(packed)

    def huge(self):
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"".join(b"10.%d.%d.%d\n" % (i >> 16 & 255, i >> 8 & 255, i & 255) for i in range(65536))
        while True:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))

    def huge_length(self):
        self.send_response(200)
        self.send_header("Content-Length", str(1 << 30))
        self.end_headers()
        while True:
            self.wfile.write(b"192.0.2.1\n" * 10000)

    def slow(self, name):
        body, _ = self.file(name)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for line in body.splitlines(keepends=True):
            self.wfile.write(line)
            self.wfile.flush()
            time.sleep(1)

    def lapi(self, rest):
        name = rest.split("/")[0]
        delta = os.path.join(self.server.dir, name + ".delta")
        if "startup=false" not in rest:
            body, _ = self.file(name)
        elif os.path.exists(delta):
            body, _ = self.file(name + ".delta")
        else:
            body = b'{"new":null,"deleted":null}'

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, url):
        self.send_response(302)
        self.send_header("Location", url)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    directory, portfile, log = sys.argv[1:4]
    server = http.server.ThreadingHTTPServer((os.environ.get("FEED_ADDR", "127.0.0.1"), 0), Feed)
    server.daemon_threads = True
    # A client that hangs up (bloomd-fetch past max_size or its timeout) is what these tests do.
    server.handle_error = lambda request, address: None if isinstance(
        sys.exc_info()[1], (ConnectionError, ssl.SSLError)) else http.server.HTTPServer.handle_error(
        server, request, address)
    server.dir, server.log = directory, log
    if len(sys.argv) > 5:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[4], sys.argv[5])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(portfile + ".tmp", portfile)
    server.serve_forever()


if __name__ == "__main__":
    main()
