#!/usr/bin/env python3
"""listenport.py PID [SECONDS]: print the TCP port that process PID, or
one of its descendants, listens on, once it does.

For servers told to bind port 0 (the kernel picks a free port) that do not
print the port they got: the tests start them so, and read the port back
here, instead of picking a free port, releasing it and hoping nobody takes
it before the server binds it.

Waits at most SECONDS (default 120); exits 1, saying why, when the time is
up or the process has ended without listening.  With several listening
sockets, the lowest port is printed.
"""
import os
import sys
import time


def descendants(root):
    """ROOT and every process below it (from each process's parent in
    /proc/N/stat)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def socket_inodes(pids):
    inodes = set()
    for p in pids:
        try:
            fds = os.listdir("/proc/%d/fd" % p)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink("/proc/%d/fd/%s" % (p, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    return inodes


def listening_ports(pid, inodes):
    ports = set()
    for table in ("tcp", "tcp6"):
        try:
            with open("/proc/%d/net/%s" % (pid, table)) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # local address "ADDR:PORT" in hex, state 0A is LISTEN, inode
            if len(fields) > 9 and fields[3] == "0A" and fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def main():
    if len(sys.argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    pid = int(sys.argv[1])
    secs = float(sys.argv[2]) if len(sys.argv) == 3 else 120
    until = time.monotonic() + secs
    while True:
        if not alive(pid):
            sys.stderr.write("listenport: process %d ended without listening on a TCP port\n" % pid)
            return 1
        ports = listening_ports(pid, socket_inodes(descendants(pid)))
        if ports:
            print(min(ports))
            return 0
        if time.monotonic() >= until:
            sys.stderr.write("listenport: process %d did not listen on a TCP port within %g s\n"
                             % (pid, secs))
            return 1
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
