package slowlog

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// The slow query log is MySQL's: a statement that ran for at least the
// session's long_query_time seconds (a session variable, copied from the
// global one when the session starts, as in MySQL; default 10) is written
// to the file the global slow_query_log_file names while the global
// slow_query_log is ON. percdb --slow-query-log FILE (Config.SlowQueryLog)
// turns it on at start with that file. A relative file name is in the
// data directory, as MySQL's is in its datadir. GMS keeps these variables
// in one registry of the process (as local_infile, sql/loaddata), so
// servers of one process share the switch and the file name.
//
// An entry has MySQL's layout, which mysqldumpslow and pt-query-digest
// read:
//
//	# Time: 261125 16:04:05
//	# User@Host: root[root] @ localhost [127.0.0.1]  Id:     8
//	# Query_time: 0.000391  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1
//	# Rows_affected: 0  Percdb_start_ts: 459174512345088  Percdb_commit_ts: 0  Percdb_errno: 0
//	use sbtest;
//	SET timestamp=1795622645;
//	SELECT c FROM sbtest1 WHERE id = 7;
//
// # Time is when the entry was written (UTC); SET timestamp
// is when the statement began (Unix seconds). The fourth line is
// percdb's: MariaDB writes its own # Rows_affected line there, which
// mysqldumpslow skips, and pt-query-digest reads every "Name: value" pair
// of a # line as an attribute. Percdb_start_ts and Percdb_commit_ts are
// the statement's Percolator timestamps when it ran in a transaction that
// had them (0 when not: a read the fast path served at the newest
// version, or a transaction still open, which has no commit_ts yet);
// Percdb_errno is the MySQL error the statement ended with, 0 for none.
// Lock_time is 0: percdb takes no table locks. Rows_examined counts the
// rows the statement read from tables (each row the storage layer handed
// to GMS or the fast path read; a row read again by a second plan, as a
// subquery's, counts again), not the index entries behind them. A prepared statement is
// logged with its placeholders (MySQL logs the values in their place).
// The statement ends with ";" and a newline, which is how mysqldumpslow
// finds the end of an entry.
//
// A file is opened in append mode at its first entry and starts with
// MySQL's header (the server, its version, "Time Id Command Argument").

// slowTimeLayout is the layout of the # Time line: YYMMDD HH:MM:SS, as
// MariaDB and MySQL 5.6 write it. MySQL 5.7 and 8 write RFC 3339 with
// microseconds instead, which mysqldumpslow (MySQL's and MariaDB's) does
// not recognize; pt-query-digest reads both.
const slowTimeLayout = "060102 15:04:05"

// Names of the slow log's system variables.
const (
	varSlowQueryLog     = "slow_query_log"
	varSlowQueryLogFile = "slow_query_log_file"
	// VarLongQueryTime is the session variable of the shortest slow
	// statement.
	VarLongQueryTime = "long_query_time"
	// gmsDefaultSlowFile is GMS's default of slow_query_log_file, which
	// MySQL documents as host_name-slow.log with the host's name in it.
	gmsDefaultSlowFile = "host_name-slow.log"
)

// Entry is one entry of the slow log (the package comment says what
// each field is, by the line it is written on).
type Entry struct {
	// Written is when the entry is written, Start when the statement
	// began.
	Written, Start time.Time
	QueryTime      time.Duration
	User, Host, IP string
	ConnID         uint32
	RowsSent       uint64
	RowsAffected   uint64
	RowsExamined   uint64
	StartTS        uint64
	CommitTS       uint64
	Errno          int
	DB             string
	Query          string
}

// appendSlowEntry appends entry e in the slow log's layout to b.
func appendSlowEntry(b []byte, e *Entry) []byte {
	b = append(b, "# Time: "...)
	b = e.Written.UTC().AppendFormat(b, slowTimeLayout)
	b = fmt.Appendf(b, "\n# User@Host: %s[%s] @ %s [%s]  Id: %6d\n", e.User, e.User, e.Host, e.IP, e.ConnID)
	b = fmt.Appendf(b, "# Query_time: %.6f  Lock_time: %.6f Rows_sent: %d  Rows_examined: %d\n",
		e.QueryTime.Seconds(), 0.0, e.RowsSent, e.RowsExamined)
	b = fmt.Appendf(b, "# Rows_affected: %d  Percdb_start_ts: %d  Percdb_commit_ts: %d  Percdb_errno: %d\n",
		e.RowsAffected, e.StartTS, e.CommitTS, e.Errno)
	if e.DB != "" {
		b = fmt.Appendf(b, "use %s;\n", quoteSlowIdent(e.DB))
	}
	b = fmt.Appendf(b, "SET timestamp=%d;\n", e.Start.Unix())
	q := strings.TrimRight(e.Query, " \t\r\n;")
	b = append(b, q...)
	return append(b, ";\n"...)
}

// quoteSlowIdent quotes a database name for the use line when it is not
// a plain word (mysqldumpslow strips "use \w+;").
func quoteSlowIdent(name string) string {
	for i := 0; i < len(name); i++ {
		if !lexical.IsWordByte(name[i]) {
			return "`" + strings.ReplaceAll(name, "`", "``") + "`"
		}
	}
	return name
}

// slowHeader is the first lines of a new slow log file, as mysqld writes
// them.
func slowHeader(version, versionComment string) string {
	exe, _ := os.Executable()
	return fmt.Sprintf("%s, Version: %s (%s). started with:\nTcp port: 0  Unix socket: \nTime                 Id Command    Argument\n",
		exe, version, versionComment)
}

// Log writes a node's slow log entries to the file slow_query_log_file
// names, opened at the first entry and again when the name changes.
type Log struct {
	dataDir string
	version string
	comment string

	mu   sync.Mutex
	path string
	f    *os.File
	buf  []byte
}

// New returns the slow query log of a node whose data directory is
// dataDir (where a relative slow_query_log_file is) and whose version
// and version comment (MySQL's version and version_comment) are written
// in a new file's header.
func New(dataDir, version, comment string) *Log {
	return &Log{dataDir: dataDir, version: version, comment: comment}
}

// Enabled reports whether the global slow_query_log is ON.
func Enabled() bool {
	_, v, ok := gsql.SystemVariables.GetGlobal(varSlowQueryLog)
	if !ok {
		return false
	}
	on, err := gsql.ConvertToBool(nil, v)
	return err == nil && on
}

// file returns the path of the slow log file: slow_query_log_file,
// relative to the data directory unless absolute.
func (l *Log) file() string {
	name := gmsDefaultSlowFile
	if _, v, ok := gsql.SystemVariables.GetGlobal(varSlowQueryLogFile); ok {
		if s, ok := v.(string); ok && s != "" {
			name = s
		}
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(l.dataDir, name)
	}
	return name
}

// Write writes entry e, opening the file first if needed.
func (l *Log) Write(e *Entry) error {
	path := l.file()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil && l.path == path && moved(l.f, path) {
		// Rotated (logrotate, then mariadb-admin flush-logs) or
		// removed: write to a new file at the path, as MySQL does
		// after FLUSH SLOW LOGS.
		_ = l.f.Close()
		l.f = nil
	}
	if l.f == nil || l.path != path {
		if l.f != nil {
			_ = l.f.Close()
			l.f = nil
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return fmt.Errorf("open slow query log: %w", err)
		}
		if st, err := f.Stat(); err == nil && st.Size() == 0 {
			if _, err := f.WriteString(slowHeader(l.version, l.comment)); err != nil {
				_ = f.Close()
				return fmt.Errorf("write slow query log %s: %w", path, err)
			}
		}
		l.f, l.path = f, path
	}
	l.buf = appendSlowEntry(l.buf[:0], e)
	if _, err := l.f.Write(l.buf); err != nil {
		return fmt.Errorf("write slow query log %s: %w", path, err)
	}
	return nil
}

// moved reports whether path no longer names the open file f. Asked
// once per entry written, which only slow statements cost.
func moved(f *os.File, path string) bool {
	at, err := os.Stat(path)
	if err != nil {
		return true
	}
	open, err := f.Stat()
	return err == nil && !os.SameFile(at, open)
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Start sets the slow log's global variables at the node's start:
// with file, slow_query_log ON and slow_query_log_file file; without,
// slow_query_log_file's GMS default becomes MySQL's (the host's name).
func Start(file string) error {
	vals := map[string]any{}
	if file != "" {
		vals[varSlowQueryLog] = int8(1)
		vals[varSlowQueryLogFile] = file
	} else if _, v, ok := gsql.SystemVariables.GetGlobal(varSlowQueryLogFile); ok && v == gmsDefaultSlowFile {
		if h, err := os.Hostname(); err == nil && h != "" {
			vals[varSlowQueryLogFile] = h + "-slow.log"
		}
	}
	if len(vals) == 0 {
		return nil
	}
	if err := gsql.SystemVariables.AssignValues(vals); err != nil {
		return fmt.Errorf("set the slow query log's variables: %w", err)
	}
	return nil
}

// SplitHostPort returns the host and IP of a client address for the
// User@Host line: "localhost" for a loopback address, as MySQL names it.
func SplitHostPort(addr net.Addr) (host, ip string) {
	if addr == nil {
		return "localhost", ""
	}
	h, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String(), ""
	}
	if parsed := net.ParseIP(h); parsed != nil && parsed.IsLoopback() {
		return "localhost", h
	}
	return h, h
}

// LongQueryTime converts the long_query_time variable's value (seconds,
// a double) to a duration; ok is false for a value it cannot read.
func LongQueryTime(v any) (time.Duration, bool) {
	var secs float64
	switch x := v.(type) {
	case float64:
		secs = x
	case float32:
		secs = float64(x)
	case int64:
		secs = float64(x)
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return 0, false
		}
		secs = f
	default:
		return 0, false
	}
	if secs < 0 {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}
