package ddljob

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Jobs keeps the online schema change jobs of this node (package sql's
// ddl.go) for ADMIN SHOW DDL JOBS and ADMIN CANCEL DDL JOBS: the running
// ones and the last finished ones. Its zero value is ready; it is owned
// by the provider and safe for concurrent use.
type Jobs struct {
	// TestingAfterBatch, set by tests only before any job runs, is called
	// after each backfill batch.
	TestingAfterBatch func()

	mu     sync.Mutex
	nextID int64
	jobs   []*Job // oldest first
}

// keptFinishedJobs is how many finished jobs ADMIN SHOW DDL JOBS lists.
const keptFinishedJobs = 20

// Job is one online schema change.
type Job struct {
	id             int64
	db, table, typ string
	start          time.Time
	// Rows counts the rows backfilled so far.
	Rows atomic.Int64
	// cancel stops the job; cancelled says ADMIN CANCEL DDL JOBS did.
	cancel    context.CancelFunc
	cancelled atomic.Bool

	mu     sync.Mutex
	state  string // the schema state reached: delete only, write only, ...
	status string // running, done, cancelled, failed
	end    time.Time
	err    error
}

// Start registers a job of type typ (what it does: "add index i") on
// table db.table and returns it with the context it must run in, which
// ADMIN CANCEL DDL JOBS cancels.
func (j *Jobs) Start(ctx context.Context, db, table, typ string) (*Job, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.nextID++
	job := &Job{id: j.nextID, db: db, table: table, typ: typ, start: time.Now(), cancel: cancel, state: "none", status: "running"}
	j.jobs = append(j.jobs, job)
	finished := 0
	for i := len(j.jobs) - 1; i >= 0; i-- {
		if j.jobs[i].done() {
			finished++
			if finished > keptFinishedJobs {
				j.jobs = append(j.jobs[:i], j.jobs[i+1:]...)
			}
		}
	}
	return job, ctx
}

// Type returns what the job does, as Start was told.
func (job *Job) Type() string { return job.typ }

// SetState records the schema state the job reached ("delete only",
// "write reorganization", ...).
func (job *Job) SetState(state string) {
	job.mu.Lock()
	job.state = state
	job.mu.Unlock()
}

// Finish records the job's outcome; err nil is success, cancelled says
// the job stopped because its context ended.
func (job *Job) Finish(err error, cancelled bool) {
	job.mu.Lock()
	job.end, job.err = time.Now(), err
	switch {
	case err == nil:
		job.status, job.state = "synced", "public"
	case cancelled:
		job.status = "cancelled"
	default:
		job.status = "failed"
	}
	job.mu.Unlock()
	job.cancel()
}

// Cancelled reports whether ADMIN CANCEL DDL JOBS cancelled the job.
func (job *Job) Cancelled() bool { return job.cancelled.Load() }

// done reports whether the job finished.
func (job *Job) done() bool {
	job.mu.Lock()
	defer job.mu.Unlock()
	return job.status != "running"
}

// Cancel cancels the running jobs with the given IDs and answers as
// TiDB's ADMIN CANCEL DDL JOBS: one row per ID.
func (j *Jobs) Cancel(ids []int64) *sqltypes.Result {
	res := &sqltypes.Result{Fields: []*querypb.Field{
		{Name: "JOB_ID", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "RESULT", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
	}}
	for _, id := range ids {
		msg := fmt.Sprintf("DDL Job:%d not found", id)
		j.mu.Lock()
		for _, job := range j.jobs {
			if job.id != id {
				continue
			}
			if job.done() {
				msg = fmt.Sprintf("This job:%d is finished, so can't be cancelled", id)
			} else {
				job.cancelled.Store(true)
				job.cancel()
				msg = "successful"
			}
		}
		j.mu.Unlock()
		res.Rows = append(res.Rows, []sqltypes.Value{sqltypes.NewVarChar(strconv.FormatInt(id, 10)), sqltypes.NewVarChar(msg)})
	}
	return res
}

// Show answers ADMIN SHOW DDL JOBS: the jobs, newest first, in TiDB's
// columns (those that apply).
func (j *Jobs) Show() *sqltypes.Result {
	cols := []string{"JOB_ID", "DB_NAME", "TABLE_NAME", "JOB_TYPE", "SCHEMA_STATE", "ROW_COUNT", "START_TIME", "END_TIME", "STATE", "COMMENTS"}
	res := &sqltypes.Result{}
	for _, c := range cols {
		res.Fields = append(res.Fields, &querypb.Field{Name: c, Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8})
	}
	j.mu.Lock()
	jobs := append([]*Job(nil), j.jobs...)
	j.mu.Unlock()
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].id > jobs[b].id })
	for _, job := range jobs {
		job.mu.Lock()
		end, comment := sqltypes.NULL, ""
		if !job.end.IsZero() {
			end = sqltypes.NewVarChar(job.end.Format("2006-01-02 15:04:05"))
		}
		if job.err != nil {
			comment = job.err.Error()
		}
		res.Rows = append(res.Rows, []sqltypes.Value{
			sqltypes.NewVarChar(strconv.FormatInt(job.id, 10)),
			sqltypes.NewVarChar(job.db),
			sqltypes.NewVarChar(job.table),
			sqltypes.NewVarChar(job.typ),
			sqltypes.NewVarChar(job.state),
			sqltypes.NewVarChar(strconv.FormatInt(job.Rows.Load(), 10)),
			sqltypes.NewVarChar(job.start.Format("2006-01-02 15:04:05")),
			end,
			sqltypes.NewVarChar(job.status),
			sqltypes.NewVarChar(comment),
		})
		job.mu.Unlock()
	}
	return res
}
