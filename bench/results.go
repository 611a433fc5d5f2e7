package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ResultsFile is the name of the file a benchmark command writes its
// measurements to, for -replot.
const ResultsFile = "results.json"

// ResultsDir returns dir, created if missing, or, when dir is empty, a new
// temporary directory named after prefix, which is kept for the user.
func ResultsDir(dir, prefix string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", prefix)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// WriteResults writes v as indented JSON to ResultsFile in dir.
func WriteResults(dir string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), b, 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}
