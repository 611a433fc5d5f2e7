package lexical

// Kind is the kind of a statement by its first word: the type label of
// the node's queries and duration metrics, and the kinds of statement the
// plan cache runs.
type Kind uint8

// The kinds of statement, KindOther for every first word not listed.
const (
	KindOther Kind = iota
	KindSelect
	KindInsert
	KindUpdate
	KindDelete
	KindReplace
	KindBegin
	KindCommit
	KindRollback
	KindSet
	KindShow
	KindUse
	KindDDL
	// NumKinds is the number of kinds, for arrays indexed by Kind.
	NumKinds
)

// kindNames are the values of the type label.
var kindNames = [NumKinds]string{
	KindOther: "other", KindSelect: "select", KindInsert: "insert", KindUpdate: "update",
	KindDelete: "delete", KindReplace: "replace", KindBegin: "begin", KindCommit: "commit",
	KindRollback: "rollback", KindSet: "set", KindShow: "show", KindUse: "use", KindDDL: "ddl",
}

// String returns the kind's name, the metrics' type label.
func (k Kind) String() string { return kindNames[k] }

// Classify returns the kind of query by its first word, after blanks,
// opening parentheses and comments. Every statement is classified as it
// ends, so it compares the text only with the words of its first
// letter, and does not look for the word's end first.
func Classify(query string) Kind {
	q := TrimLeading(query, " \t\r\n(")
	if q == "" {
		return KindOther
	}
	// is reports whether q's first word is word, a lower-case one.
	is := func(word string) bool {
		return len(q) >= len(word) && equalFoldASCII(q[:len(word)], word) &&
			(len(q) == len(word) || !IsWordByte(q[len(word)]))
	}
	switch q[0] | 0x20 {
	case 's':
		switch {
		case is("select"):
			return KindSelect
		case is("set"):
			return KindSet
		case is("show"):
			return KindShow
		case is("start"):
			return KindBegin
		}
	case 'i':
		if is("insert") {
			return KindInsert
		}
	case 'u':
		switch {
		case is("update"):
			return KindUpdate
		case is("use"):
			return KindUse
		}
	case 'd':
		switch {
		case is("delete"):
			return KindDelete
		case is("drop"):
			return KindDDL
		}
	case 'r':
		switch {
		case is("replace"):
			return KindReplace
		case is("rollback"):
			return KindRollback
		case is("rename"):
			return KindDDL
		}
	case 'b':
		if is("begin") {
			return KindBegin
		}
	case 'c':
		switch {
		case is("commit"):
			return KindCommit
		case is("create"):
			return KindDDL
		}
	case 'w':
		if is("with") {
			return KindSelect
		}
	case 'a':
		if is("alter") {
			return KindDDL
		}
	case 't':
		if is("truncate") {
			return KindDDL
		}
	}
	return KindOther
}

// equalFoldASCII is strings.EqualFold for ASCII words of equal length, b
// in lower case.
func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != b[i] {
			return false
		}
	}
	return true
}
