#!/usr/bin/env bash
# Installs the programs that percdb's tests and benchmarks drive, from
# Debian's packages: the mariadb client (end-to-end client tests), the
# MariaDB server (the reference server of the benchmark harness and of the
# sqllogictest/isolation comparisons), sysbench, percona-toolkit
# (pt-query-digest reads the slow query log in sql's TestSlowQueryLog),
# and the drivers of the
# driver smoke tests in tests/e2e: PyMySQL, Django and mysqlclient
# (MySQLdb) and SQLAlchemy for Debian's python3, PHP's PDO and mysqli,
# Rails' ActiveRecord with the mysql2 gem,
# MariaDB Connector/J with a JDK to
# compile the test's Java program, headless Chromium (sql's
# TestConsoleInBrowser loads the status port's web console in it), and
# node's mysql2 and Sequelize from npm (into
# $PERCDB_NPM_PREFIX, default ~/.cache/percdb/npm, where the test looks
# for it). Tests that need one
# of them skip with a message where it is missing, so this step is
# optional: it only widens what `go test ./...` covers. Safe to run again:
# what is installed is not installed again.
set -uo pipefail

log=/tmp/percdb-install-test-deps.log
need=()
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
command -v mariadbd >/dev/null 2>&1 || [[ -x /usr/sbin/mariadbd ]] || need+=(mariadb-server)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v pt-query-digest >/dev/null 2>&1 || need+=(percona-toolkit)
/usr/bin/python3 -c 'import pymysql' >/dev/null 2>&1 || need+=(python3-pymysql)
/usr/bin/python3 -c 'import django' >/dev/null 2>&1 || need+=(python3-django)
/usr/bin/python3 -c 'import MySQLdb' >/dev/null 2>&1 || need+=(python3-mysqldb)
/usr/bin/python3 -c 'import sqlalchemy' >/dev/null 2>&1 || need+=(python3-sqlalchemy)
[[ -f /usr/share/java/mariadb-java-client.jar ]] || need+=(libmariadb-java)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v php >/dev/null 2>&1 || need+=(php-cli)
ruby -e 'require "active_record"; require "mysql2"' >/dev/null 2>&1 || need+=(ruby-activerecord ruby-mysql2)
php -m 2>/dev/null | grep -q pdo_mysql || need+=(php-mysql)

if [[ ${#need[@]} -gt 0 ]]; then
	sudo=""
	if [[ $(id -u) -ne 0 ]]; then
		if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
			echo "install-test-deps: not root and no sudo; missing ${need[*]} (their tests will skip)"
			need=()
		fi
	fi
	if [[ ${#need[@]} -gt 0 ]]; then
		echo "install-test-deps: installing ${need[*]}"
		if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"; } >>"$log" 2>&1; then
			echo "install-test-deps: apt-get failed (see $log); the tests that need ${need[*]} will skip"
		fi
	fi
fi

# node's mysql2 driver and the Sequelize ORM, which Debian does not
# package.
prefix=${PERCDB_NPM_PREFIX:-$HOME/.cache/percdb/npm}
for pkg in mysql2 sequelize; do
	if command -v npm >/dev/null 2>&1 && [[ ! -f $prefix/node_modules/$pkg/package.json ]]; then
		echo "install-test-deps: installing $pkg (npm) into $prefix"
		mkdir -p "$prefix"
		if ! npm install --prefix "$prefix" --no-audit --no-fund --silent "$pkg" >>"$log" 2>&1; then
			echo "install-test-deps: npm install $pkg failed (see $log); the node tests that need it will skip"
		fi
	fi
done
echo "install-test-deps: done"
exit 0
