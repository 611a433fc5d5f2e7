package compat

import "strings"

// A locking read's clause in MySQL 8 is FOR UPDATE or FOR SHARE, each
// with OF and a list of tables and then NOWAIT or SKIP LOCKED, or the
// older LOCK IN SHARE MODE. The vitess grammar GMS parses with knows FOR
// UPDATE, FOR UPDATE SKIP LOCKED and LOCK IN SHARE MODE only (1064 for
// the others). rewriteSyntax blanks out, for GMS's parse:
//
//   - NOWAIT and the OF list of FOR UPDATE: the session carries NOWAIT
//     (LockWaitOf), and the rows of every table the statement reads are
//     locked, not only those of the tables named (more than MySQL locks,
//     never less);
//   - FOR SHARE with its OF list, NOWAIT or SKIP LOCKED: percdb takes no
//     shared locks (a read sees its snapshot, as LOCK IN SHARE MODE's).

// LockWait is what a locking read does with a row another transaction
// has locked.
type LockWait uint8

const (
	// LockWaitDefault waits for the lock (innodb_lock_wait_timeout).
	LockWaitDefault LockWait = iota
	// LockNoWait fails the statement at once (NOWAIT: MySQL's 3572).
	LockNoWait
	// LockSkipLocked leaves the row out of the result (SKIP LOCKED).
	LockSkipLocked
)

// lockClause is a locking clause as syntaxTokens finds it.
type lockClause struct {
	share bool
	wait  LockWait
	// forAt is the token index of FOR; waitAt that of NOWAIT or SKIP,
	// -1 when the clause has neither.
	forAt, waitAt int
	// ofStart and ofEnd are the bytes of the OF list (OF, the names and
	// their quoting and commas); ofEnd is 0 when there is none.
	ofStart, ofEnd int
}

// lockClauses returns the locking clauses of query.
func lockClauses(query string, toks []syntaxToken) []lockClause {
	var out []lockClause
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].word != "FOR" || (toks[i+1].word != "UPDATE" && toks[i+1].word != "SHARE") {
			continue
		}
		c := lockClause{share: toks[i+1].word == "SHARE", forAt: i, waitAt: -1}
		j := i + 2
		if j < len(toks) && toks[j].word == "OF" {
			c.ofStart = toks[j].start
			c.ofEnd = len(query)
			for j++; j < len(toks); j++ {
				w := toks[j].word
				if w == "NOWAIT" || w == "SKIP" || w == "FOR" || w == "LOCK" || w == "INTO" || toks[j].punct == ';' || toks[j].punct == ')' {
					c.ofEnd = toks[j].start
					break
				}
			}
		}
		switch {
		case j < len(toks) && toks[j].word == "NOWAIT":
			c.wait, c.waitAt = LockNoWait, j
		case j+1 < len(toks) && toks[j].word == "SKIP" && toks[j+1].word == "LOCKED":
			c.wait, c.waitAt = LockSkipLocked, j
		}
		out = append(out, c)
		i = j
	}
	return out
}

// LockWaitOf returns what the FOR UPDATE clause of query says to do with
// rows another transaction has locked: LockWaitDefault without NOWAIT or
// SKIP LOCKED (or without FOR UPDATE). It is called for the statements
// whose text has FOR UPDATE in it.
func LockWaitOf(query string) LockWait {
	if up := strings.ToUpper(query); !strings.Contains(up, "NOWAIT") && !strings.Contains(up, "SKIP") {
		return LockWaitDefault
	}
	wait := LockWaitDefault
	for _, c := range lockClauses(query, syntaxTokens(query)) {
		if !c.share && c.wait != LockWaitDefault {
			wait = c.wait
		}
	}
	return wait
}
