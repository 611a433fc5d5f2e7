package sql

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/percdb/percdb/sql/fastpath"
)

// This file is the text protocol's cache of shapes (TiDB's non-prepared
// plan cache is the model): a COM_QUERY is cut into a template and its
// literals (fastpath.ScanLiterals), and a template seen before runs with
// the shape its first statement's template was parsed into, its
// parameters bound to the literals, as a prepared statement's are to its
// arguments. The statement is not parsed, and its digest is the
// template's. A template whose text has no shape, or a shape whose
// parameters are not its literals one for one, is remembered as such,
// and its statements are parsed as before (fastQuery). The session
// variable percdb_text_plan_cache turns the cache off.

// Bounds of the cache of templates: how many it holds, and the longest
// statement it takes (a bulk INSERT of thousands of rows gains little
// from a parse saved, and would make the cache hold megabytes).
const (
	defaultTextTemplates = 4096
	maxTemplateText      = 4096
)

// varTextPlanCache is the session variable that turns the text
// protocol's cache of shapes on or off (default on).
const varTextPlanCache = "percdb_text_plan_cache"

// textTemplate is the cached decision for one template.
type textTemplate struct {
	// normalized and digest are the statements' TiDB digest, which the
	// template decides (fastpath.ScanLiterals).
	normalized string
	digest     *parser.Digest
	// key is the digest's key in the fast path's plan cache.
	key fastpath.Key
	// shape is the template's shape, its parameters the literals in
	// order; nil when the template's statements are parsed as before.
	shape *fastpath.Shape
	// uncacheable counts the template's statements in a row whose GMS
	// plans the text plan cache could not keep (textplancache.go).
	uncacheable atomic.Uint32
}

// textTemplates is the server's bounded cache of templates, keyed by the
// template's text and, after a NUL byte, the current database; least
// recently used first out.
type textTemplates struct {
	mu  sync.Mutex
	max int
	m   map[string]*list.Element
	lru list.List // of *textTemplateElem, most recent first
}

// textTemplateElem is one entry of textTemplates.
type textTemplateElem struct {
	key string
	t   *textTemplate
}

func newTextTemplates(max int) *textTemplates {
	return &textTemplates{max: max, m: make(map[string]*list.Element)}
}

// get returns the template of key, or nil. The lookup does not copy key.
func (c *textTemplates) get(key []byte) *textTemplate {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[string(key)]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*textTemplateElem).t
}

// put stores t under key, evicting the least recently used template when
// full.
func (c *textTemplates) put(key string, t *textTemplate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		el.Value.(*textTemplateElem).t = t
		c.lru.MoveToFront(el)
		return
	}
	c.m[key] = c.lru.PushFront(&textTemplateElem{key: key, t: t})
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.m, last.Value.(*textTemplateElem).key)
	}
}

// templateOf returns the template of a COM_QUERY from the cache of
// templates, made and kept at its first statement, with the statement's
// literals in s's literal buffer; nil when the statement is to be parsed
// as before (its text is not read by the scanner). A template without a
// shape still gives the statement's digest (fastQuery).
func (fp *fastPath) templateOf(s *Session, query string) *textTemplate {
	if len(query) > maxTemplateText {
		return nil
	}
	lits := &s.fast.literals
	if !fastpath.ScanLiterals(query, lits) {
		return nil
	}
	textLen := len(lits.Template)
	db := s.GetCurrentDatabase()
	lits.Template = append(append(lits.Template, 0), db...)
	t := fp.templates.get(lits.Template)
	if t == nil {
		t = fp.newTemplate(query, string(lits.Template[:textLen]), db, len(lits.Values))
		fp.templates.put(string(lits.Template), t)
	}
	return t
}

// bindTemplate returns the entry a statement of t, a template with a
// shape, runs with and its literals (templateOf left them in s's
// buffer) bound as the shape's arguments.
func (fp *fastPath) bindTemplate(s *Session, t *textTemplate) (e *fastEntry, args []any) {
	fs := &s.fast
	if e = fp.plans.Get(t.key); e == nil {
		e = fp.plans.Put(&fastEntry{Key: t.key, Shape: t.shape, Reason: fastpath.ReasonShape})
	}
	args = fs.args[:0]
	for _, v := range fs.literals.Values {
		if v.OK {
			args = append(args, v.Lit)
		} else {
			args = append(args, errValue)
		}
	}
	fs.args = args
	fp.textHits.Add(1)
	return e, args
}

// newTemplate parses a template's text, that of query, whose literals
// (n of them) it replaced by parameters, into a template for database
// db.
func (fp *fastPath) newTemplate(query, text, db string, n int) *textTemplate {
	normalized, digest := parser.NormalizeDigest(query)
	t := &textTemplate{
		normalized: normalized, digest: digest,
		key: fastpath.Key{Digest: string(digest.Bytes()), DB: db},
	}
	stmt, err := fp.parse(text)
	if err != nil {
		return t
	}
	shape := fastpath.ShapeOf(stmt, normalized)
	if shape == nil || shape.Params != n {
		return t
	}
	fastpath.AddAlt(shape, stmt)
	t.shape = shape
	return t
}
