package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Machine describes where a measurement ran.
type Machine struct {
	// CPUs is the number of CPUs this process may run on (nproc).
	CPUs int
	// CPUModel is the first "model name" of /proc/cpuinfo.
	CPUModel string
	// MemTotal is MemTotal of /proc/meminfo, in bytes.
	MemTotal int64
	// Kernel is the kernel release.
	Kernel string
	// LoadAvg is the first three fields of /proc/loadavg when it was read,
	// so a reader can see how busy the machine was.
	LoadAvg string
}

// ReadMachine describes this machine. Fields it cannot read stay empty:
// a description with a gap is better than no measurement.
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = procField(b, "model name")
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemTotal, _ = parseKB(procField(b, "MemTotal"))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvg = LoadAvg()
	return m
}

// LoadAvg returns the 1, 5 and 15 minute load averages, "" if unknown.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// String is a one-line description.
func (m Machine) String() string {
	s := fmt.Sprintf("%d CPUs (%s), %.1f GiB memory, Linux %s",
		m.CPUs, orUnknown(m.CPUModel), float64(m.MemTotal)/(1<<30), orUnknown(m.Kernel))
	if m.LoadAvg != "" {
		s += ", load average " + m.LoadAvg + " at start"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// procField returns the value of the first "key: value" line of a /proc
// file whose key is key.
func procField(b []byte, key string) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// CommandVersion runs `name args...` and returns the first line of its
// output, or "" if it fails.
func CommandVersion(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
