#!/bin/bash
test_description='jheap record'"'"'s dump folder between local users: made private, checked once opened, never one another user made

jemalloc writes each dump by its path with creat(), following links.  A
folder named like the next jheap-PID, made first by another user in a
shared folder with links named like the coming dumps, made the recording
overwrite any file the recording user could write.  Record must refuse
such a folder (and every folder that is not its user'"'"'s own, closed to
others) and write nothing; the control library must make no dump through a
link, nor into a file someone else planted.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

test_expect_success 'build the workload' '
	cc -O0 -g -o w_ctl "$SRCDIR/testdata/w_ctl.c" && chmod 755 w_ctl
'
W=$TRASH_DIRECTORY/w_ctl
export W
make_users

# planned NAME USER DIR [RECORD OPTIONS]: jheap record --sample=1 -- w_ctl,
# as USER ("-": as we are), from folder DIR, started by a shell that waits
# for the file NAME.go before it becomes jheap (exec: NAME.pid stays its
# pid), so that a test can plant things named after that pid first.
planned() {
	local name=$1 user=$2 dir=$3
	shift 3
	local run=(sh -c 'while ! test -e "$0"; do sleep 0.05; done; cd "$1" && shift && exec "$JHEAP" record --sample=1 "$@" -- "$W"'
		"$TRASH_DIRECTORY/$name.go" "$dir" "$@")
	if [ "$user" = - ]; then
		bg "$name" "${run[@]}"
	else
		bg "$name" "$AS_USER" "$user" "${run[@]}"
	fi
}

# go NAME: lets the planned record go on, and waits until it has refused
# (exited) or the program runs ("ready": then it is ended with SIGTERM,
# which makes its final dump); NAME.rc gets the exit status.
go() {
	local pid i
	pid=$(cat "$1.pid")
	touch "$1.go"
	for ((i = 0; i < 400; i++)); do
		if grep -q "^ready\$" "$1.out" 2>/dev/null; then
			kill -TERM "$pid"
			break
		fi
		case $(sed "s/.*) //" /proc/"$pid"/stat 2>/dev/null) in Z* | "") break ;; esac
		sleep 0.05
	done
	wait_gone "$pid" 20 || return 1
	wait "$pid"
	echo $? >"$1.rc"
}

# plant DIR BASE PID TARGET: links to TARGET named like the first dumps of
# process PID with prof_prefix DIR/BASE (jemalloc's BASE.PID.SEQ.KIND.heap)
PLANT='d=$1 b=$2 p=$3 t=$4
for s in 0 1 2 3 4 5 6 7; do
	for k in m$s f i$s u$s; do ln -s "$t" "$d/$b.$p.$s.$k.heap" || exit 1; done
done'
plant() {
	sh -c "$PLANT" - "$@"
}

# nothing_written DIR: DIR holds links only (no file was made)
nothing_written() {
	test -z "$(find "$1" -mindepth 1 ! -type l)" || { echo "written in $1:"; ls -la "$1"; return 1; }
}

test_expect_success 'a new jheap-PID is 0700 and its dumps 0600, under umask 000 too' '
	umask 000 &&
	bg a "$JHEAP" record --sample=1 -- ./w_ctl && wait_line a.out "^ready\$" && pid=$(cat a.pid) &&
	test "$(stat -c "%a %u" jheap-$pid)" = "700 $(id -u)" &&
	path=$("$JHEAP" dump $pid) && test "$(stat -c %a "$path")" = 600 &&
	kill -TERM $pid && wait_gone $pid &&
	test "$(stat -c %a jheap-$pid/w_ctl.$pid.*.f.heap)" = 600
'

test_expect_success '--dump-mode=0640 gives the dumps that mode' '
	bg b "$JHEAP" record --sample=1 --dump-mode=0640 --dir=b -- ./w_ctl && wait_line b.out "^ready\$" &&
	path=$("$JHEAP" dump $(cat b.pid)) && test "$(stat -c %a "$path")" = 640 &&
	test "$(stat -c %a b)" = 700 &&
	timeout 20 "$JHEAP" record --dump-mode=0604x -- ./w_ctl 2>err; test $? = 2 &&
	grep "^jheap record: --dump-mode expects a mode in octal" err
'

test_expect_success 'a jheap-PID made first with mode 0777, links named like the dumps in it: refused, the file is untouched' '
	echo "precious" >victim && chmod 600 victim && cp victim victim.orig &&
	mkdir -p here &&
	planned p - "$TRASH_DIRECTORY/here" && pid=$(cat p.pid) &&
	mkdir here/jheap-$pid && chmod 777 here/jheap-$pid &&
	plant here/jheap-$pid w_ctl $pid "$TRASH_DIRECTORY/victim" &&
	go p &&
	{ test "$(cat p.rc)" = 1 || { echo "record: status $(cat p.rc)"; cat p.err; false; }; } &&
	grep "^jheap record: the folder .jheap-$pid. is not a private folder of yours (owner $(id -u) [^,]*, mode 0777): others could read the dumps or put links in their place; nothing written" p.err &&
	test_cmp victim.orig victim && nothing_written here/jheap-$pid &&
	! grep -q ready p.out
'

test_expect_success 'a link named jheap-PID is refused, even to a private folder' '
	mkdir -m 700 mine &&
	planned l - "$TRASH_DIRECTORY/here" && pid=$(cat l.pid) &&
	ln -s "$TRASH_DIRECTORY/mine" here/jheap-$pid &&
	go l && test "$(cat l.rc)" = 1 &&
	grep "^jheap record: .jheap-$pid. is a symbolic link: dumps are written to a folder of yours, never through a link; nothing written" l.err &&
	test -z "$(ls mine)"
'

test_expect_success USERS 'another user'"'"'s jheap-PID (0777, links to the victim'"'"'s file) in a shared folder: refused, the file is untouched' '
	mkdir shared && chmod 1777 shared &&
	mkdir -m 700 vhome && chown $VICTIM: vhome &&
	as_user $VICTIM sh -c "umask 077 && echo victim data >vhome/secret" && cp vhome/secret secret.orig &&
	planned v $VICTIM "$TRASH_DIRECTORY/shared" && pid=$(cat v.pid) &&
	as_user $ATTACKER sh -c "mkdir \"\$1\" && chmod 777 \"\$1\"" - shared/jheap-$pid &&
	as_user $ATTACKER sh -c "$PLANT" - shared/jheap-$pid w_ctl $pid "$TRASH_DIRECTORY/vhome/secret" &&
	go v &&
	{ test "$(cat v.rc)" = 1 || { echo "record: status $(cat v.rc)"; cat v.err; false; }; } &&
	grep "^jheap record: the folder .jheap-$pid. is not a private folder of yours (owner $(id -u $ATTACKER) ($ATTACKER), mode 0777): another user made it, and could read the dumps or put links in their place; nothing written" v.err &&
	test_cmp secret.orig vhome/secret && nothing_written shared/jheap-$pid
'

test_expect_success USERS 'the same planted folder when root records from the shared folder' '
	echo "root data" >rootsecret && chmod 600 rootsecret && cp rootsecret rootsecret.orig &&
	planned r - "$TRASH_DIRECTORY/shared" && pid=$(cat r.pid) &&
	as_user $ATTACKER sh -c "mkdir \"\$1\" && chmod 777 \"\$1\"" - shared/jheap-$pid &&
	as_user $ATTACKER sh -c "$PLANT" - shared/jheap-$pid w_ctl $pid "$TRASH_DIRECTORY/rootsecret" &&
	go r && test "$(cat r.rc)" = 1 &&
	grep "^jheap record: the folder .jheap-$pid. is not a private folder of yours (owner $(id -u $ATTACKER) ($ATTACKER), mode 0777)" r.err &&
	test_cmp rootsecret.orig rootsecret && nothing_written shared/jheap-$pid
'

test_expect_success USERS 'a folder another user made with mode 0700 is refused too' '
	planned q - "$TRASH_DIRECTORY/shared" && pid=$(cat q.pid) &&
	as_user $ATTACKER mkdir -m 700 shared/jheap-$pid &&
	go q && test "$(cat q.rc)" = 1 &&
	grep "^jheap record: the folder .jheap-$pid. is not a private folder of yours (owner $(id -u $ATTACKER) ($ATTACKER), mode 0700): another user made it" q.err
'

test_expect_success '--dir under a folder others may write in is refused, naming that folder' '
	mkdir open && chmod 777 open &&
	timeout 20 "$JHEAP" record --dir=open/d -- ./w_ctl >out 2>err; test $? = 1 &&
	grep "^jheap record: the folder .$TRASH_DIRECTORY/open. on the way to .$TRASH_DIRECTORY/open/d. may be changed by another user (owner $(id -u) [^,]*, mode 0777): a folder only root and you may change is needed; not writing dumps in" err &&
	! test -e open/d && ! grep -q ready out
'

test_expect_success '--dir under a sticky folder (as /tmp is) is used' '
	mkdir sticky && chmod 1777 sticky &&
	bg s "$JHEAP" record --sample=1 --dir=sticky/d -- ./w_ctl && wait_line s.out "^ready\$" &&
	path=$("$JHEAP" dump $(cat s.pid)) &&
	case $path in "$TRASH_DIRECTORY"/sticky/d/w_ctl.*.heap) ;; *) false ;; esac &&
	test "$(stat -c %a sticky/d)" = 700
'

test_expect_success '--dir naming an existing folder open to others is refused' '
	mkdir -m 755 pub &&
	timeout 20 "$JHEAP" record --dir=pub -- ./w_ctl >out 2>err; test $? = 1 &&
	grep "^jheap record: the folder .pub. is not a private folder of yours (owner $(id -u) [^,]*, mode 0755): others could read the dumps" err &&
	! grep -q ready out
'

# A daemon started as root that drops to its own user: its dumps are
# written as that user (the manager of t0815's varnishd runs as varnish).
cat >daemon.py <<-\EOF
import os, pwd, sys, time
pw = pwd.getpwnam(sys.argv[1])
os.setgroups([])
os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)
keep = [bytearray(100000) for _ in range(20)]
print("ready", flush=True)
time.sleep(60)
EOF
PYTHON=$(readlink -f /usr/bin/python3)

test_expect_success USERS '--dump-group: the folder is that group'"'"'s too (0770); a daemon of that group writes there' '
	bg dg "$JHEAP" record -q --sample=1 --dir=dg --dump-group=$VICTIM -- "$PYTHON" daemon.py $VICTIM &&
	wait_line dg.out "^ready\$" && pid=$(cat dg.pid) &&
	test "$(stat -c "%a %U %G" dg)" = "770 root $VICTIM" &&
	path=$("$JHEAP" dump $pid) &&
	test "$(stat -c "%a %U" "$path")" = "600 $VICTIM" &&
	mkdir -m 770 og && chgrp $ATTACKER og &&
	timeout 20 "$JHEAP" record --dir=og --dump-group=$VICTIM -- ./w_ctl >out 2>err; test $? = 1 &&
	grep "^jheap record: the folder .og. is not yours and its group.s alone (owner 0 (root), mode 0770): its group is not the one --dump-group names" err
'

test_expect_success 'by hand, a prof_prefix in a shared folder: no dump through a planted link nor into a planted hard link' '
	mkdir pre && chmod 1777 pre &&
	echo "precious too" >victim2 && chmod 600 victim2 && cp victim2 victim2.orig &&
	bg h env LD_PRELOAD="$JEMALLOC:$CTL_LIB" MALLOC_CONF=prof:true,prof_prefix:"$TRASH_DIRECTORY/pre/h" ./w_ctl &&
	wait_line h.out "^ready\$" && pid=$(cat h.pid) &&
	plant pre h $pid "$TRASH_DIRECTORY/victim2" &&
	expect_fail 1 "^jheap: process $pid \(w_ctl\): jemalloc could not write a dump: not writing through the symbolic link $TRASH_DIRECTORY/pre/h\.$pid\.0\.m0\.heap" dump $pid &&
	test_cmp victim2.orig victim2 &&
	rm pre/h.$pid.* &&
	for s in 1 2 3 4 5 6 7; do ln victim2 pre/h.$pid.$s.m$s.heap || return 1; done &&
	expect_fail 1 "refused a file with another link \(a hard link to it was planted\): $TRASH_DIRECTORY/pre/h\.$pid\.1\.m1\.heap" dump $pid &&
	test_cmp victim2.orig victim2 &&
	rm pre/h.$pid.* &&
	path=$("$JHEAP" dump $pid) && test "$(stat -c %a "$path")" = 600 && test -s "$path"
'

test_expect_success USERS 'by hand, a file another user planted under the next dump'"'"'s name is not written' '
	pid=$(cat h.pid) &&
	for s in 3 4 5 6 7; do as_user $ATTACKER sh -c "umask 0 && : >pre/h.$pid.$s.m$s.heap" || return 1; done &&
	expect_fail 1 "refused another user owns $TRASH_DIRECTORY/pre/h\.$pid\.3\.m3\.heap" dump $pid &&
	test ! -s pre/h.$pid.3.m3.heap
'

test_done
