package compat

// A version comment inside another, /*!80001 CREATE ROLE 'r'/*!80001
// @'%'*/ */, which mariadb-dump --system=users writes for every role of a
// MySQL 8 server, is a syntax error to vitess; MySQL 8 runs both (with a
// deprecation warning). unnestVersionComments drops the inner comment's
// opening and closing marks, so that its text is statement text inside
// the outer comment, as MySQL reads it ('r'@'%': no space may come
// between the name and its host).

// unnestVersionComments returns query with the marks of version comments
// nested in version comments dropped, the offset into query of each byte
// of it (and of its end), and whether it changed anything.
func unnestVersionComments(query string) (string, []int, bool) {
	var b []byte // a copy of query, made at the first change; dropped bytes are 0
	inVersion := false
	innerOpen := false
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			// Skip the quoted text (a doubled quote or a backslash
			// escape stays inside).
			for i++; i < len(query) && query[i] != c; i++ {
				if query[i] == '\\' && c != '`' {
					i++
				}
			}
		case c == '/' && i+2 < len(query) && query[i+1] == '*' && query[i+2] == '!':
			if !inVersion {
				inVersion = true
				i += 2
				continue
			}
			if b == nil {
				b = []byte(query)
			}
			j := i + 3
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j < len(query) && query[j] == ' ' {
				j++ // the space after the version, which parts a name from its host
			}
			for k := i; k < j; k++ {
				b[k] = 0
			}
			innerOpen = true
			i = j - 1
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			// An ordinary comment (MariaDB's /*M! among them), skipped
			// whole. One with a comment nested in it (/*M!100005 CREATE
			// ROLE 'r'/*!80001 @'%'*/ ... */) ends at the matching
			// close, not the first: it becomes one space.
			end, nested := commentEnd(query, i)
			if end < 0 {
				return dropMarks(b, query)
			}
			if nested {
				if b == nil {
					b = []byte(query)
				}
				b[i] = ' '
				for k := i + 1; k < end; k++ {
					b[k] = 0
				}
			}
			i = end - 1
		case c == '*' && i+1 < len(query) && query[i+1] == '/' && inVersion:
			if innerOpen {
				b[i], b[i+1] = 0, 0
				innerOpen = false
			} else {
				inVersion = false
			}
			i++
		case c == '-' && i+2 < len(query) && query[i+1] == '-' && (query[i+2] == ' ' || query[i+2] == '\t'),
			c == '#':
			for i < len(query) && query[i] != '\n' {
				i++
			}
		}
	}
	return dropMarks(b, query)
}

// dropMarks returns b without its 0 bytes (the marks dropped), the
// offset into query of each byte left and of the end, and whether b
// differs from query. A nil b is query unchanged.
func dropMarks(b []byte, query string) (string, []int, bool) {
	if b == nil {
		return query, nil, false
	}
	out := make([]byte, 0, len(b))
	orig := make([]int, 0, len(b)+1)
	for i, c := range b {
		if c != 0 || query[i] == 0 {
			out = append(out, c)
			orig = append(orig, i)
		}
	}
	return string(out), append(orig, len(query)), true
}

// commentEnd returns the offset after the comment that opens at start,
// counting comments opened inside it, and whether any was; -1 when it is
// not closed.
func commentEnd(query string, start int) (int, bool) {
	depth, nested := 0, false
	for i := start; i+1 < len(query); i++ {
		switch {
		case query[i] == '/' && query[i+1] == '*':
			depth++
			nested = nested || depth > 1
			i++
		case query[i] == '*' && query[i+1] == '/':
			depth--
			i++
			if depth == 0 {
				return i + 1, nested
			}
		}
	}
	return -1, nested
}
