// Package lexical holds the byte-level tests package sql and its
// subpackages make of a statement's text before, or instead of, parsing
// it: which bytes make a word and which separate tokens, a statement's
// text past its leading white space and comments, and whether it starts
// with a given word, the next word or quoted name (NextToken), a
// case-insensitive search for a keyword (IndexFold), and a statement's
// kind by its first word (Kind, Classify: the type label of the node's
// statement metrics). They
// allocate nothing, since every statement passes through some of them
// (the protocol handler's routing, the fast path's pre-filter, the
// statement metrics).
//
// Its contract: ASCII only, as MySQL's keywords are; a caller that must
// also take names of other characters (MySQL's unquoted names allow $
// and any byte of a multi-byte UTF-8 character) adds them itself.
package lexical
