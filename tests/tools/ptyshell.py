#!/usr/bin/env python3
"""ptyshell.py: drive an interactive program in a pseudo-terminal, as a
person at a terminal would, for the tests of jheap's shell.

Usage: ptyshell.py [--cols N] [--rows N] [--timeout S] [--prompt P]
                   [--transcript FILE] [--plain] SCRIPT -- PROGRAM [ARGS...]

The program runs on the slave side of a new pseudo-terminal (standard
input, output and error, its controlling terminal), with TERM=xterm unless
TERM is set, and a window of COLS x ROWS (200 x 50).  SCRIPT holds one
step a line:

  cmd NAME LINE   type LINE and Enter, wait for the next prompt, and write
                  what the program printed in between (the echo of LINE
                  dropped, CR LF turned into LF) to the file NAME; "-" as
                  NAME keeps nothing
  keys TEXT       type TEXT (Python escapes: \\t is Tab, \\x1b[A the Up
                  arrow, \\x03 Ctrl-C, \\x04 Ctrl-D, \\r Enter)
Keys are typed once the program has put the terminal in raw mode, as a
line editor does at its prompt; with --plain (a program that reads plain
lines, the terminal in canonical mode), at once: the terminal echoes
them and keeps them until the program reads.
  expect REGEX    wait until the output since the last step matches REGEX
  prompt          wait for the next prompt
  screen NAME     write the output since the last step, as it came, to NAME:
                  nothing waits for more, so an "expect" before it says
                  what must have come (the end of a listing, the prompt
                  after it)
  time NAME LINE  like cmd, and append "SECONDS BYTES LINE" to the file
                  NAME: the seconds from Enter to the next prompt and the
                  bytes printed in between
  exit STATUS     wait for the program to end with STATUS

No step waits a fixed time: each waits for what it names.  A step that
times out (TIMEOUT seconds, 30) fails: the exit status is 1
and what the program printed last is on standard error.  --transcript
writes everything the program printed to FILE.
"""
import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time


class Session:
    def __init__(self, argv, cols, rows, timeout, prompt, plain):
        self.timeout = timeout
        self.plain = plain
        self.prompt = prompt.encode()
        self.buf = bytearray()   # appended in place: a report may be megabytes
        self.mark = 0
        self.status = None
        pid, fd = pty.fork()
        if pid == 0:
            os.environ.setdefault("TERM", "xterm")
            try:
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def read_some(self, until):
        left = until - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([self.fd], [], [], min(left, 0.2))
        if r:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                data = b""
            if not data:
                self.reap()
                return False
            self.buf += data
        elif self.status is None:
            self.reap(nohang=True)
        return True

    def reap(self, nohang=False):
        if self.status is not None:
            return
        pid, st = os.waitpid(self.pid, os.WNOHANG if nohang else 0)
        if pid:
            self.status = os.waitstatus_to_exitcode(st)

    def wait_for(self, pattern, reach=None):
        """The first match of PATTERN after the mark; REACH, when given,
        is the longest text it can match, so that only the new output
        (and REACH bytes before it) is searched after each read."""
        until = time.monotonic() + self.timeout
        start = self.mark
        while True:
            m = pattern.search(self.buf, start)
            if m:
                return m
            if reach is not None:
                start = max(self.mark, len(self.buf) - reach)
            if not self.read_some(until) and (self.status is not None or time.monotonic() >= until):
                m = pattern.search(self.buf, self.mark)
                if m:
                    return m
                fail("timed out waiting for %r" % pattern.pattern)

    def wait_prompt(self):
        return self.wait_for(re.compile(re.escape(self.prompt)), len(self.prompt))

    def send(self, data):
        self.wait_raw()
        os.write(self.fd, data)

    def wait_raw(self):
        """Waits until the program has put the terminal out of canonical
        mode, as a line editor does once it shows its prompt: keys typed
        before that would be echoed twice, by the terminal and by the
        editor.  A person does not type that fast.  A program that reads
        plain lines (--plain) never does: its keys go once it waits in
        read(2) on the terminal (a Ctrl-C typed before would reach it
        between its prompt and its read)."""
        until = time.monotonic() + self.timeout
        while self.status is None:
            if self.plain:
                if self.reading():
                    return
            else:
                try:
                    if not termios.tcgetattr(self.fd)[3] & termios.ICANON:
                        return
                except termios.error:
                    return
            if time.monotonic() >= until:
                if self.plain:
                    fail("timed out after %g s waiting for the program to read the terminal"
                         % self.timeout)
                fail("timed out after %g s waiting for the program to put the terminal "
                     "in raw mode (a line editor at its prompt; --plain for a program "
                     "that reads plain lines)" % self.timeout)
            self.read_some(min(until, time.monotonic() + 0.01))

    def reading(self):
        """The program waits in read(2) on standard input, from
        /proc/PID/syscall ("running" while it runs; the parent may read
        it).  Where that file cannot be read, true."""
        try:
            with open("/proc/%d/syscall" % self.pid) as f:
                fields = f.read().split()
        except OSError:
            return True
        return len(fields) > 1 and fields[0] == str(READ_SYSCALL) and int(fields[1], 16) == 0


def fail(msg):
    sys.stderr.write("ptyshell: %s\n" % msg)
    if SESSION is not None:
        tail = bytes(SESSION.buf[-2000:]).decode("utf-8", "replace")
        sys.stderr.write("ptyshell: the last output:\n%s\n" % tail)
    sys.exit(1)


SESSION = None
# read(2)'s number, as /proc/PID/syscall shows it
READ_SYSCALL = {"x86_64": 0, "aarch64": 63, "riscv64": 63, "ppc64le": 3,
                "s390x": 3, "i686": 3, "armv7l": 3}.get(os.uname().machine, 0)


def clean(data, echoed):
    """The output of a command: after the echo of its line, CR LF as LF."""
    text = data.replace(b"\r\n", b"\n")
    first = text.find(b"\n")
    if echoed is not None and first >= 0:
        text = text[first + 1:]
    return text


def main():
    global SESSION
    args = sys.argv[1:]
    opts = {"--cols": "200", "--rows": "50", "--timeout": "30", "--prompt": "(jheap) ",
            "--transcript": None}
    plain = False
    while args and (args[0] in opts or args[0] == "--plain"):
        if args[0] == "--plain":
            plain = True
            args = args[1:]
            continue
        opts[args[0]] = args[1]
        args = args[2:]
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write(__doc__)
        return 2
    script, argv = args[0], args[2:]
    with open(script) as f:
        steps = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
    SESSION = s = Session(argv, int(opts["--cols"]), int(opts["--rows"]),
                          float(opts["--timeout"]), opts["--prompt"], plain)
    try:
        for step in steps:
            verb, _, rest = step.partition(" ")
            if verb in ("cmd", "time"):
                name, _, line = rest.partition(" ")
                s.wait_prompt()
                s.mark = len(s.buf)
                t0 = time.monotonic()
                s.send(line.encode() + b"\r")
                # the echo of the line ends with its newline; the output
                # ends where the next prompt starts
                m = s.wait_prompt()
                t1 = time.monotonic()
                out = clean(bytes(s.buf[s.mark:m.start()]), line)
                if name != "-" and verb == "cmd":
                    with open(name, "wb") as f:
                        f.write(out)
                if verb == "time":
                    with open(name, "a") as f:
                        f.write("%.4f %d %s\n" % (t1 - t0, len(out), line))
                s.mark = m.start()
            elif verb == "keys":
                s.mark = len(s.buf)
                s.send(rest.encode().decode("unicode_escape").encode("latin-1"))
            elif verb == "expect":
                s.wait_for(re.compile(rest.encode()))
            elif verb == "prompt":
                m = s.wait_prompt()
                s.mark = m.end()
            elif verb == "screen":
                with open(rest, "wb") as f:
                    f.write(s.buf[s.mark:])
                s.mark = len(s.buf)
            elif verb == "exit":
                until = time.monotonic() + s.timeout
                while s.status is None and time.monotonic() < until:
                    s.read_some(until)
                if s.status is None:
                    fail("the program did not end")
                if s.status != int(rest):
                    fail("the program ended with status %d, not %s" % (s.status, rest))
            else:
                fail("unknown step %r" % step)
    finally:
        if opts["--transcript"]:
            with open(opts["--transcript"], "wb") as f:
                f.write(s.buf)
        if s.status is None:
            try:
                os.kill(s.pid, 9)
                os.waitpid(s.pid, 0)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
