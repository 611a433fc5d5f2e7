package crash

import (
	"fmt"
	"strings"
)

// LargeTxnInserts returns the INSERT statements of rows rows into table,
// whose columns are (id INT PRIMARY KEY, v VARCHAR(100)), 2,000 rows a
// statement, each v about 60 bytes as in issue 11's transaction: sent in
// one transaction they make the large transaction the crash and KILL
// tests leave behind.
func LargeTxnInserts(table string, rows int) []string {
	const batch = 2000
	var out []string
	for lo := 0; lo < rows; lo += batch {
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s VALUES ", table)
		for i := lo; i < min(rows, lo+batch); i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d, 'value %08d of a row, about sixty bytes long like the issue''s')", i, i)
		}
		out = append(out, b.String())
	}
	return out
}
