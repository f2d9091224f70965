#!/usr/bin/env python3
"""A test server that answers as the servers jheap fetches profiles from do
(Databend's /debug/mem, gperftools and brpc's /pprof/*, libmtev's
heap_profile), on 127.0.0.1 only, on a port the system picks.

  pprof_server.py PORTFILE LOGFILE [--page PATH=FILE]...
                  [--symbols DUMP REMOTE_PATH LOCAL_BINARY] [--tls CERT KEY]

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
  /redirect/PATH      a redirect to PATH
  anything else       404 with an HTML page
--tls serves https with that certificate and key.
A request line with an absolute URL (http://host/path, as to a proxy) is
served as its path and logged as "PROXY".
"""
import bisect
import os
import re
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

pages = {}
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

    def do_GET(self):
        path, q = self.split()
        self.note("GET " + self.path)
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
            self.send(200, f.read(), "application/octet-stream")

    def do_POST(self):
        path, _ = self.split()
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode()
        addrs = [a for a in body.split("+") if a]
        self.note("POST %s %d addresses" % (self.path, len(addrs)))
        if not path.endswith("/pprof/symbol") or not symbols or path.startswith("/nosym/"):
            return self.not_found()
        out = []
        for a in addrs:
            v = int(a, 16)
            out.append("0x%016x\t%s\n" % (v, lookup(v) or "??"))
        self.send(200, "".join(out).encode())


def main():
    global symbols
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
