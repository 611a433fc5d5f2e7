package loaddata

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLoadReader(t *testing.T) {
	tsv := loadFormat{fieldTerm: []byte("\t"), lineTerm: []byte("\n"), escape: '\\', hasEscape: true}
	csv := loadFormat{fieldTerm: []byte(","), lineTerm: []byte("\r\n"), enclose: '"', hasEnclose: true, escape: '\\', hasEscape: true}
	noEscape := loadFormat{fieldTerm: []byte(","), lineTerm: []byte("\n")}
	prefixed := loadFormat{fieldTerm: []byte("|"), lineTerm: []byte("\n"), lineStart: []byte("xxx"), escape: '\\', hasEscape: true}
	for _, c := range []struct {
		name string
		f    loadFormat
		in   string
		want string
	}{
		{"tsv", tsv, "1\ta\n2\tb\n", "[1 a] [2 b]"},
		{"tsv no final newline", tsv, "1\ta\n2\tb", "[1 a] [2 b]"},
		{"escapes", tsv, "t\\tx\tn\\nx\t\\\\\t\\N\t\\Nx\t\\0\n", "[t<9>x n<10>x \\ <null> Nx <0>]"},
		{"escaped terminators", tsv, "a\\\tb\tc\\\nd\n", "[a<9>b c<10>d]"},
		{"empty fields", tsv, "\t\t\n", "[  ]"},
		{"word NULL without enclosure is a string", tsv, "NULL\n", "[NULL]"},
		{"csv", csv, "1,\"a, b\",\"c \"\"d\"\"\",\"e\r\nf\"\r\n", "[1 a, b c \"d\" e<13><10>f]"},
		{"csv optional quotes", csv, "1,plain,\"\"\r\n2,,x\r\n", "[1 plain ] [2  x]"},
		{"csv NULL word", csv, "NULL,\"NULL\",\\N\r\n", "[<null> NULL <null>]"},
		{"csv quote inside an unquoted field", csv, "a\"b,c\r\n", "[a\"b c]"},
		{"csv quote not followed by a terminator", csv, "\"a\"b\",c\r\n", "[a\"b c]"},
		{"csv escaped quote", csv, "\"a\\\"b\",c\r\n", "[a\"b c]"},
		{"no escape: backslash is a character", noEscape, "a\\tb,NULL\n", "[a\\tb <null>]"},
		{"lines starting by", prefixed, "xxx1|a\nskip\nfooxxx2|b\n", "[1 a] [2 b]"},
		{"lines starting by, none", prefixed, "nothing\nhere\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newLoadReader(strings.NewReader(c.in), c.f)
			var lines []string
			for {
				fields, err := r.line()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				var vals []string
				for _, f := range fields {
					if f.null {
						vals = append(vals, "<null>")
						continue
					}
					vals = append(vals, visible(f.val))
				}
				lines = append(lines, "["+strings.Join(vals, " ")+"]")
			}
			if got := strings.Join(lines, " "); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// visible writes control characters of s as <n>.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 32 {
			b.WriteString("<" + string(rune('0'+r/10)) + string(rune('0'+r%10)) + ">")
			continue
		}
		b.WriteRune(r)
	}
	return strings.NewReplacer("<00>", "<0>", "<09>", "<9>").Replace(b.String())
}
