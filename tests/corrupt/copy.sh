#!/bin/sh
# One damaged copy through every command that reads a snapshot; the worker of
# tests/corrupt/sweep.sh, which sets the environment (SW_*) and runs this once
# per plan line: copy.sh INDEX ID KIND ARGS...
# Writes one line per command to $SW_WORK/res/ID:
#   ID KIND COMMAND CLASS DETAIL
# CLASS: equal (exit 0, output equal to the undamaged file's), refused (exit 1
# or 2; for serve: it would not start, or some answers were misses), crash
# (exit status >= 128, or a sanitizer report), hang (killed by timeout), wrong
# (exit 0 with other output, an unexpected exit status, verify passing).
# A copy with any crash, hang or wrong goes to $SW_KEEP/ID with its outputs.
set -u
idx=$1 id=$2 kind=$3
shift 3
bin=$SW_BIN
ref=$SW_WORK/ref
now=$SW_NOW
d=$SW_WORK/c/$id
res=$SW_WORK/res/$id
rm -rf "$d" && mkdir -p "$d" || exit 1
cd "$d" || exit 1
: >"$res"
bad=0
all=0 # the undamaged copy runs every command: the sweep's check of itself
[ "$kind" = none ] && all=1

# note CMD CLASS DETAIL
note() {
	echo "$id $kind $1 $2 $3" >>"$res"
	case $2 in crash | hang | wrong) bad=1 ;; esac
}
# san FILE: a sanitizer report in FILE
san() { grep -qE 'Sanitizer|runtime error:' "$1"; }
# run NAME REF CMD...: run CMD with a time limit in the copy's directory and
# class it: its stdout goes to NAME.out, compared with REF when it exits 0
run() {
	n=$1 r=$2
	shift 2
	timeout -k 2 "$SW_TIMEOUT" "$@" >"$n.out" 2>"$n.err"
	rc=$?
	# get's message ID is random, as dig's: not part of the answer
	case $n in get*) sed -i 's/, id: [0-9]*$/, id: -/' "$n.out" ;; esac
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		cls=hang det="over ${SW_TIMEOUT}s"
	elif [ $rc -ge 128 ] || san "$n.err"; then
		cls=crash det="exit $rc$(grep -m1 -E 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$n.err" |
			sed 's/^[^:]*: */, /' | cut -c1-100)"
	elif [ $rc -eq 0 ]; then
		if cmp -s "$n.out" "$r"; then cls=equal det=-; else cls=wrong det="exit 0, output differs"; fi
	elif [ $rc -eq 1 ] || [ $rc -eq 2 ]; then
		cls=refused det="exit $rc"
	else
		cls=wrong det="exit $rc"
	fi
}

if [ "$kind" = none ]; then
	cp "$SW_WORK/base.snap" c.snap
else
	"$SW_MKSWEEP" apply "$SW_WORK/base.snap" c.snap "$kind" "$@" 2>apply.err ||
		{ note apply wrong "mksweep apply failed: $(cat apply.err)"; exit 0; }
fi

run info "$ref/info" "$bin" info c.snap --now "$now"
note info $cls "$det"
run stats "$ref/stats" "$bin" stats c.snap --now "$now"
note stats $cls "$det"
if [ $all -eq 1 ] || [ $((idx % SW_DUMP_EVERY)) -eq 0 ]; then
	run dump "$ref/dump" "$bin" dump c.snap --now "$now"
	note dump $cls "$det"
fi
if [ $all -eq 1 ] || [ $(((idx + SW_DUMP_EVERY / 2) % SW_DUMP_EVERY)) -eq 0 ]; then
	run dumpjson "$ref/dumpjson" "$bin" dump c.snap --json --now "$now"
	note dump--json $cls "$det"
fi

# get: the large entries' names on every copy, and SW_GETS of the others,
# turn by turn (names.txt: the mix's names first, then the large ones)
k=0
small=$(grep -vc '\.overflow\.example\. ' "$SW_WORK/names.txt")
while read -r name type; do
	k=$((k + 1))
	case $name in
	*.overflow.example.) ;;
	*) [ $all -eq 1 ] ||
		[ $((((k - 1 - idx * SW_GETS) % small + small) % small)) -lt "$SW_GETS" ] || continue ;;
	esac
	run "get$k" "$ref/get$k" "$bin" get c.snap "$name" "$type" --now "$now"
	note get $cls "$det${det:+ }($name $type)"
done <"$SW_WORK/names.txt"

# export: exit 0 gives the undamaged stream; otherwise what came out must not
# import as good
run export "$ref/export" "$bin" export c.snap -o -
if [ $cls = refused ] && [ -s export.out ]; then
	timeout -k 2 "$SW_TIMEOUT" "$bin" import - -o imp.snap --now "$now" <export.out \
		>/dev/null 2>import.err
	irc=$?
	if [ $irc -eq 0 ]; then
		cls=wrong det="exit $rc, but its stream imports as good"
	elif [ $irc -ge 124 ] || san import.err; then
		cls=crash det="import of its stream: exit $irc"
	fi
fi
note export $cls "$det"

# verify: 2 on every damaged copy, 0 on the undamaged one
run verify "$ref/verify" "$bin" verify c.snap
if [ "$kind" != none ]; then
	case $cls in
	equal) cls=wrong det="exit 0 on a damaged copy" ;;
	refused) [ $rc -eq 2 ] || { cls=wrong det="exit $rc, not 2"; } ;;
	esac
fi
note verify $cls "$det"

run purge "$ref/purge" "$bin" purge c.snap --type TXT --dry-run --now "$now"
note purge--dry-run $cls "$det"

# load onto the damaged copy: exit 0 means the same entries as the undamaged
# base + the same load (verify's entry count and digest; an export would hold
# the time of the load); a file published with exit 2 must verify (no damage
# copied)
cp c.snap l.snap
run load "$ref/load" "$bin" load l.snap "$SW_WORK/load.dns" --now "$now"
if [ $cls = equal ]; then
	run loadverify "$ref/loadverify" "$bin" verify l.snap
	case $cls in
	equal) ;;
	refused | wrong) cls=wrong det="exit 0, but the result is not the undamaged one's ($det)" ;;
	*) det="exit 0, then verify of the result: $cls $det" ;;
	esac
elif [ $cls = refused ] && ! cmp -s c.snap l.snap; then
	timeout -k 2 "$SW_TIMEOUT" "$bin" verify l.snap >/dev/null 2>lverify.err
	vrc=$?
	if [ $vrc -ge 124 ] || san lverify.err; then
		cls=crash det="$det, then verify of what it published: exit $vrc"
	elif [ $vrc -ne 0 ]; then
		cls=wrong det="$det, but what it published fails verify"
	fi
fi
note load $cls "$det"

# serve, every SW_SERVE_EVERY-th copy: the sample over TCP (answers whole);
# each answer equal to the undamaged file's, or a miss (REFUSED)
if [ $all -eq 1 ] || [ $(((idx + 1) % SW_SERVE_EVERY)) -eq 0 ]; then
	(
		sh -c 'echo $$ >serve.pid; exec "$@"' sh "$bin" serve c.snap \
			--listen 127.0.0.1:0 --threads 1 --now "$now" 2>serve.log
		echo $? >serve.rc
	) &
	i=0 port=
	while [ $i -lt 600 ]; do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' serve.log \
			2>/dev/null)
		[ -n "$port" ] || [ -e serve.rc ] && break
		sleep 0.05
		i=$((i + 1))
	done
	spid=$(cat serve.pid 2>/dev/null)
	cls=equal det=-
	if [ -n "$port" ]; then
		# shellcheck disable=SC2046 # one argument per query
		timeout -k 2 "$SW_TIMEOUT" "$SW_MKQUERY" tcp "$port" --wait 3000 \
			$(cat "$SW_WORK/queries.hex") >serve.out 2>serve.err
		sed '$d' serve.out >serve.replies
		misses=0 wrongs=0 k=0
		while read -r want; do
			k=$((k + 1))
			got=$(sed -n "${k}p" serve.replies)
			[ "$got" = "$want" ] && continue
			# the RCODE: the low 4 bits of byte 3
			if [ -n "$got" ] && [ "$got" != none ] && \
				[ $((0x$(printf '%s' "$got" | cut -c8) & 15)) -eq 5 ]; then
				misses=$((misses + 1))
			else
				wrongs=$((wrongs + 1))
			fi
		done <"$ref/serve"
		[ $misses -gt 0 ] && cls=refused det="$misses misses"
		[ $wrongs -gt 0 ] && cls=wrong det="$wrongs answers neither the undamaged file's nor REFUSED"
		[ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null
	elif [ ! -e serve.rc ]; then
		cls=hang det="not listening after 30 s"
		[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	fi
	i=0
	while [ ! -e serve.rc ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if [ ! -e serve.rc ]; then
		cls=hang det="still running 10 s after SIGTERM"
		[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	fi
	wait
	src=$(cat serve.rc 2>/dev/null)
	if [ "${src:-0}" -ge 128 ] || san serve.log; then
		cls=crash det="exit $src"
	elif [ -z "$port" ] && [ $cls = equal ]; then
		case $src in
		1 | 2) cls=refused det="exit $src" ;;
		*) cls=wrong det="exit $src before listening" ;;
		esac
	elif [ -n "$port" ] && [ "$src" != 0 ]; then
		cls=wrong det="exit $src after SIGTERM"
	fi
	note serve $cls "$det"
fi

cd "$SW_WORK" || exit 1
if [ $bad -eq 1 ]; then
	# the first SW_KEEP_MAX failing copies with every output (about 3 MB
	# each); of the others, what the damage was (mksweep apply remakes them)
	rm -rf "${SW_KEEP:?}/$id"
	mkdir -p "$SW_KEEP/$id"
	echo "$kind $*" >"$SW_KEEP/$id/damage"
	if [ "$(find "$SW_KEEP" -name c.snap | wc -l)" -lt "$SW_KEEP_MAX" ]; then
		rm -f "$d/l.snap" "$d/imp.snap"
		mv "$d"/* "$SW_KEEP/$id/"
	fi
	rm -rf "$d"
else
	rm -rf "$d"
fi
exit 0
