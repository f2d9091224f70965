#!/bin/bash
test_description='files a profile or an object names: never a FIFO or a device, no local file shown unless the user pointed there'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles
B=$PROFILES/w_basic
H=$PROFILES/w_basic.exact.heap

# bounded SECS ARGS...: jheap ARGS with out, err and its status in rc;
# killed after SECS seconds (status 137), which no test expects.
bounded() {
	local secs=$1
	shift
	rm -f out err rc
	timeout -s KILL "$secs" "$JHEAP" "$@" >out 2>err
	echo $? >rc
}

# a dump of w_basic whose program is at PATH
dump_with_program() {
	sed "s|$B\$|$1|" "$H"
}

test_expect_success 'a FIFO named as the program in the maps: skipped, no hang' '
	mkfifo fifo && dump_with_program "$PWD/fifo" >fifo.heap &&
	bounded 20 --no-cache fifo.heap &&
	test $(cat rc) -le 1 &&
	grep "^jheap: warning: .*/fifo. is not a regular file (a FIFO): not read" err &&
	grep "^Total: 4.8 MB" out
'

test_expect_success 'a character device named as the program: never opened' '
	ln -s /dev/zero zero && dump_with_program "$PWD/zero" >zero.heap &&
	bounded 20 --no-cache zero.heap &&
	test $(cat rc) -le 1 &&
	grep "is not a regular file (a character device)" err
'

# w_basic without its DWARF, pointing at w.debug with its debuglink
make_stripped() {
	mkdir -p "$1" &&
	cp "$B" "$1/full" && objcopy --only-keep-debug "$1/full" "$1/w.debug" &&
	objcopy --strip-debug $2 --add-gnu-debuglink="$1/w.debug" "$1/full" "$1/prog" &&
	rm "$1/full"
}

test_expect_success 'a .gnu_debuglink naming a FIFO: skipped with a warning, symbols from the ELF' '
	make_stripped dl --remove-section=.note.gnu.build-id &&
	dump_with_program "$PWD/dl/prog" >dl.heap &&
	bounded 20 --no-cache --lines dl.heap && test $(cat rc) -eq 0 &&
	grep -q "w_basic.c:" out &&
	rm dl/w.debug && mkfifo dl/w.debug &&
	bounded 20 --no-cache --lines dl.heap && test $(cat rc) -eq 0 &&
	grep "^jheap: warning: .*/dl/prog: .*/dl/w.debug. is not a regular file: not read as debug information" err &&
	grep -q " alloc_malloc ??:0" out
'

test_expect_success 'a build-id debug file that is a FIFO, under --debuginfo-dir: skipped' '
	make_stripped bid "" &&
	id=$(readelf -n bid/prog | sed -n "s/.*Build ID: //p") && test -n "$id" &&
	mkdir -p dbg/.build-id/${id%${id#??}} && mkfifo dbg/.build-id/${id%${id#??}}/${id#??}.debug &&
	rm bid/w.debug &&
	dump_with_program "$PWD/bid/prog" >bid.heap &&
	bounded 20 --no-cache --debuginfo-dir=dbg bid.heap && test $(cat rc) -eq 0 &&
	grep "/dbg/.build-id/.*debug. is not a regular file" err
'

test_expect_success 'a dwz alt file (.gnu_debugaltlink) that is a FIFO: libdw is not let open it' '
	mkdir -p alt && { printf "alt.debug\0"; head -c 20 /dev/urandom; } >alt/link.bin &&
	objcopy --add-section .gnu_debugaltlink=alt/link.bin "$B" alt/prog &&
	mkfifo alt/alt.debug &&
	dump_with_program "$PWD/alt/prog" >alt.heap &&
	bounded 20 --no-cache alt.heap && test $(cat rc) -eq 0 &&
	grep "alt/alt.debug. is not a regular file: not read as debug information" err &&
	grep -q " alloc_malloc\$" out
'

test_expect_success 'a split-DWARF unit whose .dwo is a FIFO: that DWARF is not read' '
	mkdir -p split && (cd split && cc -g -gsplit-dwarf -O1 -o prog "$SRCDIR/testdata/w_basic.c") &&
	# a real dump of this program: a dump of another build would fail the
	# call check and its DWARF would never be read
	jemalloc=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libjemalloc.so.2 &&
	(cd split && LD_PRELOAD=$jemalloc MALLOC_CONF=prof:true,lg_prof_sample:0,prof_final:true,prof_prefix:$PWD/d ./prog </dev/null) &&
	cp split/d.*.heap split.heap &&
	dwo=$(ls split/*.dwo) && rm "$dwo" && mkfifo "$dwo" &&
	bounded 20 --no-cache split.heap && test $(cat rc) -le 1 &&
	grep "\.dwo. is not a regular file: not read as debug information" err
'

# --- --list: which source files are read ------------------------------------
MKPPROF="python3 $SRCDIR/tests/tools/mkpprof.py"
test_have_prog python3 && test_set_prereq PYTHON

test_expect_success PYTHON '--list does not show a local file a pprof profile names' '
	$MKPPROF shadow.pb --file /etc/passwd --line 1 &&
	bounded 20 --list=fn shadow.pb && test $(cat rc) -eq 0 &&
	! grep -q "root:" out &&
	grep "(source not shown: ./etc/passwd. is named by the profile file, not by an object file.s debug information: read only under --source-dir)" out &&
	grep -E "^ +0\.0 +0\.0 +1\$" out
'

test_expect_success PYTHON '--list reads a profile-named file under --source-dir, and nowhere else' '
	mkdir -p src/etc && echo "int from_the_source_dir;" >src/etc/passwd &&
	bounded 20 --list=fn --source-dir=src shadow.pb && test $(cat rc) -eq 0 &&
	grep "1: int from_the_source_dir;" out &&
	$MKPPROF up.pb --file ../../../../../../../../etc/passwd --line 1 &&
	bounded 20 --list=fn --source-dir=src up.pb && test $(cat rc) -eq 0 &&
	! grep -q "root:" out && grep -q "1: int from_the_source_dir;" out &&
	ln -s /etc src/link && $MKPPROF link.pb --file link/group --line 1 &&
	bounded 20 --list=fn --source-dir=src link.pb && test $(cat rc) -eq 0 &&
	! grep -q "root:" out && grep -q "source not shown" out
'

test_expect_success PYTHON '--list: FIFOs and devices are not read, even under --source-dir' '
	mkdir -p sp && mkfifo sp/fifo.c && ln -s /dev/zero sp/zero.c &&
	$MKPPROF f.pb --file fifo.c --line 3 && $MKPPROF z.pb --file zero.c --line 3 &&
	bounded 20 --list=fn --source-dir=sp f.pb && test $(cat rc) -eq 0 &&
	grep "source not shown: .*sp/fifo.c. is not a regular file (a FIFO): not read" out &&
	bounded 20 --list=fn --source-dir=sp z.pb && test $(cat rc) -eq 0 &&
	grep -q "source not shown" out && ! grep -q " 3: " out
'

test_expect_success PYTHON '--list: a source file over 64 MiB is not read' '
	mkdir -p sz && truncate -s 65M sz/huge.c && $MKPPROF h.pb --file huge.c --line 3 &&
	bounded 20 --list=fn --source-dir=sz h.pb && test $(cat rc) -eq 0 &&
	grep "huge.c. is larger than 64 MiB: not read" out
'

test_expect_success PYTHON '--list: line 2147483647 ends, with or without the source' '
	$MKPPROF far.pb --file far.c --line 2147483647 &&
	bounded 20 --list=fn far.pb && test $(cat rc) -eq 0 &&
	grep -E "^ +0\.0 +0\.0 2147483647\$" out &&
	mkdir -p fs && seq 10 >fs/far.c &&
	bounded 20 --list=fn --source-dir=fs far.pb && test $(cat rc) -eq 0 &&
	grep -q "^ROUTINE" out
'

# --- child processes: dot and objdump ---------------------------------------
# The dot sleeps 600 s (exec: the process jheap stops is the sleep); a run
# that waits for it is killed at 120 s, far from the 1 s limit either way.
test_expect_success 'a dot that never ends is stopped after JHEAP_CHILD_TIMEOUT' '
	mkdir -p sleepy && printf "#!/bin/sh\nexec sleep 600\n" >sleepy/dot && chmod +x sleepy/dot &&
	PATH=$TRASH_DIRECTORY/sleepy:$PATH JHEAP_CHILD_TIMEOUT=1 bounded 120 --svg "$H" &&
	test $(cat rc) -eq 1 &&
	grep "^jheap: graphviz .dot -Tsvg. did not finish within 1 s: stopped" err
'

test_expect_success 'an objdump that prints forever is stopped at the output cap' '
	mkdir -p chatty && printf "#!/bin/sh\nexec yes objdump-says-hello\n" >chatty/objdump &&
	chmod +x chatty/objdump &&
	PATH=$TRASH_DIRECTORY/chatty:$PATH bounded 30 --disasm=alloc_malloc "$H" &&
	test $(cat rc) -eq 1 &&
	grep "^jheap: objdump wrote more than 67108864 bytes: stopped" err &&
	PATH=$TRASH_DIRECTORY/chatty:$PATH JHEAP_CHILD_MAX_OUTPUT=1000 bounded 30 --disasm=alloc_malloc "$H" &&
	grep "wrote more than 1000 bytes" err
'

test_expect_success 'an object file named --version is a file to objdump, not an option' '
	mkdir -p ver && cp "$B" ver/--version &&
	sed "s|$B\$|--version|" "$H" >ver/v.heap &&
	(cd ver && "$JHEAP" --no-cache --disasm=alloc_malloc v.heap >../out 2>../err) &&
	grep -qE "^ +[0-9.]+ +[0-9.]+ +[0-9a-f]+: +call " out && ! grep -q "GNU objdump" out
'

test_expect_success 'dot and objdump get descriptors 0, 1 and 2 only (close-on-exec)' '
	mkdir -p fdl && cat >fdl/fdlist.c <<-\EOF &&
	#include <dirent.h>
	#include <stdio.h>
	#include <stdlib.h>
	#include <unistd.h>
	int main(void)
	{
		char buf[4096];
		while (read(0, buf, sizeof(buf)) > 0)
			;
		FILE *f = fopen(getenv("FDLIST_OUT"), "a");
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		while ((e = readdir(d))) {
			int fd = atoi(e->d_name);
			if (e->d_name[0] == 0x2e || fd <= 2 || fd == dirfd(d) || fd == fileno(f))
				continue;
			char p[64], t[512];
			snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
			ssize_t n = readlink(p, t, sizeof(t) - 1);
			t[n > 0 ? n : 0] = 0;
			fprintf(f, "fd %d: %s\n", fd, t);
		}
		return 0;
	}
	EOF
	cc -o fdl/dot fdl/fdlist.c && cp fdl/dot fdl/objdump &&
	export FDLIST_OUT=$TRASH_DIRECTORY/fds && : >fds &&
	PATH=$TRASH_DIRECTORY/fdl:$PATH bounded 30 --svg -o fd.svg dl.heap &&
	PATH=$TRASH_DIRECTORY/fdl:$PATH bounded 30 --disasm=alloc_malloc "$H" &&
	PATH=$TRASH_DIRECTORY/fdl:$PATH bounded 30 --disasm=alloc_malloc dl.heap &&
	mkdir -p split2 && (cd split2 && cc -g -gsplit-dwarf -O1 -o prog "$SRCDIR/testdata/w_basic.c") &&
	dump_with_program "$PWD/split2/prog" >split2.heap &&
	PATH=$TRASH_DIRECTORY/fdl:$PATH bounded 30 --no-cache --svg -o split.svg split2.heap &&
	test ! -s fds || { cat fds; false; }
'

# --- -o FILE -------------------------------------------------------------------
test_expect_success '-o FILE: a failed run leaves the previous FILE and no temporary file' '
	mkdir -p broken && printf "#!/bin/sh\ncat >/dev/null; echo half; exit 3\n" >broken/dot &&
	chmod +x broken/dot && echo previous >g.svg &&
	PATH=$TRASH_DIRECTORY/broken:$PATH bounded 30 --svg -o g.svg "$H" &&
	test $(cat rc) -eq 1 && grep "failed (exit status 3)" err &&
	echo previous >expect && test_cmp expect g.svg &&
	test -z "$(ls -A | grep "^\.g\.svg\.")" &&
	bounded 30 --list=no-such-function -o g.svg "$H" && test $(cat rc) -eq 1 &&
	test_cmp expect g.svg
'

test_expect_success '-o FILE: a good run replaces FILE, keeps its mode, follows a link' '
	echo previous >r.txt && chmod 640 r.txt && ln -sf r.txt r.link &&
	bounded 30 --show_bytes -o r.link "$H" && test $(cat rc) -eq 0 &&
	test -L r.link && grep -q "^Total: 5071872 B" r.txt &&
	test "$(stat -c %a r.txt)" = 640 &&
	(umask 027 && bounded 30 -o new.txt "$H") && test "$(stat -c %a new.txt)" = 640 &&
	bounded 30 -o /dev/null "$H" && test $(cat rc) -eq 0
'

test_done
