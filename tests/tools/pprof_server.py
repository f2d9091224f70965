#!/usr/bin/env python3
"""A test server that answers as the servers jheap fetches profiles from do
(Databend's /debug/mem, gperftools and brpc's /pprof/*, libmtev's
heap_profile), on 127.0.0.1 only, on a port the system picks.

  pprof_server.py PORTFILE LOGFILE [--page PATH=FILE]...
                  [--symbols DUMP REMOTE_PATH LOCAL_BINARY] [--auth USER:PASS]
                  [--tls CERT KEY]

PORTFILE receives the port once the server listens; LOGFILE one line per
request: "METHOD PATH" (the path as the request line has it), and for a
POST "POST PATH <n> addresses".

Pages:
  --page PATH=FILE    FILE's bytes at PATH (the query string is not part of
                      PATH).  At a path ending in /pprof/profile, a query
                      "seconds=N" with N <= 2 waits N seconds first, as a
                      server collecting; larger N are answered at once.
  /mtev/heap_profile  (when given with --page) only with trigger_dump=true
                      in the query, else 400, as libmtev wants it.
  .../pprof/symbol    with --symbols: GET "num_symbols: N"; POST of
                      "0xA+0xB..." answers "0x%016x\\t<mangled name>" lines
                      (and "??" for unknown addresses), names from `nm` of
                      LOCAL_BINARY, which DUMP's maps load as REMOTE_PATH.
                      /nosym/pprof/symbol is a 404, a server without one.
  /html/...           200 with an HTML page
  /empty/...          200 with an empty body
  /slow/...           answers after 60 s (a hung server)
  /big/...            4 MiB with a Content-Length
  /endless/...        bytes forever, no Content-Length
  /loop/...           a redirect to itself
  /bomb/...           a gzip bomb: Content-Encoding gzip, about 1 MiB of
                      compressed heap-profile text per GiB it inflates to
                      (16 GiB in all), no Content-Length; logged as
                      "BOMB sent N of M bytes" when the client stops
  /enc/PATH           PATH's page sent with Content-Encoding: gzip
  /bighdr/...         a 1 MiB response header line (X-Padding)
  /manyhdrs/...       1024 header lines of 1 KiB each
  /redirect/PATH      a redirect to PATH
  anything else       404 with an HTML page
  /auth/PATH          with --auth USER:PASS: PATH, when the request carries
                      HTTP basic authentication with USER and PASS (logged
                      "AUTH ok"), else 401 (logged "AUTH missing" or "AUTH
                      wrong"); GET and POST alike
--tls serves https with that certificate and key.
A request line with an absolute URL (http://host/path, as to a proxy) is
served as its path and logged as "PROXY".
"""
import base64
import bisect
import os
import re
import ssl
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

pages = {}
auth = None  # "USER:PASS" that /auth/ pages want
symbols = None  # (maps [(start, end, offset)], loads [(off, vaddr, filesz)], values, ends, names)
log_lock = threading.Lock()


def load_symbols(dump, remote, local):
    maps = []
    with open(dump, errors="replace") as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ ([0-9a-f]+) \S+ \S+ +(\S.*)$", line.rstrip("\n"))
            if m and m.group(4) == remote:
                maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
    loads = []
    for line in subprocess.run(["readelf", "-lW", local], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        w = line.split()
        if w and w[0] == "LOAD":
            loads.append((int(w[1], 16), int(w[2], 16), int(w[4], 16)))
    syms = []
    for line in subprocess.run(["nm", "-S", "--defined-only", local], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        w = line.split()
        if len(w) == 4 and w[2] in "tTwWiI":
            syms.append((int(w[0], 16), int(w[1], 16), w[3]))
    syms.sort()
    return (maps, loads, [s[0] for s in syms], [s[0] + s[1] for s in syms], [s[2] for s in syms])


def lookup(addr):
    maps, loads, values, ends, names = symbols
    for start, end, off in maps:
        if start <= addr < end:
            foff = addr - start + off
            for poff, pvaddr, filesz in loads:
                if poff <= foff < poff + filesz:
                    vaddr = foff - poff + pvaddr
                    i = bisect.bisect_right(values, vaddr) - 1
                    if i >= 0 and vaddr < ends[i]:
                        return names[i]
    return None


def bomb_parts():
    """A gzip stream's header and one block that inflates to 1 MiB of heap
    profile text: after a full flush the compressor starts afresh, so the
    same input gives the same bytes, and the block can be repeated."""
    line = b"@ 0x1 0x2 0x3\n  t*: 1: 64 [0: 0]\n"
    block = line * ((1 << 20) // len(line))
    block += b"#" * ((1 << 20) - len(block) - 1) + b"\n"
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = co.compress(b"heap_v2/524288\n  t*: 0: 0 [0: 0]\n") + co.flush(zlib.Z_FULL_FLUSH)
    one = co.compress(block) + co.flush(zlib.Z_FULL_FLUSH)
    two = co.compress(block) + co.flush(zlib.Z_FULL_FLUSH)
    assert one == two
    return head, one


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def note(self, what):
        with log_lock, open(sys.argv[2], "a") as f:
            f.write(what + "\n")

    def send(self, code, body, ctype="text/plain", headers=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def not_found(self):
        self.send(404, b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
                  b"<body><h1>Not Found</h1><p>No such page.</p></body></html>\n", "text/html")

    def split(self):
        path = self.path
        if path.startswith("http://"):
            path = "/" + path.split("/", 3)[3] if path.count("/") >= 3 else "/"
            self.note("PROXY " + self.path)
        u = urlsplit(path)
        return u.path, parse_qs(u.query)

    def authorized(self, path):
        """For /auth/ paths: whether the request carries --auth's user and
        password (else a 401 is sent)."""
        got = self.headers.get("Authorization", "")
        if not got:
            self.note("AUTH missing")
        elif got == "Basic " + base64.b64encode(auth.encode()).decode():
            self.note("AUTH ok")
            return True
        else:
            self.note("AUTH wrong")
        self.send(401, b"authentication needed\n",
                  headers=[("WWW-Authenticate", 'Basic realm="pprof"')])
        return False

    def bomb(self):
        head, block = bomb_parts()
        total = len(head) + len(block) * (16 << 10)
        sent = 0
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        try:
            self.wfile.write(head)
            sent += len(head)
            for _ in range(16 << 10):
                self.wfile.write(block)
                sent += len(block)
            self.wfile.flush()
        except OSError:
            pass
        self.note("BOMB sent %d of %d bytes" % (sent, total))
        self.close_connection = True

    def do_GET(self):
        path, q = self.split()
        self.note("GET " + self.path)
        if auth and path.startswith("/auth/"):
            if not self.authorized(path):
                return
            path = path[len("/auth"):]
        encode = path.startswith("/enc/")
        if encode:
            path = path[len("/enc"):]
        if path.startswith("/bomb/"):
            return self.bomb()
        if path.startswith("/bighdr/"):
            return self.send(200, b"x\n", headers=[("X-Padding", "a" * (1 << 20))])
        if path.startswith("/manyhdrs/"):
            return self.send(200, b"x\n",
                             headers=[("X-Padding-%d" % i, "a" * 1024) for i in range(1024)])
        if path.endswith("/pprof/symbol") and symbols and not path.startswith("/nosym/"):
            return self.send(200, b"num_symbols: %d\n" % len(symbols[4]))
        if path.startswith("/html/"):
            return self.send(200, b"<!DOCTYPE html>\n<html><head><title>Welcome to the dashboard"
                             b"</title></head><body>hi</body></html>\n", "text/html")
        if path.startswith("/empty/"):
            return self.send(200, b"")
        if path.startswith("/slow/"):
            time.sleep(60)
            return self.send(200, b"late\n")
        if path.startswith("/big/"):
            return self.send(200, b"x" * (4 << 20))
        if path.startswith("/endless/"):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            chunk = b"heap_v2/524288\n" + b"#" * 65536
            try:
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        if path.startswith("/loop/"):
            return self.send(302, b"", headers=[("Location", path)])
        if path.startswith("/redirect/"):
            return self.send(302, b"", headers=[("Location", path[len("/redirect"):])])
        if path not in pages:
            return self.not_found()
        if path == "/mtev/heap_profile" and q.get("trigger_dump") != ["true"]:
            return self.send(400, b"trigger_dump=true is needed\n")
        if path.endswith("/pprof/profile"):
            secs = int(q.get("seconds", ["0"])[0])
            if secs <= 2:
                time.sleep(secs)
        with open(pages[path], "rb") as f:
            body = f.read()
        if encode:
            return self.send(200, zlib.compress(body, 6, 31),
                             "application/octet-stream", [("Content-Encoding", "gzip")])
        self.send(200, body, "application/octet-stream")

    def do_POST(self):
        path, _ = self.split()
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode()
        addrs = [a for a in body.split("+") if a]
        self.note("POST %s %d addresses" % (self.path, len(addrs)))
        if auth and path.startswith("/auth/"):
            if not self.authorized(path):
                return
            path = path[len("/auth"):]
        if not path.endswith("/pprof/symbol") or not symbols or path.startswith("/nosym/"):
            return self.not_found()
        out = []
        for a in addrs:
            v = int(a, 16)
            out.append("0x%016x\t%s\n" % (v, lookup(v) or "??"))
        self.send(200, "".join(out).encode())


def main():
    global symbols, auth
    tls = None
    args = sys.argv[3:]
    while args:
        if args[0] == "--page":
            k, v = args[1].split("=", 1)
            pages[k] = v
            args = args[2:]
        elif args[0] == "--symbols":
            symbols = load_symbols(args[1], args[2], args[3])
            args = args[4:]
        elif args[0] == "--auth":
            auth = args[1]
            args = args[2:]
        elif args[0] == "--tls":
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(args[1], args[2])
            args = args[3:]
        else:
            sys.exit("pprof_server.py: unknown argument " + args[0])
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if tls:
        srv.socket = tls.wrap_socket(srv.socket, server_side=True)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    srv.serve_forever()


if __name__ == "__main__":
    main()
