package difftest

import "regexp"

// deviation is a case where MariaDB 10.11's answer is not MySQL 8's, so
// a difference there is not percdb's fault. Each says why.
type deviation struct {
	name string
	why  string
	// match reports whether the statement (and the two outcomes) is
	// such a case.
	match func(stmt string, percdb, mariadb outcome) bool
}

var (
	// An INT-family column compared with a literal that has a fraction.
	intVsFraction = regexp.MustCompile(`\.(a|b|c9) (=|<>|<|<=|>|>=|<=>) -?[0-9]+\.[0-9]*[1-9]`)
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
}

// knownDeviation returns the deviation that explains a difference, if any.
func knownDeviation(stmt string, p, m outcome) *deviation {
	for i := range deviations {
		if deviations[i].match(stmt, p, m) {
			return &deviations[i]
		}
	}
	return nil
}
