package sql

import (
	"bytes"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"google.golang.org/protobuf/proto"
)

// character_set_results utf8mb3 (the mariadb client's in a C or POSIX
// locale, and older drivers' default) and a value with a 4-byte character
// (an emoji): MySQL sends '?' for each such character, GMS v0.20.0 fails
// the whole statement with 1105 "failed to encode" when it converts the
// value for the wire. utf8mb3 is utf8mb4 without its 4-byte sequences, so
// percdb lets GMS convert the values for utf8mb4, which cannot fail
// (Session.GetCharacterSetResults), and narrows each result to utf8mb3 on
// its way out (narrowResults): column definitions name utf8mb3 again, with
// its lengths, and each 4-byte character of a value becomes '?'. Other
// character sets are GMS's (a character latin1 lacks still fails).

// GetCharacterSetResults implements sql.Session: character_set_results,
// except that GMS converts values for utf8mb4 when it is utf8mb3 (see
// above).
func (s *Session) GetCharacterSetResults() gsql.CharacterSetID {
	cs := s.BaseSession.GetCharacterSetResults()
	if cs == gsql.CharacterSet_utf8mb3 {
		return gsql.CharacterSet_utf8mb4
	}
	return cs
}

// narrowResults makes res, converted by GMS for utf8mb4, a result for
// character_set_results utf8mb3 when that is the session's (see above).
func (s *Session) narrowResults(res *sqltypes.Result) {
	if res == nil || s.BaseSession.GetCharacterSetResults() != gsql.CharacterSet_utf8mb3 {
		return
	}
	var cols []int
	for i, f := range res.Fields {
		if f.Charset != uint32(gsql.CharacterSet_utf8mb4) {
			continue
		}
		if cols == nil {
			// The definitions may be shared (the fast path's, learned
			// once): the result gets its own.
			res.Fields = append([]*querypb.Field(nil), res.Fields...)
		}
		f = proto.Clone(f).(*querypb.Field)
		res.Fields[i] = f
		f.Charset = uint32(gsql.CharacterSet_utf8mb3)
		// GMS gives a TEXT column its byte length times the character
		// set's longest character (not LONGTEXT's, which would not fit).
		if f.Type == querypb.Type_TEXT && f.ColumnLength%4 == 0 {
			f.ColumnLength = f.ColumnLength / 4 * 3
		}
		cols = append(cols, i)
	}
	for _, row := range res.Rows {
		for _, i := range cols {
			if i < len(row) {
				if raw := row[i].Raw(); hasFourByteUTF8(raw) {
					row[i] = sqltypes.MakeTrusted(row[i].Type(), questionFourByteUTF8(raw))
				}
			}
		}
	}
}

// hasFourByteUTF8 reports whether b holds the lead byte of a 4-byte UTF-8
// sequence.
func hasFourByteUTF8(b []byte) bool {
	for _, c := range b {
		if c >= 0xF0 {
			return true
		}
	}
	return false
}

// questionFourByteUTF8 returns b with each 4-byte UTF-8 sequence replaced
// by '?', as MySQL converts a character utf8mb3 lacks.
func questionFourByteUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		i := bytes.IndexFunc(b, func(r rune) bool { return r > 0xFFFF })
		if i < 0 {
			return append(out, b...)
		}
		out = append(out, b[:i]...)
		out = append(out, '?')
		b = b[i+4:]
	}
	return out
}

// narrowFilter wraps the callback of a prepared statement's execution
// with Session.narrowResults.
func (h *handler) narrowFilter(c *mysql.Conn, callback func(*sqltypes.Result) error) func(*sqltypes.Result) error {
	return func(res *sqltypes.Result) error {
		if s := h.sessions.get(c.ConnectionID); s != nil {
			s.narrowResults(res)
		}
		return callback(res)
	}
}
