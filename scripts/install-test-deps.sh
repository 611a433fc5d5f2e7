#!/usr/bin/env bash
# Installs the programs that percdb's tests and benchmarks drive, from
# Debian's packages: the mariadb client (end-to-end client tests), the
# MariaDB server (the reference server of the benchmark harness and of the
# sqllogictest/isolation comparisons), sysbench, and the drivers of the
# driver smoke tests (PyMySQL for Debian's python3). Tests that need one of
# them skip with a message where it is missing, so this step is optional:
# it only widens what `go test ./...` covers. Safe to run again.
set -uo pipefail

need=()
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
command -v mariadbd >/dev/null 2>&1 || [[ -x /usr/sbin/mariadbd ]] || need+=(mariadb-server)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
/usr/bin/python3 -c 'import pymysql' >/dev/null 2>&1 || need+=(python3-pymysql)
if [[ ${#need[@]} -eq 0 ]]; then
	echo "install-test-deps: mariadb client, server, sysbench and PyMySQL are installed"
	exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
		echo "install-test-deps: not root and no sudo; missing ${need[*]} (their tests will skip)"
		exit 0
	fi
fi
echo "install-test-deps: installing ${need[*]}"
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"; } >/tmp/percdb-install-test-deps.log 2>&1; then
	echo "install-test-deps: apt-get failed (see /tmp/percdb-install-test-deps.log); the tests that need ${need[*]} will skip"
fi
exit 0
