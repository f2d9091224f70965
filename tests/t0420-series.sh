#!/bin/bash
test_description='a series of dumps: --timeline, --peak, --growth (kinds, --cum, --lines, --files), bad series, --churn against heaptrack, the dump at exit'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

# testdata/w_growth.c, ten manual dumps (prof.dump after each step) and
# the dump at exit:
#   build_cache 8388608 B from the start; leak_step 65536 B more each
#   step (65536 after step 0); spike 8388608 B in dumps 3 and 4 only.
# Totals: 8388608 + 65536 * (k + 1) + 81920 (libstdc++'s pool), plus the
# spike in dumps 3 and 4.
total_at() {
	echo $((8388608 + 65536 * ($1 + 1) + 81920 + ($1 == 3 || $1 == 4 ? 8388608 : 0)))
}

test_expect_success 'build the workloads and a series of dumps' '
	cc -O0 -g -o w_growth "$SRCDIR/testdata/w_growth.c" -ldl &&
	cc -O0 -g -o w_churn "$SRCDIR/testdata/w_churn.c" &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/g ./w_growth &&
	test $(ls g.*.m*.heap | wc -l) -eq 10 && test $(ls g.*.f.heap | wc -l) -eq 1 &&
	ls g.*.heap | sed -n "s/^g\.\([0-9]*\)\..*/\1/p" | sort -u >pid && test $(wc -l <pid) -eq 1
'
PID=$(cat pid 2>/dev/null)

# --- --timeline -------------------------------------------------------
test_expect_success '--timeline: a row per dump in sequence order, the totals and changes of each' '
	"$JHEAP" --timeline --show_bytes $(ls g.*.heap | sort -r) >tl &&
	sed -n 1p tl | grep "^Timeline of inuse_space over 11 dumps (B; when: " &&
	sed -n 2p tl | grep -E "^ +when +inuse_space +change +dump +grew most\$" &&
	for k in 0 1 2 3 4 5 6 7 8 9; do
		sed -n "$((k + 3))p" tl | grep -E " $(total_at $k) .* g\.$PID\.$k\.m$k\.heap \(manual\) " || return 1
	done &&
	sed -n 13p tl | grep -E " $((8388608 + 65536 * 10 + 81920)) .* g\.$PID\.10\.f\.heap \(at exit\)" &&
	sed -n 3p tl | grep -E " \+8388608 build_cache\$" &&
	sed -n 6p tl | grep -E " \+8454144  g\.$PID\.3\.m3\.heap \(manual\) +\+8388608 spike\$" &&
	sed -n 8p tl | grep -E " -8323072  g\.$PID\.5\.m5\.heap \(manual\) +\+65536 leak_step\$" &&
	sed -n 14p tl | grep "^Peak: $(total_at 4) B in g\.$PID\.4\.m4\.heap, dump 5 of 11 (--peak reports it)\$"
'

test_expect_success '--timeline: the files'"'"' times when they order the dumps, else the sequence numbers' '
	mkdir -p t && cp g.$PID.1.m1.heap g.$PID.2.m2.heap g.$PID.3.m3.heap t/ &&
	touch -d @1000000000 t/g.$PID.1.m1.heap && touch -d @1000000002.5 t/g.$PID.2.m2.heap &&
	touch -d @1000000010 t/g.$PID.3.m3.heap &&
	"$JHEAP" --timeline t/*.heap >times &&
	grep "when: seconds after the first dump, from the files. times)" times &&
	sed -n 3,5p times | awk "{ print \$1 }" >when && printf "0.000\n2.500\n10.000\n" >expected &&
	test_cmp expected when &&
	touch -d @1000000000 t/*.heap &&
	"$JHEAP" --timeline t/*.heap >seqs &&
	grep "when: the sequence numbers in the file names)" seqs &&
	sed -n 3,5p seqs | awk "{ print \$1 }" >when && printf "1\n2\n3\n" >expected && test_cmp expected when
'

test_expect_success '--timeline --cum: what grew most among callers is the callee, not main' '
	"$JHEAP" --timeline --cum --show_bytes g.*.heap >tlc &&
	sed -n 2p tlc | grep "grew most (callers too)" &&
	sed -n 4p tlc | grep -E " \+65536 leak_step\$"
'

test_expect_success '--timeline with --allocator-style options it cannot take: usage errors' '
	"$JHEAP" --timeline --growth g.*.heap 2>err; test $? -eq 2 && grep "does not combine with --growth" err &&
	"$JHEAP" --timeline --collapsed g.*.heap 2>err; test $? -eq 2 && grep "only one output format" err &&
	"$JHEAP" --all-dumps g.*.heap 2>err; test $? -eq 2 && grep "goes with --growth" err
'

# --- --peak -----------------------------------------------------------
test_expect_success '--peak: the largest dump is reported, and named' '
	"$JHEAP" --peak --show_bytes g.*.heap >pk 2>pk.err &&
	grep "^jheap: --peak: the largest of the 11 dumps is g\.$PID\.4\.m4\.heap, $(total_at 4) B in use (dump 5 in order); the report is of it\$" pk.err &&
	"$JHEAP" --show_bytes g.$PID.4.m4.heap >alone &&
	test_cmp alone pk &&
	grep -E "^ *8388608 .* spike\$" pk
'

# --- --growth: which dumps, --cum, --lines, --files --------------------
test_expect_success '--growth leaves out the dump at exit and says which dumps it fitted' '
	"$JHEAP" --growth --show_bytes g.*.heap >gr &&
	sed -n 1p gr | grep "^Growth of inuse_space over 10 profiles, g\.$PID\.0\.m0\.heap to g\.$PID\.9\.m9\.heap (B per profile" &&
	sed -n 3p gr | grep -E "^ +65536 +1\.00 +65536 +655360 +589824 leak_step\$" &&
	tail -n 1 gr | grep "^Left out (not of the regular series; --all-dumps fits them too): g\.$PID\.10\.f\.heap (at exit)\$" &&
	"$JHEAP" --growth --show_bytes --all-dumps g.*.heap >all &&
	sed -n 1p all | grep "over 11 profiles, g\.$PID\.0\.m0\.heap to g\.$PID\.10\.f\.heap" &&
	! grep "^Left out" all
'

test_expect_success '--growth with other formats: a note names what was left out' '
	"$JHEAP" --growth --collapsed g.*.heap >folded 2>err &&
	grep "^jheap: --growth: left out 1 dump not of the regular series" err &&
	grep -E ";leak_step 589824\$" folded
'

test_expect_success '--growth --cum ranks callers with the growth below them' '
	"$JHEAP" --growth --show_bytes g.*.heap >leaf &&
	! grep -E " main\$" leaf &&
	"$JHEAP" --growth --cum --show_bytes g.*.heap >cum &&
	sed -n 1p cum | grep "; --cum: a function.s growth includes its callees." &&
	sed -n 2p cum | grep -E " function\$" &&
	sed -n 3p cum | grep -E "^ +65536 +1\.00 +65536 +655360 +589824 leak_step\$" &&
	grep -E "^ +-?[0-9]+ +[01]\.[0-9]{2} +8454144 +9043968 +589824 main\$" cum
'

test_expect_success '--growth --lines and --files: the leak by its line, then by its file' '
	line=$(grep -n "malloc(16384)" "$SRCDIR/testdata/w_growth.c" | cut -d: -f1) &&
	"$JHEAP" --growth --lines --show_bytes g.*.heap >lines &&
	sed -n 3p lines | grep -E "^ +65536 +1\.00 +65536 +655360 +589824 leak_step .*w_growth\.c:$line\$" &&
	"$JHEAP" --growth --files --show_bytes g.*.heap >files &&
	grep -E "^ +-?[0-9]+ +[01]\.[0-9]{2} +8454144 +9043968 +589824 .*/w_growth\.c\$" files &&
	! grep -E " (leak_step|main)\$" files
'

# --- what is not one series ---------------------------------------------
test_expect_success 'a series of one dump: a usage error' '
	for o in --timeline --growth --peak; do
		"$JHEAP" $o g.$PID.1.m1.heap 2>err; test $? -eq 2 || return 1
		grep "^jheap: $o reads a series: two or more dumps of one process (1 given)" err || return 1
	done
'

test_expect_success 'dumps named for two processes: a usage error naming both' '
	cp g.$PID.2.m2.heap g.999999.2.m2.heap &&
	"$JHEAP" --timeline g.$PID.1.m1.heap g.999999.2.m2.heap 2>err; test $? -eq 2 &&
	grep "^jheap: --timeline: dumps of different processes in one series: .g\.$PID\.1\.m1\.heap. (g, process $PID) and .g\.999999\.2\.m2\.heap. (g, process 999999)" err &&
	rm g.999999.2.m2.heap
'

test_expect_success 'one sequence number twice: a usage error naming both' '
	mkdir -p twice && cp g.$PID.2.m2.heap twice/ &&
	"$JHEAP" --growth g.$PID.2.m2.heap twice/g.$PID.2.m2.heap g.$PID.3.m3.heap 2>err; test $? -eq 2 &&
	grep "^jheap: --growth: .g\.$PID\.2\.m2\.heap. and .twice/g\.$PID\.2\.m2\.heap. have the same sequence number, 2" err
'

test_expect_success 'a dump of another program in the series: named, status 1' '
	cp "$PROFILES/w_basic.exact.heap" g.$PID.50.m50.heap &&
	"$JHEAP" --timeline g.$PID.1.m1.heap g.$PID.50.m50.heap 2>err; test $? -eq 1 &&
	grep "^jheap: dumps of different programs in one series: .g\.$PID\.1\.m1\.heap. is of $TRASH_DIRECTORY/w_growth, .g\.$PID\.50\.m50\.heap. of .*w_basic" err &&
	rm g.$PID.50.m50.heap
'

if [ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" != 0 ]; then
	test_set_prereq ASLR
fi
test_expect_success ASLR 'a dump of another run of the program: another process, named, status 1' '
	mkdir -p run2 &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/run2/h ./w_growth &&
	cp "$(ls run2/h.*.1.m1.heap)" g.$PID.60.m60.heap &&
	"$JHEAP" --peak g.$PID.1.m1.heap g.$PID.60.m60.heap 2>err; test $? -eq 1 &&
	grep "^jheap: dumps of different processes in one series: $TRASH_DIRECTORY/w_growth is loaded at 0x[0-9a-f]* in .g\.$PID\.1\.m1\.heap. and at 0x[0-9a-f]* in .g\.$PID\.60\.m60\.heap." err &&
	rm g.$PID.60.m60.heap
'

# --- --churn against heaptrack's temporary allocations --------------------
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null && test_set_prereq HEAPTRACK

test_expect_success 'w_churn under jheap record with prof_leak: the dump at exit and the leak summary' '
	"$JHEAP" record -q --accum --sample=1 --dir=c --malloc-conf=prof_leak:true -- ./w_churn 2>churn.err &&
	grep "^<jemalloc>: Leak approximation summary: ~4177920 bytes, ~1001 objects, >= 2 contexts\$" churn.err &&
	ls c/w_churn.*.f.heap >exitdump && test $(wc -l <exitdump) -eq 1 &&
	ls c/w_churn.*.leak
'
EXIT=$(cat exitdump 2>/dev/null)

test_expect_success HEAPTRACK 'heaptrack on w_churn: its temporary allocations and its leak' '
	heaptrack -o "$TRASH_DIRECTORY/ht-churn" ./w_churn >ht.out 2>&1 &&
	heaptrack_print -f ht-churn.zst -p 0 -a 0 -T 1 -l 0 -n 2 >ht.temp 2>/dev/null &&
	awk "/temporary allocations of .* from\$/ { getline; print }" ht.temp | head -n 2 >ht.top &&
	test $(wc -l <ht.top) -eq 2 &&
	heaptrack_print -f ht-churn.zst >ht.all 2>/dev/null &&
	sed -n "s/^total memory leaked: //p" ht.all >ht.leaked && test -s ht.leaked
'

# heaptrack's sizes: "4.10M" (powers of 1000), "72.70K", "512B"
ht_bytes() {
	awk '{ v = $1 + 0; u = substr($1, length($1)); if (u == "K") v *= 1e3; else if (u == "M") v *= 1e6; else if (u == "G") v *= 1e9; printf "%.0f\n", v }'
}

test_expect_success HEAPTRACK '--churn_objects: the top two are heaptrack'"'"'s top temporary allocators' '
	"$JHEAP" --churn_objects --nodecount=2 "$EXIT" >churn 2>/dev/null &&
	sed -n 1p churn | grep "^Total: 140000 objects\$" &&
	sed -n 2,3p churn | awk "{ print \$6 }" >ours &&
	test_cmp ht.top ours
'

test_expect_success HEAPTRACK '--churn: bytes allocated and freed again, the same order' '
	"$JHEAP" --churn --show_bytes --nodecount=3 "$EXIT" >bytes 2>/dev/null &&
	sed -n 2,3p bytes | awk "{ print \$6 }" >ours && test_cmp ht.top ours &&
	sed -n 2p bytes | grep -E "^ *9600000 .* temp_a\$" &&
	sed -n 3p bytes | grep -E "^ *2560000 .* temp_b\$" &&
	! grep keep_c bytes
'

test_expect_success '--churn in other formats: folded stacks and callgrind carry it' '
	"$JHEAP" --churn --collapsed "$EXIT" >folded 2>/dev/null &&
	grep -E ";temp_a 9600000\$" folded && grep -E ";temp_b 2560000\$" folded && ! grep keep_c folded &&
	"$JHEAP" --churn_objects --callgrind "$EXIT" >cg 2>/dev/null &&
	grep "^events: churn_objects\$" cg
'

if command -v go >/dev/null; then
	test_set_prereq GO
fi
test_expect_success GO '--churn --proto: go tool pprof reads churn_space as the default value' '
	"$JHEAP" --churn --proto -o churn.pb.gz "$EXIT" 2>/dev/null &&
	HOME=$TRASH_DIRECTORY go tool pprof -top -nodecount=2 churn.pb.gz >pp 2>pp.err &&
	grep -E "^ +9600000B? .* temp_a\$|9\.16MB .* temp_a\$" pp
'

test_expect_success '--churn without prof_accum: status 1, saying what it needs' '
	"$JHEAP" --churn g.$PID.1.m1.heap 2>err; test $? -eq 1 &&
	grep "^jheap: --churn: the profile has no allocation counts .*allocated counts minus those in use; jheap record --accum keeps them" err
'

# --- the dump at exit ---------------------------------------------------
test_expect_success 'a dump at exit: the line under --text, with jemalloc'"'"'s leak summary' '
	"$JHEAP" --show_bytes "$EXIT" >exit.txt &&
	tail -n 2 exit.txt >tail &&
	sed -n 1p tail | grep "^w_churn\.[0-9]*\.[0-9]*\.f\.heap is the dump taken at exit (prof_final): the memory above was never freed" &&
	sed -n 2p tail | grep "^jemalloc.s leak summary (prof_leak, from c/w_churn\.[0-9]*\.leak): ~4177920 bytes, ~1001 objects, >= 2 contexts\.\$" &&
	sed -n 1p exit.txt | grep "^Total: 4177920 B\$"
'

test_expect_success HEAPTRACK 'the dump at exit holds what heaptrack says leaked, within 10%' '
	ht=$(ht_bytes <ht.leaked) &&
	awk -v a=4177920 -v b="$ht" "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.1 * b) }"
'

test_expect_success 'a dump at exit in another format: the note on standard error' '
	"$JHEAP" --collapsed "$EXIT" >/dev/null 2>err &&
	grep "^jheap: note: w_churn\..*\.f\.heap is the dump taken at exit (prof_final): what the report shows was never freed" err &&
	grep "^jheap: note: jemalloc.s leak summary" err
'

test_expect_success 'a leak file of another kind is not read: only a summary line counts' '
	mkdir -p fake && cp "$EXIT" fake/ && base=$(basename "$EXIT") && stem=${base%.*.f.heap} &&
	printf "hello\n" >fake/$stem.leak &&
	"$JHEAP" fake/$base >fake.txt &&
	tail -n 1 fake.txt | grep "is the dump taken at exit" &&
	ln -sf "$TRASH_DIRECTORY/$(ls c/*.leak)" fake/$stem.leak &&
	"$JHEAP" fake/$base >link.txt && tail -n 1 link.txt | grep "is the dump taken at exit"
'

# --- the shell ------------------------------------------------------------
test_expect_success 'the shell: timeline, then peak, then peak off' '
	printf "timeline --show_bytes\npeak\ntop 1\npeak off\ntop 1\nquit\n" |
		"$JHEAP" --interactive g.*.heap >sh.out 2>sh.err &&
	grep "^Timeline of inuse_space over 11 dumps (B; " sh.out &&
	grep "^Peak: $(total_at 4) B in g\.$PID\.4\.m4\.heap, dump 5 of 11" sh.out &&
	grep "^jheap: --peak: the largest of the 11 dumps is g\.$PID\.4\.m4\.heap" sh.err &&
	grep -c "^Total: " sh.out >n && echo 2 >expected && test_cmp expected n &&
	grep "^Total: 16\.4 MB\$" sh.out &&
	grep "^jheap: the reports are of all 11 profiles again\$" sh.err
'

test_done
