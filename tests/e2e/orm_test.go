package e2e

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The ORM smoke tests run an application's use of an ORM against percdb
// and compare the output with what the same program prints against
// MariaDB 10.11 (and MySQL 8, where they agree): schema creation and
// reflection, associations, transactions, errors. They found that
// Sequelize's sync({alter: true}) failed with 1061 on its CHANGE ...
// UNIQUE (sql/compat/indexnames.go) and that its describeTable read
// `VARCHAR(255) COLLATE UTF8MB4_0900_AI_CI` (sql/compat/showcolumns.go).

// TestSQLAlchemy runs testdata/orm/sqlalchemy_smoke.py (SQLAlchemy 1.4
// over PyMySQL, Debian's python3-sqlalchemy).
func TestSQLAlchemy(t *testing.T) {
	python := pythonWith(t, "sqlalchemy", "python3-sqlalchemy")
	pythonWith(t, "pymysql", "python3-pymysql")
	s := startServer(t, "")
	host, port := s.HostPort()
	got := strings.TrimSpace(runProgram(t, nil, python, filepath.Join("testdata", "orm", "sqlalchemy_smoke.py"), host, port))
	want := strings.Join([]string{
		"tables ['customer', 'line', 'orders']",
		"fks [('customer', ['customer_id'])]",
		"indexes True",
		"unique [['order_id', 'sku']]",
		"pk ['order_id', 'n']",
		"customers [('c0', 2, 4), ('c1', 2, 4), ('c2', 2, 4)]",
		"agg [('c0', 2, '31.50'), ('c1', 2, '31.50'), ('c2', 2, '31.50')]",
		"joined [(2, 'c0@x'), (4, 'c1@x'), (6, 'c2@x')]",
		"after rollback c0",
		"after delete 4 8",
		"dup IntegrityError 1062",
		"count 3",
		"now datetime",
		"offset 3",
		"for update [1, 3]",
		"dropped []",
	}, "\n")
	if got != want {
		t.Fatalf("SQLAlchemy against percdb:\n%s\nwant (MariaDB's):\n%s", got, want)
	}
}

// TestSequelize runs testdata/orm/sequelize_smoke.js (Sequelize 6 over
// mysql2, from npm).
func TestSequelize(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node (Debian: apt-get install nodejs)")
	}
	modules := nodeModules(t, "sequelize")
	s := startServer(t, "")
	host, port := s.HostPort()
	got := strings.TrimSpace(runProgram(t, []string{"NODE_PATH=" + modules}, node, filepath.Join("testdata", "orm", "sequelize_smoke.js"), host, port))
	want := strings.Join([]string{
		"tables PostTags,Posts,Tags,Users",
		"describe id,name,email,score,born,meta,kind,createdAt,updatedAt VARCHAR(255) DECIMAL(10,2) ENUM('a','b')",
		`user ann 12.50 1990-05-06 {"a":[1,2]} b 1 3 db+go`,
		"findAndCountAll 1 1",
		"rolled back boom",
		"users 1",
		"updated 1",
		"dup SequelizeUniqueConstraintError",
		"upsert ann2",
		"raw 2",
		"dropped 0",
	}, "\n")
	if got != want {
		t.Fatalf("Sequelize against percdb:\n%s\nwant (MariaDB's):\n%s", got, want)
	}
}

// TestGORM builds and runs testdata/gorm (GORM 1.31 over go-sql-driver),
// a module of its own: its dependencies come from the Go module proxy
// the first time.
func TestGORM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with GORM")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	dir, err := filepath.Abs(filepath.Join("testdata", "gorm"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "gorm-smoke")
	build := exec.Command(goCmd, "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build the GORM program (no module proxy?): %v\n%s", err, out)
	}
	s := startServer(t, "")
	host, port := s.HostPort()
	got := strings.TrimSpace(runProgram(t, nil, bin, host, port))
	want := strings.Join([]string{
		"has true true true true",
		"col email varchar varchar(120) true true",
		"col balance decimal decimal(12,2) true false",
		"user ann a@x 30 10.5 acme 2 2",
		"transaction roll back",
		"count 1",
		"dup true",
		"soft delete 0 1",
		"join [{ann 2}]",
		"add column again fails true",
		"renamed true false",
		"migrated true",
		"index dropped true",
		"done false",
	}, "\n")
	if got != want {
		t.Fatalf("GORM against percdb:\n%s\nwant (MariaDB's):\n%s", got, want)
	}
}

// TestPHP runs testdata/php_smoke.php with PHP's PDO and mysqli (Debian's
// php-cli and php-mysql).
func TestPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("no php (Debian: apt-get install php-cli php-mysql)")
	}
	if out, err := exec.Command(php, "-m").Output(); err != nil || !strings.Contains(string(out), "pdo_mysql") || !strings.Contains(string(out), "mysqli") {
		t.Skip("php without pdo_mysql and mysqli (Debian: apt-get install php-mysql)")
	}
	s := startServer(t, "")
	host, port := s.HostPort()
	got := strings.TrimSpace(runProgram(t, nil, php, filepath.Join("testdata", "php_smoke.php"), host, port))
	want := strings.Join([]string{
		"lastInsertId 1",
		`row emulate=0 {"id":1,"name":"n0","price":"12.50","qty":3,"at":"2024-01-02 03:04:05.678","flag":1,"data":"{\"a\": 1}"}`,
		`types {"id":"integer","name":"string","price":"string","qty":"integer","at":"string","flag":"integer","data":"string"}`,
		"lastInsertId 2",
		`row emulate=1 {"id":2,"name":"n1","price":"12.50","qty":3,"at":"2024-01-02 03:04:05.678","flag":1,"data":"{\"a\": 1}"}`,
		`types {"id":"integer","name":"string","price":"string","qty":"integer","at":"string","flag":"integer","data":"string"}`,
		"in txn true",
		"after rollback 6",
		`dup ["23000",1062]`,
		`syntax ["42000",1064]`,
		"affected 2",
		"affected unchanged 0",
		`column ["n0","n1"]`,
		`meta ["NEWDECIMAL",10,2]`,
		`mysqli rows [{"id":1,"price":"12.50","at":"2024-01-02 03:04:05.678"},{"id":2,"price":"12.50","at":"2024-01-02 03:04:05.678"}]`,
		"mysqli count 2",
		`multi ["1","2"]`,
		`info [true,"1"]`,
		"mysqli insert_id affected [4,2]",
		"done",
	}, "\n")
	if got != want {
		t.Fatalf("PHP against percdb:\n%s\nwant (MariaDB's):\n%s", got, want)
	}
}

// TestActiveRecord runs testdata/activerecord_smoke.rb with Rails'
// ActiveRecord 6.1 over the mysql2 gem (Debian's ruby-activerecord and
// ruby-mysql2). Its expected output is MySQL 8's; MariaDB's differs in
// type names (bigint(20)) and stores JSON as checked longtext.
func TestActiveRecord(t *testing.T) {
	ruby, err := exec.LookPath("ruby")
	if err != nil {
		t.Skip("no ruby (Debian: apt-get install ruby-activerecord ruby-mysql2)")
	}
	if exec.Command(ruby, "-e", `require "active_record"; require "mysql2"`).Run() != nil {
		t.Skip("no ActiveRecord with mysql2 (Debian: apt-get install ruby-activerecord ruby-mysql2)")
	}
	s := startServer(t, "")
	host, port := s.HostPort()
	got := strings.TrimSpace(runProgram(t, nil, ruby, filepath.Join("testdata", "activerecord_smoke.rb"), host, port))
	want := strings.Join([]string{
		"tables ar_internal_metadata,authors,books",
		"columns id:bigint author_id:bigint title:varchar(100) pages:bigint published_on:date extra:json created_at:datetime(6) updated_at:datetime(6) code:varchar(255)",
		`indexes [["index_authors_on_email", true]]`,
		`fks [["authors", "author_id"]]`,
		`default "0"`,
		`author Ann 4.5 false One+Two {"k"=>[1, 2]} 2020-01-02`,
		"count 1 300 2",
		"after rollback 1",
		"dup ActiveRecord::RecordInvalid",
		"dup db ActiveRecord::RecordNotUnique",
		"updated 3.25",
		"upsert One!",
		"destroyed 0 0",
		"version ok",
	}, "\n")
	if got != want {
		t.Fatalf("ActiveRecord against percdb:\n%s\nwant (MySQL 8's):\n%s", got, want)
	}
}
