package wirefuzz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// envWriteSeeds, set to 1, makes TestSeedCorpus (re)write the seed corpus
// files instead of checking them.
const envWriteSeeds = "PERCDB_WIREFUZZ_WRITE_SEEDS"

// seed is one input of a fuzz target, named after what it tries.
type seed struct {
	name   string
	values []any // the fuzz function's arguments: bool, byte or []byte
}

// seedCorpus returns the seeds of every target, by target name. They live
// in testdata/fuzz/<target>/<name>, where `go test` runs them without
// -fuzz and `go test -fuzz` starts from them; this list is their source.
func seedCorpus() map[string][]seed {
	return map[string][]seed{
		"FuzzHandshake": handshakeSeeds(),
		"FuzzCommand":   commandSeeds(),
		"FuzzStmt":      stmtSeeds(),
	}
}

// TestSeedCorpus checks that the committed corpus files are the seeds
// listed here, so that the list and the files do not drift apart. With
// PERCDB_WIREFUZZ_WRITE_SEEDS=1 it writes them instead. Other files in the
// corpus directories (failures that go test -fuzz saved) are left alone.
func TestSeedCorpus(t *testing.T) {
	write := os.Getenv(envWriteSeeds) == "1"
	for target, seeds := range seedCorpus() {
		dir := filepath.Join("testdata", "fuzz", target)
		names := make(map[string]bool)
		for _, s := range seeds {
			if names[s.name] {
				t.Fatalf("%s: two seeds named %q", target, s.name)
			}
			names[s.name] = true
			want := marshalCorpusFile(t, s.values)
			path := filepath.Join(dir, s.name)
			if write {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is missing or stale (%v); regenerate with %s=1 go test -run TestSeedCorpus", path, err, envWriteSeeds)
			}
		}
	}
}

// marshalCorpusFile encodes values in go test's corpus file format.
func marshalCorpusFile(t *testing.T, values []any) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case bool:
			fmt.Fprintf(&b, "bool(%v)\n", v)
		case byte:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		default:
			t.Fatalf("seed value of type %T", v)
		}
	}
	return b.Bytes()
}

// cat joins byte strings.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// le32 is v in 4 bytes, little-endian.
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// cmd is a command payload: the command byte, then args.
func cmd(c byte, args ...[]byte) []byte { return cat(append([][]byte{{c}}, args...)...) }

func handshakeSeeds() []seed {
	valid := HandshakeResponse(&Greeting{}, "root", "", "")
	withDB := HandshakeResponse(&Greeting{}, "root", "", fuzzDB)
	// prefix is the fixed part of a response: flags, max packet size,
	// character set and 23 reserved bytes.
	prefix := func(caps uint32) []byte {
		return cat(le32(caps), le32(defaultMaxPacketSize), []byte{utf8mb4GeneralCI}, make([]byte, 23))
	}
	framed := func(name string, p []byte) seed { return seed{name, []any{false, p}} }
	raw := func(name string, p []byte) seed { return seed{name, []any{true, p}} }
	noProto41 := bytes.Clone(valid)
	noProto41[1] &^= capProtocol41 >> 8
	return []seed{
		framed("valid", valid),
		framed("valid-with-db", withDB),
		framed("valid-missing-db", HandshakeResponse(&Greeting{}, "root", "", "no_such_db")),
		framed("password-for-passwordless-root", HandshakeResponse(&Greeting{Salt: make([]byte, 20)}, "root", "secret", "")),
		raw("valid-raw", Frame(1, valid)),
		raw("wrong-seq-0", Frame(0, valid)),
		raw("wrong-seq-7", Frame(7, valid)),
		framed("truncated-5", valid[:5]),
		framed("truncated-12", valid[:12]),
		framed("truncated-32", valid[:32]),
		framed("truncated-user", valid[:34]),
		framed("no-protocol41", noProto41),
		framed("auth-lenenc-negative", cat(prefix(clientCapabilities), []byte("root\x00\xfe"), bytes.Repeat([]byte{0xff}, 8))),
		framed("auth-lenenc-past-end", cat(prefix(clientCapabilities), []byte("root\x00\xfc\xff\xffabc"))),
		framed("auth-len-byte-past-end", cat(prefix(capProtocol41|capSecureConnection), []byte("root\x00\xc8abc"))),
		framed("auth-nul-string", cat(prefix(capProtocol41), []byte("root\x00secret\x00"))),
		framed("user-without-nul", cat(prefix(clientCapabilities), []byte("root"))),
		framed("db-without-nul", cat(prefix(clientCapabilities|capConnectWithDB), []byte("root\x00\x00fuzz"))),
		framed("unknown-plugin", cat(prefix(clientCapabilities), []byte("root\x00\x00foo_password\x00"))),
		framed("caching-sha2-empty", cat(prefix(clientCapabilities), []byte("root\x00\x00caching_sha2_password\x00"))),
		framed("clear-password", cat(prefix(clientCapabilities), []byte("root\x00\x07secret\x00mysql_clear_password\x00"))),
		framed("ssl-request-without-tls", prefix(clientCapabilities|0x800)),
		framed("conn-attrs-garbage", cat(prefix(clientCapabilities|0x100000), []byte("root\x00\x00mysql_native_password\x00\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"))),
		framed("conn-attrs-short", cat(prefix(clientCapabilities|0x100000), []byte("root\x00\x00mysql_native_password\x00\x05\x03abc"))),
		framed("zeros-1k", make([]byte, 1024)),
		raw("empty-packet", []byte{0, 0, 0, 1}),
		raw("header-max-length", []byte{0xff, 0xff, 0xff, 1}),
		raw("header-max-length-short-body", []byte{0xff, 0xff, 0xff, 1, 'a', 'b', 'c'}),
		raw("header-partial", []byte{5, 0}),
		raw("http-request", []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")),
		raw("tls-client-hello", []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}),
		raw("two-responses", cat(Frame(1, valid), Frame(2, valid))),
		raw("valid-then-query", cat(Frame(1, valid), Frame(0, cmd(ComQuery, []byte("SELECT 1"))))),
	}
}

func commandSeeds() []seed {
	framed := func(name string, p []byte) seed { return seed{name, []any{false, p}} }
	raw := func(name string, p []byte) seed { return seed{name, []any{true, p}} }
	query := func(q string) []byte { return cmd(ComQuery, []byte(q)) }
	return []seed{
		framed("query-select-1", query("SELECT 1")),
		framed("query-empty", query("")),
		framed("query-garbage", query("SELEC\xff\x00 1")),
		framed("query-invalid-utf8", query("SELECT '\xff\xfe', _utf8mb4'\xc3'")),
		framed("query-multi", query("SELECT 1; SELECT 2; SELEC")),
		framed("query-table", query("SELECT * FROM fuzz.t WHERE id = 1 OR v > 'a'")),
		framed("query-insert", query("INSERT INTO fuzz.t VALUES (3, 'c', NULL)")),
		framed("query-txn", query("BEGIN; UPDATE fuzz.t SET n = n + 1 WHERE id = 1; COMMIT")),
		framed("query-open-txn", query("BEGIN; UPDATE fuzz.t SET n = n + 1 WHERE id = 2")),
		framed("query-sql-prepare", query("PREPARE s FROM 'SELECT ?'; EXECUTE s USING @x; DEALLOCATE PREPARE s")),
		framed("query-sleep", query("SELECT SLEEP(0.01)")),
		framed("query-long-string", query("SELECT '"+string(bytes.Repeat([]byte("x"), 70000))+"'")),
		framed("query-deep-nesting", query("SELECT "+string(bytes.Repeat([]byte("("), 2000))+"1"+string(bytes.Repeat([]byte(")"), 2000)))),
		framed("init-db", cmd(ComInitDB, []byte(fuzzDB))),
		framed("init-db-missing", cmd(ComInitDB, []byte("no_such_db"))),
		framed("init-db-empty", cmd(ComInitDB)),
		framed("field-list-no-db", cmd(ComFieldList, []byte("t\x00"))),
		framed("field-list-garbage", cmd(ComFieldList, []byte("\xff\xfe\x00%"))),
		framed("field-list-empty", cmd(ComFieldList)),
		framed("ping", cmd(ComPing)),
		framed("quit", cmd(ComQuit)),
		framed("com-sleep", cmd(0x00)),
		framed("com-shutdown", cmd(0x08)),
		framed("com-statistics", cmd(0x09)),
		framed("com-process-info", cmd(0x0a)),
		framed("com-process-kill", cmd(0x0c, le32(1))),
		framed("com-debug", cmd(0x0d)),
		framed("com-change-user", cmd(0x11, []byte("root\x00\x00"))),
		framed("com-binlog-dump", cmd(0x12, []byte{4, 0, 0, 0, 0, 0, 1, 0, 0, 0}, []byte("bin.000001"))),
		framed("com-register-replica", cmd(0x15, []byte{0xff, 0xff})),
		framed("com-binlog-dump-gtid", cmd(0x1e, []byte{0, 0, 0xff, 0xff, 0xff, 0xff})),
		framed("com-set-option", cmd(0x1b, []byte{0, 0})),
		framed("com-set-option-short", cmd(0x1b)),
		framed("com-reset-connection", cmd(0x1f)),
		framed("com-unknown", cmd(0xee, []byte("x"))),
		framed("stmt-prepare-empty", cmd(ComStmtPrepare)),
		framed("stmt-prepare-garbage", cmd(ComStmtPrepare, []byte("\x00\x01?"))),
		framed("stmt-execute-short", cmd(ComStmtExecute)),
		framed("stmt-execute-id-only", cmd(ComStmtExecute, le32(1))),
		framed("stmt-execute-unknown-id", cmd(ComStmtExecute, le32(0xdeadbeef), []byte{0}, le32(1))),
		framed("stmt-fetch-unknown", cmd(0x1c, le32(1), le32(10))),
		framed("stmt-long-data-unknown", cmd(ComStmtLongData, le32(0xffffffff), []byte{9, 0}, []byte("abc"))),
		framed("stmt-close-unknown", cmd(ComStmtClose, le32(0xffffffff))),
		framed("stmt-reset-unknown", cmd(ComStmtReset, le32(0xffffffff))),
		raw("init-db-then-field-lists", cat(
			Frame(0, cmd(ComInitDB, []byte(fuzzDB))),
			Frame(0, cmd(ComFieldList, []byte("t\x00"))),
			Frame(0, cmd(ComFieldList, []byte("t"))),
			Frame(0, cmd(ComFieldList, []byte("t\x00v%"))),
			Frame(0, cmd(ComFieldList, []byte("\xff\x00\xff"))),
			Frame(0, cmd(ComFieldList, []byte("no_such_table\x00"))),
		)),
		raw("prepare-then-execute-bad-params", cat(
			Frame(0, cmd(ComStmtPrepare, []byte("SELECT ?, ?"))),
			Frame(0, cmd(ComStmtExecute, le32(1), []byte{0}, le32(1), []byte{0, 1, 0xfd, 0, 0x08, 0, 0xfc, 0xff, 0xff, 'a', 'b'})),
		)),
		raw("prepare-then-execute-unbound", cat(
			Frame(0, cmd(ComStmtPrepare, []byte("SELECT ?"))),
			Frame(0, cmd(ComStmtExecute, le32(1), []byte{0}, le32(1), []byte{0, 0})),
		)),
		raw("empty-packet", []byte{0, 0, 0, 0}),
		raw("wrong-seq", Frame(3, query("SELECT 1"))),
		raw("continued-seq-wrong", cat([]byte{0xff, 0xff, 0xff, 0}, []byte("\x03SELECT 1"))),
		raw("header-near-max-truncated", cat([]byte{0xfe, 0xff, 0xff, 0}, []byte("\x03SEL"))),
		raw("header-partial", []byte{1, 0}),
		raw("pipelined", cat(Frame(0, query("SELECT 1")), Frame(0, cmd(ComPing)), Frame(0, query("SELECT 2")))),
		raw("second-packet-wrong-seq", cat(Frame(0, query("SELECT 1")), Frame(5, query("SELECT 2")))),
		raw("length-shorter-than-body", cat([]byte{3, 0, 0, 0}, query("SELECT 1"))),
	}
}

// mysql binary protocol type codes used by the statement seeds.
const (
	typeTiny       = 0x01
	typeLong       = 0x03
	typeDouble     = 0x05
	typeLongLong   = 0x08
	typeDate       = 0x0a
	typeTime       = 0x0b
	typeDateTime   = 0x0c
	typeVarchar    = 0x0f
	typeJSON       = 0xf5
	typeNewDecimal = 0xf6
	typeBlob       = 0xfc
	typeVarString  = 0xfd
	unsignedFlag   = 0x80
)

// executeBody is the part of a COM_STMT_EXECUTE after the statement id:
// flags, iteration count, NULL bitmap, new-params-bound flag, the types
// (when bound) and the values.
func executeBody(flags byte, iterations uint32, nulls byte, types [][2]byte, values ...[]byte) []byte {
	b := cat([]byte{flags}, le32(iterations), []byte{nulls})
	if types == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		for _, t := range types {
			b = append(b, t[0], t[1])
		}
	}
	return cat(append([][]byte{b}, values...)...)
}

func stmtSeeds() []seed {
	s := func(name string, c byte, body, then []byte) seed { return seed{name, []any{c, body, then}} }
	// The four parameters of stmtQuery, bound the usual way: a number, a
	// string, a key and an indexed string.
	types := [][2]byte{{typeLongLong, 0}, {typeVarString, 0}, {typeLong, 0}, {typeVarString, 0}}
	values := [][]byte{binary.LittleEndian.AppendUint64(nil, 5), AppendLenencString(nil, "p"), le32(1), AppendLenencString(nil, "b")}
	valid := executeBody(0, 1, 0, types, values...)
	with := func(i int, t [2]byte, v []byte) []byte {
		ts := append([][2]byte{}, types...)
		vs := append([][]byte{}, values...)
		ts[i], vs[i] = t, v
		return executeBody(0, 1, 0, ts, vs...)
	}
	double := func(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }
	return []seed{
		s("execute-valid", ComStmtExecute, valid, nil),
		s("execute-twice-unbound", ComStmtExecute, valid, executeBody(0, 1, 0, nil, values...)),
		s("execute-all-null", ComStmtExecute, executeBody(0, 1, 0x0f, types), nil),
		s("execute-null-bits-past-params", ComStmtExecute, executeBody(0, 1, 0xf0, types, values...), nil),
		s("execute-unbound-first", ComStmtExecute, executeBody(0, 1, 0, nil), nil),
		s("execute-truncated-bitmap", ComStmtExecute, cat([]byte{0}, le32(1)), nil),
		s("execute-truncated-types", ComStmtExecute, cat([]byte{0}, le32(1), []byte{0, 1, typeLongLong}), nil),
		s("execute-truncated-values", ComStmtExecute, valid[:len(valid)-3], nil),
		s("execute-extra-bytes", ComStmtExecute, cat(valid, []byte("trailing")), nil),
		s("execute-cursor", ComStmtExecute, cat([]byte{1}, valid[1:]), nil),
		s("execute-flags-garbage", ComStmtExecute, cat([]byte{0xff}, valid[1:]), nil),
		s("execute-zero-iterations", ComStmtExecute, executeBody(0, 0, 0, types, values...), nil),
		s("execute-unknown-type", ComStmtExecute, with(0, [2]byte{0xf0, 0}, []byte{1, 2, 3, 4}), nil),
		s("execute-lenenc-negative", ComStmtExecute, with(1, [2]byte{typeVarString, 0}, cat([]byte{0xfe}, bytes.Repeat([]byte{0xff}, 8))), nil),
		s("execute-lenenc-past-end", ComStmtExecute, with(3, [2]byte{typeVarString, 0}, []byte{0xfd, 0xff, 0xff, 0x7f, 'x'}), nil),
		s("execute-unsigned-max", ComStmtExecute, with(0, [2]byte{typeLongLong, unsignedFlag}, bytes.Repeat([]byte{0xff}, 8)), nil),
		s("execute-tiny-as-key", ComStmtExecute, with(2, [2]byte{typeTiny, 0}, []byte{0x80}), nil),
		s("execute-double-nan", ComStmtExecute, with(0, [2]byte{typeDouble, 0}, double(math.NaN())), nil),
		s("execute-double-inf", ComStmtExecute, with(2, [2]byte{typeDouble, 0}, double(math.Inf(-1))), nil),
		s("execute-decimal-garbage", ComStmtExecute, with(0, [2]byte{typeNewDecimal, 0}, AppendLenencString(nil, "1e99999x")), nil),
		s("execute-json-bad", ComStmtExecute, with(1, [2]byte{typeJSON, 0}, AppendLenencString(nil, "{\"a\":")), nil),
		s("execute-blob-binary", ComStmtExecute, with(1, [2]byte{typeBlob, 0}, AppendLenencString(nil, "\x00\xff\xfe")), nil),
		s("execute-varchar-key", ComStmtExecute, with(2, [2]byte{typeVarchar, 0}, AppendLenencString(nil, "not a number")), nil),
		s("execute-date-bad-length", ComStmtExecute, with(1, [2]byte{typeDate, 0}, []byte{3, 0xe8, 0x07, 13}), nil),
		s("execute-datetime-invalid", ComStmtExecute, with(1, [2]byte{typeDateTime, 0}, []byte{11, 0xe8, 0x07, 13, 40, 25, 61, 61, 0xff, 0xff, 0xff, 0xff}), nil),
		s("execute-datetime-length-past-end", ComStmtExecute, with(3, [2]byte{typeDateTime, 0}, []byte{200, 1, 2}), nil),
		s("execute-time-negative", ComStmtExecute, with(1, [2]byte{typeTime, 0}, []byte{12, 1, 0xff, 0xff, 0xff, 0xff, 99, 99, 99, 0xff, 0xff, 0xff, 0xff}), nil),
		s("long-data-then-execute", ComStmtLongData, cat([]byte{1, 0}, []byte("long")), executeBody(0, 1, 0, types, values[0], values[2], values[3])),
		s("long-data-bad-param", ComStmtLongData, cat([]byte{0xff, 0xff}, []byte("x")), valid),
		s("long-data-short", ComStmtLongData, []byte{1}, valid),
		s("reset-then-execute", ComStmtReset, nil, executeBody(0, 1, 0, nil, values...)),
		s("close-then-execute", ComStmtClose, nil, valid),
		s("fetch-without-cursor", 0x1c, le32(10), nil),
		s("cursor-then-execute", ComStmtExecute, cat([]byte{1}, valid[1:]), valid),
	}
}
