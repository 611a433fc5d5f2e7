package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is the resident memory of one server process, in bytes, at the
// points where the harness looked.
type Memory struct {
	// Idle is VmRSS once the server answered its first query.
	Idle int64
	// Loaded is VmRSS after the first "prepare" filled the tables.
	Loaded int64
	// Peak is the largest VmHWM seen (the kernel's high-water mark of
	// VmRSS over the process's life), read after every run and at the end.
	Peak int64
	// Final is VmRSS after the last run, just before the server is stopped.
	Final int64
}

// ProcStatus is the part of /proc/PID/status the harness reads.
type ProcStatus struct {
	// RSS is VmRSS (resident now) and HWM is VmHWM (peak resident), bytes.
	RSS, HWM int64
}

// ReadProcStatus reads /proc/<pid>/status.
func ReadProcStatus(pid int) (ProcStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcStatus{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	st, err := ParseProcStatus(b)
	if err != nil {
		return st, fmt.Errorf("memory of pid %d: %w", pid, err)
	}
	return st, nil
}

// ParseProcStatus extracts VmRSS and VmHWM from the text of a
// /proc/PID/status file; both must be present, in kB as the kernel writes.
func ParseProcStatus(status []byte) (ProcStatus, error) {
	var st ProcStatus
	for _, f := range []struct {
		key string
		dst *int64
	}{{"VmRSS", &st.RSS}, {"VmHWM", &st.HWM}} {
		v := procField(status, f.key)
		if v == "" {
			return st, fmt.Errorf("no %s (a zombie or a kernel thread?)", f.key)
		}
		n, err := parseKB(v)
		if err != nil {
			return st, fmt.Errorf("%s: %w", f.key, err)
		}
		*f.dst = n
	}
	return st, nil
}

// parseKB parses a /proc size such as "123456 kB" into bytes.
func parseKB(v string) (int64, error) {
	fields := strings.Fields(v)
	if len(fields) != 2 || fields[1] != "kB" {
		return 0, fmt.Errorf(`want "<n> kB", have %q`, v)
	}
	kb, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, err
	}
	return kb * 1024, nil
}
