package ddljob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/sqltypes"
)

// TestJobsShowAndCancel checks a job's life as the two ADMIN statements
// see it: cancelled through its context, finished jobs kept up to
// keptFinishedJobs, newest first.
func TestJobsShowAndCancel(t *testing.T) {
	var j Jobs
	job, ctx := j.Start(context.Background(), "d", "t", "add index i")
	job.SetState("write reorganization")
	job.Rows.Add(7)
	if got := rowsText(j.Cancel([]int64{1, 99})); got != "1 successful|99 DDL Job:99 not found" {
		t.Errorf("ADMIN CANCEL DDL JOBS 1, 99: %s", got)
	}
	if ctx.Err() == nil || !job.Cancelled() {
		t.Fatal("a cancelled job's context is not done, or the job does not say it was cancelled")
	}
	job.Finish(ctx.Err(), true)
	if got := rowsText(j.Cancel([]int64{1})); got != "1 This job:1 is finished, so can't be cancelled" {
		t.Errorf("ADMIN CANCEL DDL JOBS of a finished job: %s", got)
	}
	for i := range keptFinishedJobs + 5 {
		job, _ := j.Start(context.Background(), "d", "t", "add index")
		var err error
		if i%2 == 1 {
			err = errors.New("boom")
		}
		job.Finish(err, false)
	}
	running, _ := j.Start(context.Background(), "d", "u", "add index r")
	rows := j.Show().Rows
	if len(rows) != keptFinishedJobs+1 {
		t.Fatalf("%d jobs shown, want the running one and %d finished", len(rows), keptFinishedJobs)
	}
	if got := rows[0][0].ToString() + " " + rows[0][8].ToString(); got != fmt.Sprint(running.id)+" running" {
		t.Errorf("first row %q, want the newest job, running", got)
	}
	last := rows[len(rows)-1]
	if got := last[0].ToString(); got == "1" {
		t.Error("the oldest finished job was kept past the bound")
	}
	for _, r := range rows[1:] {
		if st, c := r[8].ToString(), r[9].ToString(); st == "failed" && c != "boom" || st == "synced" && c != "" {
			t.Errorf("job %s: state %s comment %q", r[0].ToString(), st, c)
		}
	}
}

// rowsText is a result's rows, values separated by a space, rows by |.
func rowsText(res *sqltypes.Result) string {
	var rows []string
	for _, r := range res.Rows {
		vals := make([]string, len(r))
		for i, v := range r {
			vals[i] = v.ToString()
		}
		rows = append(rows, strings.Join(vals, " "))
	}
	return strings.Join(rows, "|")
}
