package sql

import "strings"

// versionCommentBody returns the text inside query when query is one
// version comment (/*!NNNNN text */, with spaces and a semicolon around
// it), which MySQL runs as text; query otherwise.
func versionCommentBody(query string) string {
	q := strings.Trim(query, "; \t\r\n")
	if !strings.HasPrefix(q, "/*!") || !strings.HasSuffix(q, "*/") || len(q) < 5 {
		return query
	}
	body := q[3 : len(q)-2]
	body = strings.TrimLeft(body, "0123456789")
	if strings.Contains(body, "/*") || strings.Contains(body, "*/") {
		return query
	}
	return body
}
