package bench

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Markers delimit the generated section of docs/benchmarks.md. Everything
// between them, both included, belongs to the harness and is replaced on
// every run; the rest of the file belongs to people.
const (
	SectionBegin = "<!-- BEGIN sysbench: written by `go run ./bench/cmd/percdb-bench`; edits up to END are overwritten -->"
	SectionEnd   = "<!-- END sysbench -->"
)

// ReplaceSection returns doc with the text between the begin and end
// markers (both kept) replaced by body. When doc has neither marker, the
// section is appended, after a blank line. A marker that is missing its
// partner, repeated, or out of order is an error: guessing would destroy
// text someone wrote.
func ReplaceSection(doc, begin, end, body string) (string, error) {
	if begin == "" || end == "" {
		return "", errors.New("replace section: empty marker")
	}
	nb, ne := strings.Count(doc, begin), strings.Count(doc, end)
	section := begin + "\n" + strings.Trim(body, "\n") + "\n" + end
	switch {
	case nb == 0 && ne == 0:
		if doc == "" {
			return section + "\n", nil
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + section + "\n", nil
	case nb != 1 || ne != 1:
		return "", fmt.Errorf("replace section: want one begin and one end marker, have %d and %d", nb, ne)
	}
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if j < i {
		return "", errors.New("replace section: end marker before begin marker")
	}
	return doc[:i] + section + doc[j+len(end):], nil
}

// UpdateFile replaces the sysbench section in the file at path (see
// ReplaceSection), creating the file with the given title heading when it
// does not exist.
func UpdateFile(path, title, body string) error {
	return UpdateFileSection(path, title, SectionBegin, SectionEnd, body)
}

// UpdateFileSection is UpdateFile for the section between the markers
// begin and end, for the benchmarks other than sysbench.
func UpdateFileSection(path, title, begin, end, body string) error {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		old = []byte("# " + title + "\n")
	case err != nil:
		return fmt.Errorf("update %s: %w", path, err)
	}
	doc, err := ReplaceSection(string(old), begin, end, body)
	if err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	return nil
}
