package sql

import (
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/percdb/percdb/sql/stmtsummary"
)

// Statement statistics by digest (performance_schema.
// events_statements_summary_by_digest, perfschema.go): observedHandler
// records every statement it sees end, on the fast path and through GMS
// alike, under its default database and the TiDB parser's digest of its
// normalized text (literals as "?", lists of more than one value as
// "..."), so that statements that differ only in literals, and a
// prepared statement and the same statement with its values written in,
// are one row.
//
// Normalizing costs about as much as lexing the statement, so a session
// normalizes a statement text once: the fast path, which normalizes
// every candidate for its plan cache, leaves its result in the session
// (digestMemo), and a prepared statement's digest is worked out when it
// is prepared and kept with it (observe.go's preparedObservation; the
// texts' digests are kept per session too, for clients that prepare the
// same text again and again).

// maxDigestText bounds the text kept of a digest and of its sample
// statement, in bytes: MySQL's performance_schema_max_digest_length and
// performance_schema_max_sql_text_length default to 1024. It bounds the
// summary's memory with its size.
const maxDigestText = 1024

// maxPreparedDigests bounds the prepared statement texts a session keeps
// digests of; beyond it the session forgets them all and starts again.
const maxPreparedDigests = 256

// stmtDigest is a statement text's normalized form and digest.
type stmtDigest struct {
	query      string
	normalized string
	digest     string
}

// sessionDigests is what a session keeps of the digests it computed.
// Only the connection's goroutine uses it.
type sessionDigests struct {
	// memo is the last text normalized.
	memo stmtDigest
	// prepared are the digests of prepared statement texts.
	prepared map[string]stmtDigest
	// slots remember the summary rows of the digests of the session's
	// latest text statements, so that a session running a few statement
	// shapes again and again (each with its own literals) counts them
	// without a lookup in the summary's map: a digest's slot is chosen
	// by the digest's last hexadecimal digit (a digest is a hash).
	slots [16]stmtsummary.Slot
}

// slotOf returns the slot of the summary row of digest, a hexadecimal
// string.
func (sd *sessionDigests) slotOf(digest string) *stmtsummary.Slot {
	var i byte
	if n := len(digest); n > 0 {
		c := digest[n-1]
		if c >= 'a' {
			c -= 'a' - 10
		}
		i = c & 15
	}
	return &sd.slots[i]
}

// remember notes the normalized form and digest of query.
func (sd *sessionDigests) remember(query, normalized string, digest *parser.Digest) {
	sd.memo = stmtDigest{query: query, normalized: truncateText(normalized), digest: digest.String()}
}

// of returns the normalized form and digest of query.
func (sd *sessionDigests) of(query string) stmtDigest {
	if sd.memo.query == query && sd.memo.digest != "" {
		return sd.memo
	}
	n, d := parser.NormalizeDigest(query)
	sd.memo = stmtDigest{query: query, normalized: truncateText(n), digest: d.String()}
	return sd.memo
}

// ofPrepared returns the normalized form and digest of query, the text
// of a statement being prepared: kept, since clients prepare the same
// texts again and again (go-sql-driver prepares every statement with
// arguments, executes it once and closes it).
func (sd *sessionDigests) ofPrepared(query string) stmtDigest {
	if d, ok := sd.prepared[query]; ok {
		return d
	}
	d := sd.of(query)
	if sd.prepared == nil || len(sd.prepared) >= maxPreparedDigests {
		sd.prepared = make(map[string]stmtDigest)
	}
	sd.prepared[query] = d
	return d
}

// truncateText cuts s to maxDigestText bytes at a character boundary.
func truncateText(s string) string {
	if len(s) <= maxDigestText {
		return s
	}
	i := maxDigestText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// recordDigest counts the statement query of session s, observed by st,
// which ran in default database db and failed when failed, in the node's
// statement summary. A prepared statement's digest was worked out when it
// was prepared.
func (h *observedHandler) recordDigest(s *Session, st *stmtObservation, query, db string, failed bool) {
	sum := s.provider.digests
	if sum == nil {
		return
	}
	o := stmtsummary.Observation{
		Query:        truncateText(query),
		Latency:      st.latency,
		RowsSent:     st.rowsSent,
		RowsExamined: s.rowsExamined.Load(),
		RowsAffected: st.rowsAffected,
		Error:        failed,
		End:          st.ended,
	}
	if po := st.prepared; po != nil && po.digest.digest != "" {
		o.DigestText = po.digest.normalized
		sum.RecordSlot(&po.slot, stmtsummary.Key{Schema: db, Digest: po.digest.digest}, &o)
		return
	}
	sd := s.digests.of(query)
	o.DigestText = sd.normalized
	sum.RecordSlot(s.digests.slotOf(sd.digest), stmtsummary.Key{Schema: db, Digest: sd.digest}, &o)
}
