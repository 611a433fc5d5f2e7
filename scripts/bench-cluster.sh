#!/bin/sh
# Measures sysbench on the single node and on a cluster (pd, KVS kv nodes,
# default 3, each region replicated on min(3, KVS) of them through raft,
# a sql node, all on 127.0.0.1, the kv protocol and raft over loopback
# gRPC) in one sitting, alternating the two: [KVS=n] bench-cluster.sh
# [workload] [seconds] [rounds] [threads...]. Defaults: oltp_point_select,
# 20 s, 2 rounds, 1 and 4 threads. Prints one line per run: setup, threads, QPS, p95 ms, and
# the CPU time the setup's processes used per query (user+system from
# /proc, in microseconds; sysbench's own CPU is not counted), and for the
# cluster how that CPU divides among the KV nodes. With SPLIT=n the
# cluster's sbtest1 is split into n regions (SPLIT TABLE ... BETWEEN) after
# prepare, and the runs wait until pd spread their leaders over the KV
# nodes. Needs sysbench (apt-get install sysbench); builds cmd/percdb.
set -eu

WORKLOAD=${1:-oltp_point_select}
SECS=${2:-20}
ROUNDS=${3:-2}
shift 3 2>/dev/null || shift $#
THREADS=${*:-1 4}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'kill $(cat "$TMP"/*.pid 2>/dev/null) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
BIN=$TMP/percdb
(cd "$ROOT" && go build -o "$BIN" ./cmd/percdb)

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # name, args...
	name=$1; shift
	"$BIN" "$@" >"$TMP/$name.log" 2>&1 &
	echo $! >"$TMP/$name.pid"
}
waitlog() { # name, pattern
	i=0
	until grep -q "$2" "$TMP/$1.log"; do
		i=$((i + 1)); [ $i -lt 1200 ] || { cat "$TMP/$1.log"; exit 1; }
		sleep 0.1
	done
}

SINGLE=$(port)
start single --host 127.0.0.1 --port "$SINGLE" --data-dir "$TMP/single" --status-port 0
KVS=${KVS:-3}
REPLICAS=$((KVS < 3 ? KVS : 3))
PD=$(port); CLUSTER=$(port)
start pd pd --data-dir "$TMP/pd" --addr "127.0.0.1:$PD" --peer-url "http://127.0.0.1:$(port)" --client-url "http://127.0.0.1:$(port)" --replicas "$REPLICAS"
waitlog pd 'pd is the leader'
KVPROCS=
for i in $(seq "$KVS"); do
	start kv$i kv --data-dir "$TMP/kv$i" --addr "127.0.0.1:$(port)" --pd "127.0.0.1:$PD"
	KVPROCS="$KVPROCS kv$i"
done
for i in $(seq "$KVS"); do waitlog kv$i 'kv node serving'; done
start sql sql --data-dir "$TMP/sql" --host 127.0.0.1 --port "$CLUSTER" --pd "127.0.0.1:$PD" --status-port 0
waitlog single 'percdb listening'
waitlog sql 'percdb listening'

# cpu_ticks PIDFILE... sums the processes' user+system clock ticks.
cpu_ticks() {
	total=0
	for f in "$@"; do
		t=$(awk '{print $14 + $15}' "/proc/$(cat "$TMP/$f.pid")/stat")
		total=$((total + t))
	done
	echo $total
}
HZ=$(getconf CLK_TCK)

SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-password= --mysql-db=sbtest --tables=1 --table-size=10000"
for p in $SINGLE $CLUSTER; do
	mariadb -h 127.0.0.1 -P "$p" -u root -e 'CREATE DATABASE sbtest'
	sysbench "$WORKLOAD" $SB --mysql-port="$p" prepare >/dev/null
done
if [ -n "${SPLIT:-}" ]; then
	mariadb -h 127.0.0.1 -P "$CLUSTER" -u root sbtest -e "SPLIT TABLE sbtest1 BETWEEN (0) AND (10001) REGIONS $SPLIT"
	i=0
	until [ "$(mariadb -h 127.0.0.1 -P "$CLUSTER" -u root sbtest -N -e 'SHOW TABLE sbtest1 REGIONS' | awk '{print $NF}' | sort -u | wc -l)" -ge "$KVS" ]; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "leaders not spread over $KVS kv nodes"; break; }
		sleep 0.1
	done
	echo "sbtest1 in $(mariadb -h 127.0.0.1 -P "$CLUSTER" -u root sbtest -N -e 'SHOW TABLE sbtest1 REGIONS' | wc -l) regions; leaders by kv node:" \
		"$(mariadb -h 127.0.0.1 -P "$CLUSTER" -u root sbtest -N -e 'SHOW TABLE sbtest1 REGIONS' | awk '{print $NF}' | sort | uniq -c | tr '\n' ' ')"
fi
for r in $(seq "$ROUNDS"); do
	for t in $THREADS; do
		for setup in single:$SINGLE cluster:$CLUSTER; do
			p=${setup#*:}
			procs=single
			[ "${setup%%:*}" = single ] || procs="sql$KVPROCS pd"
			before=$(cpu_ticks $procs)
			kvbefore=
			for k in $KVPROCS; do kvbefore="$kvbefore $(cpu_ticks $k)"; done
			# A run sysbench ends on an error it does not retry (it retries
			# 1213 and 1205 only) is reported with sysbench's own output,
			# and the other runs go on.
			if ! out=$(sysbench "$WORKLOAD" $SB --mysql-port="$p" --threads="$t" --time="$SECS" --report-interval=0 run 2>&1); then
				echo "round $r ${setup%%:*} threads $t FAILED: sysbench's last lines:"
				printf '%s\n' "$out" | tail -15
				continue
			fi
			after=$(cpu_ticks $procs)
			kvshare=
			if [ "${setup%%:*}" = cluster ]; then
				set -- $kvbefore
				for k in $KVPROCS; do
					kvshare="$kvshare $k:$(( ($(cpu_ticks $k) - $1) * 100 / (HZ * SECS) ))%"
					shift
				done
			fi
			queries=$(echo "$out" | sed -n 's/^ *total: *\([0-9]*\)$/\1/p' | head -1)
			qps=$(echo "$out" | sed -n 's/.*queries: .*(\([0-9.]*\) per sec.)/\1/p')
			p95=$(echo "$out" | sed -n 's/.*95th percentile: *\([0-9.]*\)/\1/p')
			cpu_us=$(awk -v d=$((after - before)) -v hz="$HZ" -v q="$queries" 'BEGIN { printf "%.0f", d / hz * 1e6 / q }')
			echo "round $r ${setup%%:*} threads $t qps $qps p95_ms $p95 cpu_us_per_query $cpu_us ($procs)${kvshare:+; kv cpu of one core:$kvshare}"
		done
	done
done
