package difftest

import (
	"regexp"
	"strings"
)

// deviation is a case where MariaDB 10.11's answer is not MySQL 8's, so
// a difference there is not percdb's fault. Each says why.
type deviation struct {
	name string
	why  string
	// match reports whether the statement (and the two outcomes) is
	// such a case.
	match func(stmt string, percdb, mariadb outcome) bool
	// matchTypes, when set, is match for a case that depends on the
	// types of the columns the statement names (s is the run's schema).
	matchTypes func(s *schema, stmt string, percdb, mariadb outcome) bool
}

var (
	// A row constructor compared with <>, <, <=, >, >= or NOT IN.
	rowNotEqual = regexp.MustCompile(`\([^()]+, [^()]+\) (<>|<|<=|>|>=|NOT IN) \(`)
	// An INT-family column compared with a literal that has a fraction
	// (or IN a list that starts with one).
	intVsFraction = regexp.MustCompile(`\.(a|b|c9) (=|<>|<|<=|>|>=|<=>|IN \(|NOT IN \() ?-?[0-9]+\.[0-9]*[1-9]`)
)

// deviations lists what MariaDB does differently from MySQL 8 that the
// generated statements can meet.
var deviations = []deviation{
	{
		name: "mariadb-rounds-fraction-vs-int",
		why: "MariaDB rounds a fractional constant compared with an indexed INT column " +
			"(a range on the index is built from the rounded value), so a = 1.5 can match 2; " +
			"MySQL 8 compares exactly",
		match: func(stmt string, _, _ outcome) bool { return intVsFraction.MatchString(stmt) },
	},
	{
		name: "mariadb-row-inequality-rejects-null",
		why: "MariaDB's outer-join simplification takes a row comparison in a WHERE, such as " +
			"(x2.c, x1.d) <> (7, 5) or (x1.a, x2.c) >= (5, 'B'), for a condition that rejects NULLs " +
			"of x2, and turns the LEFT JOIN into an inner join; but with x2.c NULL the other pair " +
			"can decide it (NULL <> 7 OR 2 <> 5 is TRUE; 11 > 5 decides >=), so MariaDB drops rows " +
			"MySQL 8 returns (checked: SELECT (NULL, 2) <> (7, 5) is 1 on MariaDB 10.11 too, and " +
			"the query with ... IS TRUE still loses the row)",
		match: func(stmt string, p, m outcome) bool {
			return p.err == nil && m.err == nil &&
				strings.Contains(stmt, "LEFT JOIN") && rowNotEqual.MatchString(stmt)
		},
	},
	{
		name: "mariadb-datetime-in-indexed-date-subquery-ignores-null",
		why: "MariaDB answers x IN (SELECT d ...) for a DATETIME x with a time of day and an " +
			"indexed DATE column d from the index: not found is FALSE even when the subquery " +
			"returns a NULL, where SQL (and MySQL 8) say NULL; so x NOT IN (...) keeps rows " +
			"(checked: with (NULL), ('2020-02-29') in an indexed DATE column, " +
			"TIMESTAMP'2020-01-01 10:30:00' NOT IN (SELECT d ...) is 1 on MariaDB 10.11, NULL " +
			"without the index)",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool {
			for _, m := range inSubqueryRE.FindAllStringSubmatch(stmt, -1) {
				if s.kindOf(stmt, m[1]) == kDatetime && s.kindOf(stmt, m[2]) == kDate {
					return true
				}
			}
			return false
		},
	},
	{
		name: "mariadb-date-vs-integer-subquery-in-dml-fails",
		why: "MariaDB compares a DATE or DATETIME column with an INT column of an IN subquery " +
			"(or of a scalar subquery, x.dt <= (SELECT MAX(s.a) ...)) by " +
			"converting each integer to a date, and in an UPDATE or DELETE under strict mode the " +
			"failed conversion is error 1292 (Incorrect datetime value: '7'); MySQL 8 compares a " +
			"temporal value with a number as numbers, with no warning, so the statement runs " +
			"(sql/item_cmpfunc.cc, Arg_comparator::can_compare_as_dates: date[time] + number is " +
			"not compared as dates)",
		matchTypes: func(s *schema, stmt string, p, m outcome) bool {
			if p.err != nil || m.err == nil || !strings.Contains(m.err.Error(), "ncorrect datetime value") {
				return false
			}
			subs := append(inSubqueryRE.FindAllStringSubmatch(stmt, -1), scalarSubqueryRE.FindAllStringSubmatch(stmt, -1)...)
			for _, sub := range subs {
				l, r := s.kindOf(stmt, sub[1]), s.kindOf(stmt, sub[2])
				if (l == kDate || l == kDatetime) && (r == kInt || r == kBigint) {
					return true
				}
			}
			return false
		},
	},
	{
		name: "mariadb-allows-target-table-in-subquery",
		why: "MariaDB (since 10.3) runs an UPDATE or DELETE whose subquery reads the table it " +
			"changes; MySQL 8 refuses it with error 1093 (You can't specify target table ... for " +
			"update in FROM clause), as percdb does",
		match: func(stmt string, p, m outcome) bool {
			return p.err != nil && m.err == nil && strings.Contains(p.err.Error(), "1093")
		},
	},
}

// caseTies is not a deviation but an ambiguity: under a case-insensitive
// collation 'a' and 'A' are equal, and MIN, MAX, DISTINCT, GROUP BY and
// ORDER BY may return either spelling (MySQL says which of equal values
// a query returns is not defined). Query results that differ only in
// letter case are counted here; table contents after a data change are
// not.
var caseTies = deviation{
	name: "case-insensitive-ties",
	why:  "values equal under a case-insensitive collation may come back in either spelling",
	match: func(stmt string, p, m outcome) bool {
		return p.err == nil && m.err == nil && same(foldCase(p), foldCase(m), false)
	},
}

// foldCase returns o with its values in lower case.
func foldCase(o outcome) outcome {
	rows := make([][]string, len(o.rows))
	for i, r := range o.rows {
		rows[i] = make([]string, len(r))
		for j, v := range r {
			rows[i][j] = strings.ToLower(v)
		}
	}
	return outcome{rows: rows, affected: o.affected}
}

// knownDeviation returns the deviation that explains a difference, if any.
func knownDeviation(s *schema, stmt string, p, m outcome) *deviation {
	for i := range deviations {
		d := &deviations[i]
		if d.match != nil && d.match(stmt, p, m) || d.matchTypes != nil && s != nil && d.matchTypes(s, stmt, p, m) {
			return d
		}
	}
	return nil
}

// inSubqueryRE finds "x.c IN (SELECT y.d FROM" (NOT IN too): the
// column compared and the column the subquery returns.
var inSubqueryRE = regexp.MustCompile(`(\w+\.\w+) (?:NOT )?IN \(SELECT (\w+\.\w+) FROM`)

// scalarSubqueryRE finds "x.c <= (SELECT MAX(y.d) FROM": the column
// compared and the column the subquery aggregates.
var scalarSubqueryRE = regexp.MustCompile(`(\w+\.\w+) (?:=|<>|<|<=|>|>=|<=>) \(SELECT (?:MAX|MIN)\((\w+\.\w+)\) FROM`)

// aliasRE finds the tables a statement names with an alias ("t0 x1").
var aliasRE = regexp.MustCompile(`\b(t\d+) (\w+)\b`)

// kindOf returns the kind of the column ref ("x1.c2", "t0.c2") names in
// stmt, or numKinds when it is not known.
func (s *schema) kindOf(stmt, ref string) kind {
	alias, col, ok := strings.Cut(ref, ".")
	if !ok {
		return numKinds
	}
	name := alias
	for _, m := range aliasRE.FindAllStringSubmatch(stmt, -1) {
		if m[2] == alias {
			name = m[1]
		}
	}
	for _, t := range s.tables {
		if t.name != name {
			continue
		}
		for _, c := range t.cols {
			if c.name == col {
				return c.kind
			}
		}
	}
	return numKinds
}
