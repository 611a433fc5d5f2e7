package tablecodec

import "fmt"

// SpanReader is RowColumnSpans for one list of column IDs, prepared once
// for the many rows of a scan: the position of each column ID in the
// list is a table lookup rather than a search, and a list without a
// repeated ID sets each span once.
type SpanReader struct {
	colIDs []int64
	// index[id] is 1 + the position of ID id in colIDs (0: not asked
	// for), for the IDs below len(index); larger IDs are searched for.
	index []int32
	// repeats says an ID is asked for twice: rowColumnSpans then.
	repeats bool
}

// spanIndexMax bounds the IDs a SpanReader's table covers.
const spanIndexMax = 1024

// NewSpanReader returns a reader of the spans of colIDs.
func NewSpanReader(colIDs []int64) *SpanReader {
	r := &SpanReader{colIDs: colIDs}
	top := int64(-1)
	for i, id := range colIDs {
		for _, prev := range colIDs[:i] {
			r.repeats = r.repeats || prev == id
		}
		if id < spanIndexMax {
			top = max(top, id)
		}
	}
	r.index = make([]int32, top+1)
	for i, id := range colIDs {
		if id >= 0 && id < spanIndexMax && r.index[id] == 0 {
			r.index[id] = int32(i + 1)
		}
	}
	return r
}

// Spans is RowColumnSpans(b, colIDs, spans).
func (r *SpanReader) Spans(b []byte, spans [][]byte) error {
	if len(spans) != len(r.colIDs) {
		return fmt.Errorf("row columns: %d column IDs, %d spans", len(r.colIDs), len(spans))
	}
	if r.repeats {
		return rowColumnSpans(b, r.colIDs, spans)
	}
	clear(spans)
	if len(b) == 0 || b[0] != RowFormatV1 {
		return fmt.Errorf("row columns: not a row value: %w", ErrCorrupt)
	}
	d := rowDecoder{b: b, pos: 1}
	// As rowColumnSpans: the walk stops once every column is found.
	for found := 0; d.pos < len(b) && found < len(spans); {
		id, err := d.columnID()
		if err != nil {
			return fmt.Errorf("row columns: column ID: %w", err)
		}
		start := d.pos
		if err := d.skipValue(); err != nil {
			return fmt.Errorf("row columns: column %d: %w", id, err)
		}
		i := -1
		if id < uint64(len(r.index)) {
			i = int(r.index[id]) - 1
		} else if id >= spanIndexMax {
			i = columnIndex(r.colIDs, id, 0)
		}
		if i >= 0 && spans[i] == nil {
			spans[i] = b[start:d.pos]
			found++
		}
	}
	return nil
}
