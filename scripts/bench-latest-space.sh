#!/bin/bash
# Measures what the latest space costs a sysbench workload on percdb alone:
# bench-latest-space.sh BIN MODE PORT [WORKLOAD] [SECONDS] starts BIN with
# --latest-space MODE (off, auto, on) on a fresh data directory, prepares
# 1 table x 10,000 rows, runs WORKLOAD (default oltp_read_write) at 4
# threads for SECONDS (default 20), and prints the server's CPU a query
# (utime+stime from /proc over the run, divided by sysbench's queries)
# and the store's latest-space and range-read metrics from the status
# port (PORT+50). Run it alternating the modes: on a shared machine the
# CPU a query moves less than QPS, but it moves. Needs sysbench and the
# mariadb client.
set -eu
BIN=$1; MODE=$2; PORT=$3; WORKLOAD=${4:-oltp_read_write}; SECONDS_RUN=${5:-20}
SPORT=$((PORT + 50))
D=$(mktemp -d)
"$BIN" --port "$PORT" --data-dir "$D/data" --status-port "$SPORT" --latest-space "$MODE" >"$D/log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$D"' EXIT
for _ in $(seq 60); do mariadb --skip-ssl -h127.0.0.1 -P"$PORT" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
mariadb --skip-ssl -h127.0.0.1 -P"$PORT" -uroot -e 'CREATE DATABASE sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --mysql-ssl=off --tables=1 --table-size=10000"
$SB "$WORKLOAD" prepare >/dev/null
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
c0=$(cpu)
out=$($SB --threads=4 --time="$SECONDS_RUN" "$WORKLOAD" run)
c1=$(cpu)
q=$(echo "$out" | awk '/queries:/ {print $2; exit}')
tk=$(getconf CLK_TCK)
echo "mode=$MODE workload=$WORKLOAD queries=$q server_cpu_s=$(echo "($c1-$c0)/$tk" | bc -l | cut -c1-6) us_a_query=$(echo "($c1-$c0)/$tk*1000000/$q" | bc -l | cut -c1-6)"
curl -s "127.0.0.1:$SPORT/metrics" | grep '^percdb_kv_latest_space\|^percdb_kv_scan_records_total\|^percdb_kv_scan_points_total' | tr '\n' ' '
echo
