package ctxtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/percdb/percdb/internal/ctxtime"
)

func TestSleep(t *testing.T) {
	if err := ctxtime.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An ended context cuts an hour short.
	if err := ctxtime.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if err := ctxtime.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("zero wait, ended context: err %v", err)
	}
}
