package compat

import (
	"regexp"

	goerrors "gopkg.in/src-d/go-errors.v1"
)

// KindPattern matches the messages of GMS's error kind k: its printf
// format with each verb replaced by arg (a regular expression). GMS
// returns many of MySQL's errors as kinds of its own, with its own
// messages and code 1105; percdb recognises them by these patterns to
// give MySQL's code and message instead.
func KindPattern(k *goerrors.Kind, arg string) *regexp.Regexp {
	quoted := regexp.QuoteMeta(k.Message)
	verbs := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	return regexp.MustCompile("^" + verbs.ReplaceAllString(quoted, arg) + "$")
}
