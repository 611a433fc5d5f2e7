package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/compat"
)

// Package compat's names under the unexported ones they had in this
// package, for the files other branches are changing while the
// workarounds move (copr.go, plancache.go, decorrelate.go): those files
// keep their text, so that the branches merge. Once they have, their call
// sites take compat's names and this file goes.

// intKind is compat.IntKind: how an operand of integer arithmetic is
// typed.
type intKind = compat.IntKind

// The kinds of integer operands.
const (
	notInt   = compat.NotInt
	signed   = compat.SignedInt
	unsigned = compat.UnsignedInt
)

// intMod is compat.IntMod, MySQL's integer %.
type intMod = compat.IntMod

// decimalAgg is compat.DecimalAgg, MySQL's exact SUM and AVG.
type decimalAgg = compat.DecimalAgg

// collatedDistinct is compat.CollatedDistinct, a DISTINCT under
// collations.
type collatedDistinct = compat.CollatedDistinct

// refersTo is compat.RefersTo.
func refersTo(e gsql.Expression, cols gsql.ColSet) bool { return compat.RefersTo(e, cols) }
