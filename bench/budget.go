package bench

import (
	"fmt"
	"time"
)

// Plan is the time arithmetic of a budgeted measurement.
type Plan struct {
	// Left is the time remaining when the runs are about to start.
	Left time.Duration
	// Runs is the number of sysbench runs still to do.
	Runs int
	// PerRunOverhead is the time a run costs beyond its --time: starting
	// sysbench, opening connections and preparing statements, reading the
	// report.
	PerRunOverhead time.Duration
	// Fixed is the time spent outside the runs, such as re-creating the
	// tables between rounds.
	Fixed time.Duration
}

// RunTime returns the longest whole-second run duration that fits the plan,
// and whether it fits: sysbench's shortest run is one second, so a budget
// too small for that returns one second and false.
func (p Plan) RunTime() (time.Duration, bool) {
	if p.Runs <= 0 {
		return time.Second, true
	}
	each := (p.Left-p.Fixed)/time.Duration(p.Runs) - p.PerRunOverhead
	if each < time.Second {
		return time.Second, false
	}
	return each.Truncate(time.Second), true
}

// Estimate returns how long the runs of the plan take at the given duration.
func (p Plan) Estimate(runTime time.Duration) time.Duration {
	return p.Fixed + time.Duration(p.Runs)*(runTime+p.PerRunOverhead)
}

// String says what the plan amounts to, for the log.
func (p Plan) String() string {
	rt, fits := p.RunTime()
	s := fmt.Sprintf("%d runs of %v in %v (%v fixed, %v overhead per run)",
		p.Runs, rt, p.Left.Round(time.Second), p.Fixed.Round(time.Second), p.PerRunOverhead)
	if !fits {
		s += fmt.Sprintf(": does not fit, expect about %v", p.Estimate(rt).Round(time.Second))
	}
	return s
}
