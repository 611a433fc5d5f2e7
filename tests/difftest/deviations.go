package difftest

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/shopspring/decimal"
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
	// without, when set, narrows a matched case to the deviation: it
	// returns the statement written so that MariaDB's deviation does not
	// apply and MySQL 8's answer stays the same, and the difference is
	// explained only when MariaDB answers that statement as percdb
	// answered the first (ok false: no such statement, not explained).
	without func(s *schema, stmt string) (alt string, ok bool)
}

var (
	// A row constructor compared with <>, <, <=, >, >= or NOT IN.
	// Or a row IN list negated by NOT (long seed 337: NOT ((x1.a,
	// x2.c9) IN ((-1, 2), (-1, -1))), which MariaDB takes for
	// null-rejecting as it takes NOT IN).
	rowNotEqual = regexp.MustCompile(`\([^()]+, [^()]+\) (<>|<|<=|>|>=|NOT IN) \(|NOT \(\([^()]+, [^()]+\) IN \(\(`)
	// A column compared with a literal that has a fraction (or IN a
	// list that starts with one): the column's kind decides whether it
	// is an INT-family one (intFractions).
	intVsFraction = regexp.MustCompile(`\b(\w+\.\w+) (=|<>|<|<=|>|>=|<=>|IN \(|NOT IN \() ?-?[0-9]+\.[0-9]*[1-9]`)
)

// deviations lists what MariaDB does differently from MySQL 8 that the
// generated statements can meet.
var deviations = []deviation{
	{
		name: "mariadb-rounds-fraction-vs-int",
		why: "MariaDB rounds a fractional constant compared with an indexed INT column " +
			"(a range on the index is built from the rounded value), so a = 1.5 can match 2; " +
			"MySQL 8 compares exactly",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool { return intFractions(s, stmt) != stmt },
		// Confirmed per statement: with the column written a + 0 (no
		// index; the same value) MariaDB must answer as percdb.
		without: func(s *schema, stmt string) (string, bool) {
			alt := intFractions(s, stmt)
			return alt, alt != stmt
		},
	},
	{
		name: "mariadb-row-inequality-rejects-null",
		why: "MariaDB's outer-join simplification takes a row comparison in a WHERE, such as " +
			"(x2.c, x1.d) <> (7, 5) or (x1.a, x2.c) >= (5, 'B'), for a condition that rejects NULLs " +
			"of x2, and turns the LEFT JOIN into an inner join; but with x2.c NULL the other pair " +
			"can decide it (NULL <> 7 OR 2 <> 5 is TRUE; 11 > 5 decides >=), so MariaDB drops rows " +
			"MySQL 8 returns (checked: SELECT (NULL, 2) <> (7, 5) is 1 on MariaDB 10.11 too, and " +
			"the query with ... IS TRUE still loses the row)",
		// percdb may fail with 1062 where MariaDB succeeds: an UPDATE
		// of the rows MariaDB drops sets a unique column of two of them
		// to one value (application run, seed 12280); MariaDB's
		// statement written pair by pair must then fail too.
		match: func(stmt string, p, m outcome) bool {
			return (p.err == nil || strings.Contains(p.err.Error(), "1062")) && m.err == nil &&
				strings.Contains(stmt, "LEFT JOIN") && rowNotEqual.MatchString(stmt)
		},
		without: func(_ *schema, stmt string) (string, bool) { return expandRowComparisons(stmt) },
	},
	{
		name: "mariadb-rounds-fraction-in-int-subquery",
		why: "MariaDB looks a DOUBLE or DECIMAL value up among the INT values of an IN " +
			"subquery through the INT column's index, with the value converted to an integer, " +
			"so 2.5 NOT IN (SELECT c ...) with a c of 2 is FALSE; MySQL 8 compares them as " +
			"numbers (TRUE). Confirmed per statement: with the subquery's column written c + 0 " +
			"(no index; the same values) MariaDB must answer as percdb",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool {
			return s.inSubqueryOf(stmt, func(l, r kind) bool {
				return (l == kDouble || l == kDecimal) && (r == kInt || r == kBigint)
			})
		},
		without: func(s *schema, stmt string) (string, bool) {
			return s.subqueryColumnsAs(stmt, func(_, r kind) bool { return r == kInt || r == kBigint },
				func(c string) string { return c + " + 0" })
		},
	},
	{
		name: "mariadb-bin-not-in-indexed-ci-subquery",
		why: "MariaDB answers x NOT IN (SELECT y ...) for a utf8mb4_bin x and an indexed " +
			"utf8mb4_general_ci y through y's index, under y's case-insensitive collation, so " +
			"'A' NOT IN (SELECT y ...) with a y of 'a' is FALSE; both MySQL 8 and MariaDB's own " +
			"IN and unindexed NOT IN compare two columns of one character set under the _bin " +
			"collation (MySQL 8 manual, Collation Coercibility in Expressions: an operation that " +
			"mixes a _bin collation with a _ci one of the same character set uses the _bin one; " +
			"checked on MariaDB 10.11: with y of 'a', 'ab', 'B', 'A' IN (SELECT y ...) is 0 and " +
			"'A' NOT IN (SELECT y ...) 0). Confirmed per statement: with the subquery's column " +
			"written CONCAT(y) (the same collation and coercibility, no index) MariaDB must " +
			"answer as percdb",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool {
			return s.inSubqueryOf(stmt, func(l, r kind) bool { return l == kStrBin && r == kStrCI })
		},
		without: func(s *schema, stmt string) (string, bool) {
			return s.subqueryColumnsAs(stmt, func(l, r kind) bool { return l == kStrBin && r == kStrCI },
				func(c string) string { return "CONCAT(" + c + ")" })
		},
	},
	{
		name: "mariadb-ci-not-in-bin-subquery",
		why: "MariaDB answers x NOT IN (SELECT y ...) for a utf8mb4_general_ci x and a " +
			"utf8mb4_bin y under x's case-insensitive collation, so 'b' NOT IN (SELECT y ...) " +
			"with a y of 'B' is FALSE; MySQL 8 compares two columns of one character set under " +
			"the _bin collation (MySQL 8 manual, Collation Coercibility in Expressions: an " +
			"operation that mixes a _bin collation with a _ci one of the same character set " +
			"uses the _bin one), and so does MariaDB's own IN (checked on MariaDB 10.11 with " +
			"x of 'B', 'a%b', 'b' and y of 'a%b', 'B', 'abc': IN finds the first two rows, " +
			"NOT IN none, NOT EXISTS (... WHERE y = x) none; the wide run, seeds 10231 and " +
			"10236). Confirmed per statement: with the outer column written x COLLATE " +
			"utf8mb4_bin (the comparison's collation either way in MySQL 8) MariaDB must " +
			"answer as percdb",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool {
			_, ok := s.ciNotInOverBin(stmt)
			return ok
		},
		without: func(s *schema, stmt string) (string, bool) { return s.ciNotInOverBin(stmt) },
	},
	{
		name: "mariadb-quantified-extremum-by-subquery-collation",
		why: "MariaDB answers x < ANY, <= ANY, > ALL ... (SELECT y ...) in a WHERE by comparing x " +
			"with the subquery's MAX or MIN, and for a utf8mb4_bin x and a utf8mb4_general_ci y " +
			"takes that MAX or MIN under y's case-insensitive collation but compares under the " +
			"_bin one, which MySQL 8 and MariaDB use for two columns of one character set (the " +
			"MySQL 8 manual, Collation Coercibility in Expressions): with y of 'B' and 'ab', " +
			"'a' <= ANY (SELECT y ...) found MAX(y) = 'B' and 'a' <= 'B' false under _bin, though " +
			"'a' <= 'ab' is true (checked on MariaDB 10.11: the same comparison in the select " +
			"list is 1, NOT (... <= ANY ...) keeps the row, and EXISTS (... WHERE x <= y) finds " +
			"it). Confirmed per statement: with the subquery's column written y COLLATE " +
			"utf8mb4_bin (the comparison's collation either way) MariaDB must answer as percdb",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool {
			_, ok := s.binQuantifiedOverCI(stmt)
			return ok
		},
		without: func(s *schema, stmt string) (string, bool) { return s.binQuantifiedOverCI(stmt) },
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
			return s.inSubqueryOf(stmt, func(l, r kind) bool { return l == kDatetime && r == kDate })
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
		name: "mariadb-clamps-negative-cast-to-unsigned",
		why: "MariaDB's CAST(x AS UNSIGNED) of a negative DECIMAL or DOUBLE is 0 (with a " +
			"warning); MySQL 8 rounds x to an integer (a DECIMAL half away from zero, a DOUBLE " +
			"as rint) and reads a negative one as unsigned, as it does CAST(-2 AS UNSIGNED) " +
			"(Item_typecast_unsigned::val_int): CAST(-1.5 AS UNSIGNED) is 18446744073709551614. " +
			"Confirmed per statement: with each cast written CAST(CAST(x AS SIGNED) AS UNSIGNED), " +
			"which MariaDB rounds and wraps as MySQL 8 does, MariaDB must answer as percdb",
		match:   func(stmt string, p, m outcome) bool { return strings.Contains(stmt, " AS UNSIGNED)") },
		without: func(_ *schema, stmt string) (string, bool) { return castsThroughSigned(stmt) },
	},
	{
		name: "mariadb-division-keeps-nine-digits",
		why: "MariaDB keeps a DECIMAL quotient to 9 digits after the point and rounds it to " +
			"the result's scale (the dividend's + div_precision_increment, 4) only when it sends " +
			"the value itself: converted first, to a string or a DOUBLE (a UNION column of a " +
			"string or a DOUBLE, CONCAT), 7 / 3 is 2.333333333. MySQL 8 computes the quotient at " +
			"that scale (my_decimal_div with prec_increment), 2.3333, and converts that (AVG " +
			"the same: 0.333333333 for 0.3333). Matched " +
			"when the statement divides or averages, MariaDB's answer has a value of 9 digits after the point, " +
			"and the answers are the same with every value of more than 4 such digits rounded to 4",
		match: func(stmt string, p, m outcome) bool {
			return p.err == nil && m.err == nil && (strings.Contains(stmt, " / ") || strings.Contains(stmt, "AVG(")) && hasNineDecimals(m) &&
				same(roundedDecimals(p), roundedDecimals(m), false)
		},
	},
	{
		name: "mariadb-subquery-cache-by-outer-collation",
		why: "MariaDB's subquery cache keys a correlated subquery's result by the outer " +
			"column's value under that column's collation: with s.bin_col = x.ci_col in the " +
			"subquery (compared in utf8mb4_bin, as MySQL 8 does), the outer rows 'A' and 'a' " +
			"of the utf8mb4_general_ci x.ci_col share one cached result, so NOT EXISTS, a " +
			"correlated MIN/MAX or a scalar subquery answered for 'a' what it found for 'A' " +
			"(checked: its own COUNT(*) and GROUP_CONCAT of the subquery disagree with its MIN). " +
			"Confirmed per statement: run with SET STATEMENT optimizer_switch=" +
			"'subquery_cache=off' FOR (the same plan without the cache) MariaDB must answer as percdb",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool {
			_, ok := binCollateEqualities(s, stmt)
			return ok && strings.Contains(stmt, "(SELECT ")
		},
		without: func(_ *schema, stmt string) (string, bool) {
			return "SET STATEMENT optimizer_switch='subquery_cache=off' FOR " + stmt, true
		},
	},
	{
		name: "mariadb-rounds-fraction-through-equality",
		why: "MariaDB carries a fractional constant through an equality of columns " +
			"(x2.c0 = 2.50 AND x1.c9 = x2.c0) to an indexed INT column and rounds it there, " +
			"as it does a constant compared with the INT column itself (mariadb-rounds-" +
			"fraction-vs-int), so x1.c9 = 3 joins x2.c0 = 2.50; MySQL 8 compares exactly. " +
			"Confirmed per statement: with the INT column of each such equality written " +
			"c + 0 (no index; the same value) MariaDB must answer as percdb",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool {
			_, ok := intEqualitiesUnindexed(s, stmt)
			return ok && fractionRE.MatchString(stmt)
		},
		without: intEqualitiesUnindexed,
	},
	{
		name: "mariadb-year-range-beyond-year",
		why: "MariaDB's range on an indexed YEAR column for a constant no YEAR holds (y < 3000, " +
			"y > -5) is empty, so y < 3000 finds no row; MySQL 8 compares a YEAR with an integer " +
			"that is no year input as numbers (every year is below 3000). Confirmed per statement: " +
			"with the column written y + 0 (no index; the same number) MariaDB must answer as percdb",
		matchTypes: func(s *schema, stmt string, _, _ outcome) bool { return yearsBeyond(s, stmt) != stmt },
		without: func(s *schema, stmt string) (string, bool) {
			alt := yearsBeyond(s, stmt)
			return alt, alt != stmt
		},
	},
	{
		name: "mariadb-between-on-bin-index",
		why: "MariaDB's range on an indexed utf8mb4_bin column for c BETWEEN 'A' AND 'a' is " +
			"empty (it orders the bounds case-insensitively), so 'a' is not found; MySQL 8 " +
			"compares in the column's collation ('A' <= 'a' <= 'a'). Confirmed per statement: " +
			"with each BETWEEN written as c >= lo AND c <= hi, which means the same, MariaDB " +
			"must answer as percdb",
		match:   func(stmt string, _, _ outcome) bool { return betweenRE.MatchString(stmt) },
		without: func(_ *schema, stmt string) (string, bool) { return expandBetweens(stmt) },
	},
	{
		name: "mariadb-distinct-constant-ignores-offset",
		why: "MariaDB answers SELECT DISTINCT of constants only (a literal, an uncorrelated " +
			"scalar subquery) with one row whatever the OFFSET: SELECT DISTINCT 5 FROM t LIMIT " +
			"2 OFFSET 1 is 5 (MySQL 8: no row, the one distinct row is skipped). Confirmed per " +
			"statement: with the DISTINCT select in a derived table and the ORDER BY, LIMIT " +
			"and OFFSET outside it, MariaDB must answer as percdb",
		match: func(stmt string, p, m outcome) bool {
			return p.err == nil && m.err == nil && strings.HasPrefix(stmt, "SELECT DISTINCT ") && strings.Contains(stmt, " OFFSET ")
		},
		without: func(_ *schema, stmt string) (string, bool) { return distinctInDerived(stmt) },
	},
	{
		name: "mariadb-least-greatest-mixed-as-numbers",
		why: "MariaDB (as MySQL 5.7) compares the arguments of GREATEST and LEAST that mix " +
			"numbers and strings as numbers: LEAST(2.50, '10') is 2.50. MySQL 8 compares them as " +
			"strings (\"If the arguments comprise a mix of numbers and strings, they are compared " +
			"as strings\", 8.0's reference) and returns a string: '10'. Confirmed per statement: " +
			"with each argument written CONCAT(x), a string of the same text, MariaDB must answer " +
			"as percdb",
		match: func(stmt string, p, m outcome) bool {
			return strings.Contains(stmt, "LEAST(") || strings.Contains(stmt, "GREATEST(")
		},
		without: func(_ *schema, stmt string) (string, bool) { return extremumArgsAsText(stmt) },
	},
	{
		name: "mariadb-rank-fractions-ten-digits",
		why: "MariaDB sends CUME_DIST() and PERCENT_RANK() with 10 digits after the point " +
			"(0.3333333333); MySQL 8 sends the DOUBLE in full (0.3333333333333333), as percdb. " +
			"Matched when the statement calls one of them and the answers are the same with " +
			"every value of more than 10 such digits rounded to 10",
		match: func(stmt string, p, m outcome) bool {
			return p.err == nil && m.err == nil && (strings.Contains(stmt, "CUME_DIST()") || strings.Contains(stmt, "PERCENT_RANK()")) &&
				same(roundedTo(p, tenDecimalsRE, 10), m, false)
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
	{
		name: "mariadb-strict-zero-date-in-query-temporary-table",
		why: "MariaDB fails a query whose recursive CTE or derived table it materializes when " +
			"a row carries a zero date (one an INSERT IGNORE stored) under a strict sql_mode " +
			"with NO_ZERO_DATE: 1292 Incorrect datetime value ... for column `(temporary)`; " +
			"MySQL 8's strict mode and NO_ZERO_DATE judge the values data-change statements " +
			"store (the manual, Server SQL Modes: strict mode controls how MySQL handles invalid " +
			"or missing values in data-change statements such as INSERT or UPDATE), not a " +
			"query's internal temporary table, and percdb answers. Explained only when MariaDB " +
			"answers the query as percdb did with the strict mode off for it (SET STATEMENT " +
			"sql_mode = '' FOR ...)",
		match: func(stmt string, p, m outcome) bool {
			return p.err == nil && m.err != nil && errorCode(m.err) == 1292 &&
				strings.Contains(m.err.Error(), "(temporary)") && isQuery(stmt)
		},
		without: func(_ *schema, stmt string) (string, bool) {
			return "SET STATEMENT sql_mode = '' FOR " + stmt, true
		},
	},
	{
		name: "mariadb-strict-dml-string-comparison-only-warns",
		why: "MariaDB runs an UPDATE or DELETE under a strict sql_mode whose WHERE clause " +
			"compares a number with a string that is not a number ('abc', '7x'), with warning " +
			"1292; MySQL 8's strict mode turns that warning of a data change into error 1292 " +
			"(Truncated incorrect DOUBLE value, sql/error_handler.cc, Strict_error_handler), and " +
			"so does percdb (sql/compat/strict.go). Matched when percdb failed with that error, " +
			"MariaDB did not, and the statement has such a string; or MariaDB failed later, on " +
			"the value the UPDATE stores (1264, 1690): MySQL 8 evaluates a row's WHERE before " +
			"its SET, and the string's conversion, constant, fails at the first row it is met " +
			"in, before any value is stored",
		match: func(stmt string, p, m outcome) bool {
			if c := errorCode(m.err); m.err != nil && c != 1264 && c != 1690 {
				return false
			}
			if p.err == nil || !strings.Contains(p.err.Error(), "1292") ||
				!strings.Contains(p.err.Error(), "Truncated incorrect DOUBLE value") {
				return false
			}
			up := strings.ToUpper(strings.TrimSpace(stmt))
			if !strings.HasPrefix(up, "UPDATE") && !strings.HasPrefix(up, "DELETE") {
				return false
			}
			// The string may be the statement's, or a row's where the
			// WHERE clause compares a string column with a subquery's
			// number (DELETE FROM t WHERE s = (SELECT MIN(a) ...) with
			// an s of 'a_b'); a row's string elsewhere is percdb's own.
			q := truncatedValueRE.FindStringSubmatch(p.err.Error())
			if q == nil || numericStringRE.MatchString(q[1]) {
				return false
			}
			if strings.Contains(stmt, "'"+q[1]+"'") {
				return true
			}
			_, where, ok := strings.Cut(up, " WHERE ")
			return ok && strings.Contains(where, "(SELECT")
		},
	},
	strictWarnsBeforeError,
	{
		name: "mariadb-propagates-equality-into-null-safe",
		why: "MariaDB's equality propagation merges a join's x1.c = x2.c with the WHERE's " +
			"x1.c <=> x2.c of the same columns, and keeps a row whose c is NULL on both sides; " +
			"x1.c = x2.c is NULL there, so the inner join has no such row (SQL, MySQL 8), as percdb " +
			"answers (wide seed 10356). Confirmed per statement: with the <=> written IF(x1.c <=> x2.c, 1, 0) = 1, " +
			"the same condition in MySQL 8 but no equality to propagate, MariaDB must answer as percdb",
		match: func(stmt string, p, m outcome) bool {
			alt, ok := nullSafeUnpropagated(stmt)
			return ok && alt != stmt && p.err == nil && m.err == nil
		},
		without: func(_ *schema, stmt string) (string, bool) { return nullSafeUnpropagated(stmt) },
	},
	{
		name: "mariadb-set-operation-string-decimal-as-number",
		why: "MariaDB compares the rows of a UNION, EXCEPT or INTERSECT whose column is a string on one " +
			"side and a DECIMAL on the other as numbers when the string is a function's (LEAST(c, '10'), " +
			"CONCAT('0')) and as strings when it is a literal: SELECT CONCAT('0') UNION SELECT 0/3 is one " +
			"row, SELECT '0' UNION SELECT 0/3 two. MySQL 8's column is a VARCHAR (Field::field_type_merge: " +
			"VARCHAR with NEWDECIMAL) holding the DECIMAL at its scale ('0.0000'), compared as strings: " +
			"two rows, as percdb answers (wide seeds 10276, 10334). Confirmed per statement: with every " +
			"side's column written CONCAT(x), the same strings in MySQL 8, MariaDB must answer as percdb",
		match: func(stmt string, p, m outcome) bool {
			alt, ok := setOperationColumnsAsText(stmt)
			return ok && alt != stmt && p.err == nil && m.err == nil && strings.Contains(stmt, "'")
		},
		without: func(_ *schema, stmt string) (string, bool) { return setOperationColumnsAsText(stmt) },
	},
	{
		name: "mariadb-coalesce-decimal-text-drops-scale",
		why: "MariaDB writes COALESCE (IFNULL) of a DECIMAL column and an integer, read as a string " +
			"(a UNION or EXCEPT column shared with a string), with the integer's text when the integer " +
			"is the value: COALESCE(d, 0) of a NULL DECIMAL(10,2) d is '0'; MySQL 8 writes the DECIMAL " +
			"result at its scale (Item_func_numhybrid::val_str, my_decimal2string with the result's " +
			"decimals): '0.00', as percdb does. Confirmed per statement: with the integer written " +
			"with the column's scale (0.00), which gives MySQL 8 the same result, MariaDB must answer " +
			"as percdb. The same of an integer column and a DECIMAL constant (IFNULL(a, 0.5) of an " +
			"INT 2 is '2', MySQL 8's '2.0'): confirmed with the column written a + 0.0 (the constant's " +
			"scale), which is a DECIMAL of that scale in both",
		matchTypes: func(s *schema, stmt string, p, m outcome) bool {
			alt, ok := decimalCoalesceScale(s, stmt)
			return ok && alt != stmt && p.err == nil && m.err == nil
		},
		without: decimalCoalesceScale,
	},
	{
		name: "mariadb-rollup-adds-distinct-aggregates",
		why: "MariaDB computes a DISTINCT aggregate's super-aggregate row of GROUP BY ... WITH ROLLUP " +
			"from the rows of the groups below it: COUNT(DISTINCT b) of the grand total is the sum of " +
			"the groups' counts (rows (5, 1), (6, 1) GROUP BY a WITH ROLLUP: 1, 1, 2); a super-aggregate " +
			"row is the aggregate over all the rows of its group (MySQL 8 reference manual, GROUP BY " +
			"Modifiers; grouping sets are the union of the groupings), 1 there, as percdb answers. " +
			"Matched only where both answer the same number of rows",
		match: func(stmt string, p, m outcome) bool {
			return p.err == nil && m.err == nil && len(p.rows) == len(m.rows) &&
				strings.Contains(stmt, " WITH ROLLUP") && strings.Contains(stmt, "(DISTINCT ")
		},
	},
	{
		name: "mariadb-multi-update-rejoins-changed-rows",
		why: "MariaDB's UPDATE of two joined tables that assigns a column its ON condition reads " +
			"changes the rows of the first table of its join order as it reads them (multi_update, " +
			"safe_update_on_fly), and the join then no longer matches them to the rows it joins " +
			"next: UPDATE t0 JOIN t1 ON t0.c9 = t1.c9 SET t0.c9 = -1, t1.c9 = 5 over two rows of " +
			"t0 joined to one of t1 changes one of them, and its answer depends on the join order " +
			"it picks. An UPDATE changes the rows its join finds as the tables were when it " +
			"began (MySQL 8 reference manual, UPDATE: multiple-table syntax), as percdb does. " +
			"Confirmed per statement: with the tables joined by STRAIGHT_JOIN, first the one whose " +
			"join columns the statement does not assign (the table MariaDB changes as it reads), " +
			"or, when it assigns both tables' join columns, after a derived table of two equal " +
			"rows it does not change (so that MariaDB changes no table as it reads; checked on " +
			"seed 12049: 5 rows as written, 6 so, as percdb), MariaDB must answer as percdb. " +
			"Percdb's 1062 is among the answers: the rows the join finds as the tables were assign " +
			"one unique column's value twice, which MariaDB's rejoin skipped (seed 12414: eleven t2 " +
			"rows joined to one t0 row given t2.c2 = 0; t2 first, MariaDB fails with 1062 too)",
		match: func(stmt string, p, m outcome) bool {
			return (p.err == nil || strings.Contains(p.err.Error(), "1062")) && m.err == nil && multiUpdateSetsJoinColumn(stmt)
		},
		without: func(_ *schema, stmt string) (string, bool) {
			if !multiUpdateSetsJoinColumn(stmt) {
				return stmt, false
			}
			return straightMultiUpdate(strings.TrimSpace(stmt)), true
		},
	},
}

// multiUpdateRE finds the ON condition and the SET clause of an UPDATE
// of two tables joined by an inner join.
var multiUpdateRE = regexp.MustCompile(`^UPDATE \w+(?: (\w+))? JOIN \w+(?: \w+)? ON (.*?) SET (.*?)(?: WHERE .*)?$`)

// multiUpdateTablesRE splits an UPDATE of two joined tables into its
// first table (and alias), its second, and the rest from ON.
var multiUpdateTablesRE = regexp.MustCompile(`^UPDATE (\w+(?: \w+)?) JOIN (\w+(?: \w+)?) (ON .*)$`)

// straightMultiUpdate returns stmt, an UPDATE of two joined tables, with
// the tables joined by STRAIGHT_JOIN, the first table one whose join
// columns the SET clause does not assign: the written order unless only
// the first table's are assigned, and after a derived table when both
// tables' are.
func straightMultiUpdate(stmt string) string {
	sub := multiUpdateTablesRE.FindStringSubmatch(stmt)
	if sub == nil {
		return strings.Replace(stmt, " JOIN ", " STRAIGHT_JOIN ", 1)
	}
	m := multiUpdateRE.FindStringSubmatch(stmt)
	assigns := func(table string) bool {
		name := strings.Fields(table)
		qual := name[len(name)-1] + "."
		for _, a := range strings.Split(m[3], ", ") {
			col, _, _ := strings.Cut(a, " = ")
			if strings.HasPrefix(col, qual) && strings.Contains(m[2], col) {
				return true
			}
		}
		return false
	}
	switch {
	case m != nil && assigns(sub[1]) && assigns(sub[2]):
		// Both tables' join columns assigned: whichever comes first
		// is changed as it is read. A derived table of two equal rows
		// first, which the statement does not change, leaves MariaDB
		// no table to change as it reads (each joined row is found
		// twice, and changed and counted once).
		return "UPDATE (SELECT 1 AS one UNION ALL SELECT 1) AS dz STRAIGHT_JOIN " + sub[1] + " STRAIGHT_JOIN " + sub[2] + " " + sub[3]
	case m != nil && assigns(sub[1]):
		return "UPDATE " + sub[2] + " STRAIGHT_JOIN " + sub[1] + " " + sub[3]
	}
	return "UPDATE " + sub[1] + " STRAIGHT_JOIN " + sub[2] + " " + sub[3]
}

// multiUpdateSetsJoinColumn reports whether stmt is an UPDATE of two
// tables (an inner join) whose SET clause assigns a column its ON
// condition reads.
func multiUpdateSetsJoinColumn(stmt string) bool {
	sub := multiUpdateRE.FindStringSubmatch(strings.TrimSpace(stmt))
	if sub == nil {
		return false
	}
	switch strings.ToUpper(sub[1]) {
	case "LEFT", "RIGHT", "INNER", "CROSS", "STRAIGHT":
		return false // an outer join, or JOIN written another way
	}
	for _, a := range strings.Split(sub[3], ", ") {
		col, _, ok := strings.Cut(a, " = ")
		if ok && regexp.MustCompile(`\b`+regexp.QuoteMeta(strings.TrimSpace(col))+`\b`).MatchString(sub[2]) {
			return true
		}
	}
	return false
}

// coalesceIntRE finds COALESCE or IFNULL of a column and an integer.
var coalesceIntRE = regexp.MustCompile(`\b(COALESCE|IFNULL)\((\w+\.\w+), (-?[0-9]+)\)`)

// coalesceFractionRE finds COALESCE or IFNULL of a column and a
// constant with digits after the point.
var coalesceFractionRE = regexp.MustCompile(`\b(COALESCE|IFNULL)\((\w+\.\w+), (-?[0-9]+\.([0-9]+))\)`)

// decimalCoalesceScale returns stmt with the integer of each COALESCE or
// IFNULL of a DECIMAL(10,2) column and an integer written with two
// digits after the point, and the integer column of each COALESCE or
// IFNULL of an integer column and a DECIMAL constant written plus a zero
// of the constant's scale, and whether there was one.
func decimalCoalesceScale(s *schema, stmt string) (string, bool) {
	found := false
	stmt = coalesceFractionRE.ReplaceAllStringFunc(stmt, func(m string) string {
		sub := coalesceFractionRE.FindStringSubmatch(m)
		if !s.anyKindOf(stmt, sub[2], kInt) && !s.anyKindOf(stmt, sub[2], kBigint) {
			return m
		}
		found = true
		return fmt.Sprintf("%s(%s + 0.%s, %s)", sub[1], sub[2], strings.Repeat("0", len(sub[4])), sub[3])
	})
	alt := coalesceIntRE.ReplaceAllStringFunc(stmt, func(m string) string {
		sub := coalesceIntRE.FindStringSubmatch(m)
		if !s.anyKindOf(stmt, sub[2], kDecimal) {
			return m
		}
		found = true
		return fmt.Sprintf("%s(%s, %s.00)", sub[1], sub[2], sub[3])
	})
	return alt, found
}

// strictWarnsBeforeError is the deviation of a strict data change that
// failed on both servers with the same error, MariaDB listing warnings
// of that code before it.
var strictWarnsBeforeError = deviation{
	name: "mariadb-strict-dml-warns-before-its-error",
	why: "MySQL 8 installs its Strict_error_handler for the whole of a data change under a " +
		"strict sql_mode, from its preparation on (Sql_cmd_dml::execute, sql/sql_select.cc), " +
		"so the first truncation, even the optimizer's conversion of a constant ('abc' for an " +
		"index range), is raised as the statement's error and SHOW WARNINGS lists that error " +
		"alone, as percdb's; MariaDB turns warnings into errors only while it changes rows " +
		"(thd->abort_on_warning, set in mysql_update after the optimizer), so its optimizer's " +
		"conversions stay warnings, listed before the same error. Matched on the warnings of a " +
		"data change whose list is the error alone on percdb and warnings of the error's code " +
		"then that error on MariaDB",
	match: func(stmt string, p, m outcome) bool {
		up := strings.ToUpper(strings.TrimSpace(stmt))
		if !strings.HasPrefix(up, "UPDATE") && !strings.HasPrefix(up, "DELETE") && !strings.HasPrefix(up, "INSERT") {
			return false
		}
		if len(p.rows) != 1 || len(m.rows) != 1 || len(p.rows[0]) != 1 || len(m.rows[0]) != 1 {
			return false
		}
		perr, ok := strings.CutPrefix(p.rows[0][0], "error ")
		if !ok || strings.Contains(perr, ",") {
			return false
		}
		codes := strings.Split(m.rows[0][0], ",")
		if len(codes) < 2 || codes[len(codes)-1] != "error "+perr {
			return false
		}
		for _, c := range codes[:len(codes)-1] {
			if c != perr {
				return false
			}
		}
		return true
	},
}

var (
	// The value named by a 1292 Truncated incorrect DOUBLE value, in
	// group 1.
	truncatedValueRE = regexp.MustCompile(`Truncated incorrect DOUBLE value: '([^']*)'`)
	// A string MySQL reads as a number without a warning.
	numericStringRE = regexp.MustCompile(`^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$`)
)

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

// castsThroughSigned returns stmt with each CAST(x AS UNSIGNED) written
// CAST(CAST(x AS SIGNED) AS UNSIGNED), and whether it had one.
func castsThroughSigned(stmt string) (string, bool) {
	const tail = " AS UNSIGNED)"
	var b strings.Builder
	rest, changed := stmt, false
	for {
		end := strings.Index(rest, tail)
		if end < 0 {
			break
		}
		// The CAST( whose parenthesis the tail closes.
		depth, start := 0, -1
		for i := end - 1; i >= 0 && start < 0; i-- {
			switch rest[i] {
			case ')':
				depth++
			case '(':
				if depth == 0 {
					start = i
				}
				depth--
			}
		}
		if start < 4 || !strings.EqualFold(rest[start-4:start], "CAST") {
			return stmt, false
		}
		b.WriteString(rest[:start+1])
		b.WriteString("CAST(" + rest[start+1:end] + " AS SIGNED)" + tail)
		rest, changed = rest[end+len(tail):], true
	}
	b.WriteString(rest)
	return b.String(), changed
}

// knownDeviation returns the deviation that explains a difference, if
// any. confirm runs a deviation's statement without it (deviation.without)
// on MariaDB and reports whether the answer is percdb's.
//
// A statement can meet two deviations at once (LEAST(x, '10') beside
// CAST(y AS UNSIGNED) of a negative y), and then neither statement
// without one of them is answered as percdb answered. So when no
// deviation explains it alone, the statement is written without every
// matching deviation that has a without, each rewrite applied to the
// last one's statement, and that statement confirms them together: the
// difference is counted under the first of them.
func knownDeviation(s *schema, stmt string, p, m outcome, confirm func(alt string) bool) *deviation {
	var rewrites []*deviation
	for i := range deviations {
		d := &deviations[i]
		if !(d.match != nil && d.match(stmt, p, m) || d.matchTypes != nil && s != nil && d.matchTypes(s, stmt, p, m)) {
			continue
		}
		if d.without != nil {
			alt, ok := d.without(s, stmt)
			if !ok {
				continue
			}
			rewrites = append(rewrites, d)
			if !confirm(alt) {
				continue
			}
		}
		return d
	}
	if len(rewrites) < 2 {
		return nil
	}
	alt := stmt
	for _, d := range rewrites {
		if next, ok := d.without(s, alt); ok {
			alt = next
		}
	}
	if confirm(alt) {
		return rewrites[0]
	}
	return nil
}

// Row comparisons as the generator writes them: two columns against two
// values, or IN / NOT IN a list of two such rows.
var (
	rowCompareRE = regexp.MustCompile(`\(([^(),]+), ([^(),]+)\) (<>|<=|>=|<|>|=) \(([^(),]+), ([^(),]+)\)`)
	rowInRE      = regexp.MustCompile(`\(([^(),]+), ([^(),]+)\) (NOT IN|IN) \(\(([^(),]+), ([^(),]+)\), \(([^(),]+), ([^(),]+)\)\)`)
)

// expandRowComparisons returns stmt with its row comparisons written
// pair by pair, as MySQL 8 defines them ((a, b) < (c, d) is a < c OR
// (a = c AND b < d); (a, b) <> (c, d) is a <> c OR b <> d; r IN (r1, r2)
// is r = r1 OR r = r2), and whether it had one.
func expandRowComparisons(stmt string) (string, bool) {
	changed := false
	out := rowInRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := rowInRE.FindStringSubmatch(m)
		changed = true
		in := fmt.Sprintf("((%s = %s AND %s = %s) OR (%s = %s AND %s = %s))", g[1], g[4], g[2], g[5], g[1], g[6], g[2], g[7])
		if g[3] == "NOT IN" {
			return "(NOT " + in + ")"
		}
		return in
	})
	out = rowCompareRE.ReplaceAllStringFunc(out, func(m string) string {
		g := rowCompareRE.FindStringSubmatch(m)
		a, b, op, c, d := g[1], g[2], g[3], g[4], g[5]
		changed = true
		switch op {
		case "=":
			return fmt.Sprintf("(%s = %s AND %s = %s)", a, c, b, d)
		case "<>":
			return fmt.Sprintf("(%s <> %s OR %s <> %s)", a, c, b, d)
		}
		strict := op[:1] // < or >
		return fmt.Sprintf("(%s %s %s OR (%s = %s AND %s %s %s))", a, strict, c, a, c, b, op, d)
	})
	return out, changed
}

// isQuery reports whether stmt returns rows (so may be run again).
func isQuery(stmt string) bool {
	up := strings.ToUpper(strings.TrimSpace(stmt))
	if rest, ok := strings.CutPrefix(up, "SET STATEMENT "); ok {
		// MariaDB's one statement under a setting (a deviation's
		// confirmation).
		if _, q, ok := strings.Cut(rest, " FOR "); ok {
			up = q
		}
	}
	return strings.HasPrefix(up, "SELECT") || strings.HasPrefix(up, "WITH")
}

// inline returns stmt with its parameters written in as literals: the
// statement parameterize made them of (numbers as numbers, whether
// passed as integers or as their text; strings quoted).
func inline(stmt string, args []any) string {
	if len(args) == 0 {
		return stmt
	}
	var b strings.Builder
	n := 0
	inQuote := false
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(stmt):
			b.WriteByte(c)
			i++
			b.WriteByte(stmt[i])
			continue
		case c == '\'':
			inQuote = !inQuote
		case c == '?' && !inQuote && n < len(args):
			b.WriteString(literal(args[n]))
			n++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// literal writes a parameter as the literal parameterize took it from.
func literal(v any) string {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		if numberRE.MatchString(v) {
			return v
		}
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return fmt.Sprint(v)
}

// subqueryColumnsAs returns stmt with the column y of each x IN (SELECT
// y ...) whose kinds match written as(y), and whether it had one.
func (s *schema) subqueryColumnsAs(stmt string, match func(x, y kind) bool, as func(y string) string) (string, bool) {
	alt := inSubqueryRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := inSubqueryRE.FindStringSubmatch(m)
		if !match(s.kindOf(stmt, g[1]), s.kindOf(stmt, g[2])) {
			return m
		}
		return strings.Replace(m, "(SELECT "+g[2]+" FROM", "(SELECT "+as(g[2])+" FROM", 1)
	})
	return alt, alt != stmt
}

// notInSubqueryRE finds "x.c NOT IN (SELECT y.d FROM" or "x.c NOT IN
// (SELECT dv FROM", a derived table's column: the column compared and
// the column the subquery returns.
var notInSubqueryRE = regexp.MustCompile(`(\w+\.\w+) NOT IN \(SELECT (\w+(?:\.\w+)?) FROM`)

// ciNotInOverBin returns stmt with the outer column x of each x NOT IN
// (SELECT y ...) of a utf8mb4_general_ci x and a utf8mb4_bin y written
// x COLLATE utf8mb4_bin, and whether it had one.
func (s *schema) ciNotInOverBin(stmt string) (string, bool) {
	alt := notInSubqueryRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := notInSubqueryRE.FindStringSubmatch(m)
		y := g[2]
		if !strings.Contains(y, ".") {
			// A derived table's column: the kind of the column it
			// selects ("li.c2 AS dv").
			def := regexp.MustCompile(`(\w+\.\w+) AS ` + regexp.QuoteMeta(y) + `\b`).FindStringSubmatch(stmt)
			if def == nil {
				return m
			}
			y = def[1]
		}
		if s.kindOf(stmt, g[1]) != kStrCI || s.kindOf(stmt, y) != kStrBin {
			return m
		}
		return g[1] + " COLLATE utf8mb4_bin" + strings.TrimPrefix(m, g[1])
	})
	return alt, alt != stmt
}

// inSubqueryOf reports whether stmt has an x IN (SELECT y ...) whose
// kinds of x and y are such that match.
func (s *schema) inSubqueryOf(stmt string, match func(x, y kind) bool) bool {
	for _, m := range inSubqueryRE.FindAllStringSubmatch(stmt, -1) {
		if match(s.kindOf(stmt, m[1]), s.kindOf(stmt, m[2])) {
			return true
		}
	}
	return false
}

// intFractions returns stmt with each INT or BIGINT column compared with
// a literal that has a fraction written col + 0 (which MariaDB compares
// without its index, as MySQL 8 compares the column). A row comparison
// that pairs such a column with such a literal ((x1.d, x1.c) = ('2020-
// 02-29', -1.25), seed 280: MariaDB builds the range of c's index from
// -1 too) is first written pair by pair (expandRowComparisons, MySQL 8's
// definition of it), so that the pair can be written so.
func intFractions(s *schema, stmt string) string {
	if expanded, ok := expandRowComparisons(stmt); ok {
		if alt := intFractionPairs(s, expanded); alt != expanded {
			return alt
		}
	}
	return intFractionPairs(s, stmt)
}

// intFractionPairs is intFractions over the comparisons of a column and
// a literal as written.
func intFractionPairs(s *schema, stmt string) string {
	return intVsFraction.ReplaceAllStringFunc(stmt, func(m string) string {
		col, rest, _ := strings.Cut(m, " ")
		if k := s.kindOf(stmt, col); k != kInt && k != kBigint {
			return m
		}
		return col + " + 0 " + rest
	})
}

// yearVsInt finds a column compared with an integer constant.
var yearVsInt = regexp.MustCompile(`\b(\w+\.\w+) (=|<>|<|<=|>|>=|<=>) (-?[0-9]+)\b`)

// yearsBeyond returns stmt with each YEAR column compared with an
// integer that is no YEAR input (below 0, 100 to 1900, above 2155)
// written col + 0.
func yearsBeyond(s *schema, stmt string) string {
	return yearVsInt.ReplaceAllStringFunc(stmt, func(m string) string {
		g := yearVsInt.FindStringSubmatch(m)
		if s.kindOf(stmt, g[1]) != kYear {
			return m
		}
		n, err := strconv.Atoi(g[3])
		if err != nil || (n >= 0 && n < 100) || (n > 1900 && n <= 2155) {
			return m
		}
		return g[1] + " + 0 " + g[2] + " " + g[3]
	})
}

// inSubqueryRE finds "x.c IN (SELECT y.d FROM" (NOT IN too): the
// column compared and the column the subquery returns.
var inSubqueryRE = regexp.MustCompile(`(\w+\.\w+) (?:NOT )?IN \(SELECT (\w+\.\w+) FROM`)

// quantifiedRE finds "x.c <= ANY (SELECT y.d FROM": the column
// compared, the operator and the column the subquery returns.
var quantifiedRE = regexp.MustCompile(`(\w+\.\w+) (<|<=|>|>=) (ANY|SOME|ALL) \(SELECT (\w+\.\w+) FROM`)

// binQuantifiedOverCI returns stmt with the subquery column y of each
// x < ANY (SELECT y ...) (and the other orderings, with ANY, SOME or
// ALL) of a utf8mb4_bin x and a utf8mb4_general_ci y written y COLLATE
// utf8mb4_bin, and whether it had one.
func (s *schema) binQuantifiedOverCI(stmt string) (string, bool) {
	alt := quantifiedRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := quantifiedRE.FindStringSubmatch(m)
		if s.kindOf(stmt, g[1]) != kStrBin || s.kindOf(stmt, g[4]) != kStrCI {
			return m
		}
		return strings.Replace(m, "(SELECT "+g[4]+" FROM", "(SELECT "+g[4]+" COLLATE utf8mb4_bin FROM", 1)
	})
	return alt, alt != stmt
}

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

// anyKindOf reports whether ref ("x1.c0") names a column of kind k in
// one of the tables stmt gives its alias (the sides of a UNION reuse
// aliases: t1 x1 on one, t0 x1 on the other).
func (s *schema) anyKindOf(stmt, ref string, k kind) bool {
	alias, col, ok := strings.Cut(ref, ".")
	if !ok {
		return false
	}
	names := map[string]bool{alias: true}
	for _, m := range aliasRE.FindAllStringSubmatch(stmt, -1) {
		if m[2] == alias {
			names[m[1]] = true
		}
	}
	for _, t := range s.tables {
		if !names[t.name] {
			continue
		}
		for _, c := range t.cols {
			if c.name == col && c.kind == k {
				return true
			}
		}
	}
	return false
}

// nineDecimalsRE matches a number with 9 digits after the point.
var nineDecimalsRE = regexp.MustCompile(`^-?[0-9]+\.[0-9]{9}$`)

// manyDecimalsRE matches a number with more than 4 digits after the
// point.
var manyDecimalsRE = regexp.MustCompile(`^-?[0-9]+\.[0-9]{5,}$`)

// hasNineDecimals reports whether a value of o has 9 digits after the
// point.
func hasNineDecimals(o outcome) bool {
	for _, r := range o.rows {
		for _, v := range r {
			if nineDecimalsRE.MatchString(v) {
				return true
			}
		}
	}
	return false
}

// roundedDecimals returns o with each number of more than 4 digits
// after the point rounded to 4 (half away from zero).
func roundedDecimals(o outcome) outcome { return roundedTo(o, manyDecimalsRE, 4) }

// tenDecimalsRE matches a number with more than 10 digits after the
// point.
var tenDecimalsRE = regexp.MustCompile(`^-?[0-9]+\.[0-9]{11,}$`)

// roundedTo returns o with each number many matches rounded to places
// digits after the point (half away from zero).
func roundedTo(o outcome, many *regexp.Regexp, places int32) outcome {
	rows := make([][]string, len(o.rows))
	for i, r := range o.rows {
		rows[i] = make([]string, len(r))
		for j, v := range r {
			rows[i][j] = v
			if many.MatchString(v) {
				if d, err := decimal.NewFromString(v); err == nil {
					rows[i][j] = d.Round(places).StringFixed(places)
				}
			}
		}
	}
	return outcome{rows: rows, affected: o.affected}
}

// colEqualityRE finds an equality of two columns, "s0.c2 = x1.c1" or
// "x1.a = x2.c1": a key column (a, b) as well as a c column, since
// MariaDB's index on a key column rounds as any other (seed 188:
// x1.a = x2.c1 AND x2.c1 = 1.50 joined x1.a = 2).
var colEqualityRE = regexp.MustCompile(`\b([A-Za-z_]\w*\.\w+) = ([A-Za-z_]\w*\.\w+)\b`)

// binCollateEqualities returns stmt with the utf8mb4_general_ci column
// of each equality of a utf8mb4_bin and a utf8mb4_general_ci column
// written COLLATE utf8mb4_bin, and whether it had one (such an equality
// is what the subquery-cache deviation looks for).
func binCollateEqualities(s *schema, stmt string) (string, bool) {
	changed := false
	out := colEqualityRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := colEqualityRE.FindStringSubmatch(m)
		// The sides of a set operation reuse aliases (t1 x1 on one,
		// t0 x1 on the other): a column is taken for either kind its
		// alias can give it, and MariaDB's answer without the
		// deviation confirms (seed 10169: x1.c2 a VARCHAR of t1 in
		// the first side, a BIGINT of t0 in the second).
		kind := func(ref string, k kind) bool { return s.anyKindOf(stmt, ref, k) }
		switch {
		case kind(g[1], kStrBin) && kind(g[2], kStrCI):
			changed = true
			return g[1] + " = " + g[2] + " COLLATE utf8mb4_bin"
		case kind(g[1], kStrCI) && kind(g[2], kStrBin):
			changed = true
			return g[1] + " COLLATE utf8mb4_bin = " + g[2]
		}
		return m
	})
	return out, changed
}

// betweenRE finds "x1.c2 BETWEEN 'A' AND 'a'": a column between two
// literals or parameters.
var betweenRE = regexp.MustCompile(`(\w+\.\w+) (NOT )?BETWEEN ('[^']*'|\?|-?[0-9.]+) AND ('[^']*'|\?|-?[0-9.]+)`)

// expandBetweens returns stmt with each BETWEEN of betweenRE written as
// two comparisons, and whether it had one.
func expandBetweens(stmt string) (string, bool) {
	changed := false
	out := betweenRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := betweenRE.FindStringSubmatch(m)
		if g[2] != "" || g[3] == "?" || g[4] == "?" {
			return m
		}
		changed = true
		return fmt.Sprintf("(%s >= %s AND %s <= %s)", g[1], g[3], g[1], g[4])
	})
	return out, changed
}

// tailRE finds a statement's trailing ORDER BY, LIMIT and OFFSET.
var tailRE = regexp.MustCompile(`^(.*?)((?: ORDER BY [0-9]+(?: DESC| ASC)?(?:, [0-9]+(?: DESC| ASC)?)*)? LIMIT [0-9]+ OFFSET [0-9]+)$`)

// distinctInDerived returns stmt, a SELECT DISTINCT with a trailing
// ORDER BY by position, LIMIT and OFFSET, as a select from a derived
// table of the DISTINCT with those outside, and whether it could.
func distinctInDerived(stmt string) (string, bool) {
	g := tailRE.FindStringSubmatch(stmt)
	if g == nil {
		return stmt, false
	}
	return "SELECT * FROM (" + g[1] + ") AS dz" + g[2], true
}

// fractionRE finds a literal with a fraction.
var fractionRE = regexp.MustCompile(`[^\w.][0-9]+\.[0-9]*[1-9]`)

// intEqualitiesUnindexed returns stmt with the INT or BIGINT column of
// each equality of it with a DECIMAL or DOUBLE column written c + 0, and
// whether it had one.
func intEqualitiesUnindexed(s *schema, stmt string) (string, bool) {
	isInt := func(k kind) bool { return k == kInt || k == kBigint }
	isFrac := func(k kind) bool { return k == kDecimal || k == kDouble }
	changed := false
	out := colEqualityRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := colEqualityRE.FindStringSubmatch(m)
		l, r := s.kindOf(stmt, g[1]), s.kindOf(stmt, g[2])
		switch {
		case isInt(l) && isFrac(r):
			changed = true
			return g[1] + " + 0 = " + g[2]
		case isFrac(l) && isInt(r):
			changed = true
			return g[1] + " = " + g[2] + " + 0"
		}
		return m
	})
	return out, changed
}

// extremumArgsAsText returns stmt with each argument of its GREATEST and
// LEAST calls written CONCAT(x), and false when it has none.
func extremumArgsAsText(stmt string) (string, bool) {
	var b strings.Builder
	found := false
	for i := 0; i < len(stmt); {
		rest := stmt[i:]
		name := ""
		for _, n := range []string{"LEAST(", "GREATEST("} {
			if strings.HasPrefix(rest, n) && (i == 0 || !isIdentByte(stmt[i-1])) {
				name = n
			}
		}
		if name == "" {
			b.WriteByte(stmt[i])
			i++
			continue
		}
		args, end, ok := splitCallArgs(stmt, i+len(name))
		if !ok {
			return stmt, false
		}
		found = true
		b.WriteString(name)
		for k, a := range args {
			if k > 0 {
				b.WriteString(", ")
			}
			inner, _ := extremumArgsAsText(strings.TrimSpace(a))
			b.WriteString("CONCAT(" + inner + ")")
		}
		b.WriteByte(')')
		i = end + 1
	}
	return b.String(), found
}

// splitCallArgs returns the arguments of the call whose '(' is just
// before offset start, and the offset of its ')'.
func splitCallArgs(stmt string, start int) ([]string, int, bool) {
	var args []string
	depth, from := 0, start
	for i := start; i < len(stmt); i++ {
		switch c := stmt[i]; c {
		case '\'':
			for i++; i < len(stmt) && stmt[i] != '\''; i++ {
				if stmt[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return append(args, stmt[from:i]), i, true
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, stmt[from:i])
				from = i + 1
			}
		}
	}
	return nil, 0, false
}

// isIdentByte reports whether c can be part of a name.
func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// errorCode is a MySQL error's number, 0 for none.
func errorCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	if err != nil {
		return 1
	}
	return 0
}

// nullSafeEqRE is a null-safe equality of two columns.
var nullSafeEqRE = regexp.MustCompile(`\b(\w+\.\w+) <=> (\w+\.\w+)`)

// nullSafeUnpropagated returns stmt with each x <=> y of two columns that
// the statement also compares with = (either way round) written
// IF(x <=> y, 1, 0) = 1, and whether it had one.
func nullSafeUnpropagated(stmt string) (string, bool) {
	changed := false
	out := nullSafeEqRE.ReplaceAllStringFunc(stmt, func(m string) string {
		g := nullSafeEqRE.FindStringSubmatch(m)
		if !strings.Contains(stmt, g[1]+" = "+g[2]) && !strings.Contains(stmt, g[2]+" = "+g[1]) {
			return m
		}
		changed = true
		return fmt.Sprintf("IF(%s <=> %s, 1, 0) = 1", g[1], g[2])
	})
	return out, changed
}

// setOperationKeywords split the sides of a set operation.
var setOperationKeywords = []string{" UNION ALL ", " UNION DISTINCT ", " UNION ", " EXCEPT ALL ", " EXCEPT ", " INTERSECT ALL ", " INTERSECT "}

// setOperationColumnsAsText returns stmt, a set operation of SELECTs
// (no parentheses around its sides), with each side's select items
// written CONCAT(x), and whether it was one.
func setOperationColumnsAsText(stmt string) (string, bool) {
	var sides, ops []string
	depth, start := 0, 0
	for i := 0; i < len(stmt); i++ {
		switch stmt[i] {
		case '(':
			depth++
			continue
		case ')':
			depth--
			continue
		case '\'':
			// Skip the literal ('' inside is two quotes).
			for i++; i < len(stmt) && stmt[i] != '\''; i++ {
				if stmt[i] == '\\' {
					i++
				}
			}
			continue
		}
		if depth != 0 || stmt[i] != ' ' {
			continue
		}
		for _, kw := range setOperationKeywords {
			if strings.HasPrefix(stmt[i:], kw) {
				sides, ops = append(sides, stmt[start:i]), append(ops, kw)
				start = i + len(kw)
				i = start - 1
				break
			}
		}
	}
	if len(ops) == 0 {
		return stmt, false
	}
	sides = append(sides, stmt[start:])
	var out strings.Builder
	for i, side := range sides {
		text, ok := selectItemsAsText(side)
		if !ok {
			return stmt, false
		}
		out.WriteString(text)
		if i < len(ops) {
			out.WriteString(ops[i])
		}
	}
	return out.String(), true
}

// selectItemsAsText returns side, one SELECT, with its select items
// written CONCAT(x) (an alias kept after it), and false when side is no
// plain SELECT.
func selectItemsAsText(side string) (string, bool) {
	prefix := "SELECT "
	if strings.HasPrefix(side, "SELECT DISTINCT ") {
		prefix = "SELECT DISTINCT "
	} else if !strings.HasPrefix(side, prefix) {
		return side, false
	}
	rest := side[len(prefix):]
	end := topLevelIndex(rest, " FROM ")
	if end < 0 {
		end = len(rest)
		for _, kw := range []string{" ORDER BY ", " LIMIT "} {
			if j := topLevelIndex(rest, kw); j >= 0 && j < end {
				end = j
			}
		}
	}
	items, _, ok := splitCallArgs("("+rest[:end]+")", 1)
	if !ok {
		return side, false
	}
	for i, item := range items {
		item = strings.TrimSpace(item)
		alias := ""
		if j := topLevelIndex(item, " AS "); j >= 0 {
			item, alias = item[:j], item[j:]
		}
		if item == "*" || strings.HasSuffix(item, ".*") {
			return side, false
		}
		items[i] = "CONCAT(" + item + ")" + alias
	}
	return prefix + strings.Join(items, ", ") + rest[end:], true
}

// topLevelIndex is the index of sep in s outside parentheses and
// quotes, or -1.
func topLevelIndex(s, sep string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case '\'':
			for i++; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		default:
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				return i
			}
		}
	}
	return -1
}
