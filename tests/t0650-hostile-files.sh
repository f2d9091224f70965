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
	dwo=$(ls split/*.dwo) && rm "$dwo" && mkfifo "$dwo" &&
	dump_with_program "$PWD/split/prog" >split.heap &&
	bounded 20 --no-cache split.heap && test $(cat rc) -le 1 &&
	grep "\.dwo. is not a regular file: not read as debug information" err
'

test_done
