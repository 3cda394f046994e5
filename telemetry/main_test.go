package telemetry_test

import (
	"os"
	"testing"
)

var tempDirs []string

// mkdirTemp makes a directory shared by the tests of this binary (the
// imported sample, Jaeger's config), removed by TestMain.
func mkdirTemp() (string, error) {
	d, err := os.MkdirTemp("", "opx-telemetry-")
	if err == nil {
		tempDirs = append(tempDirs, d)
	}
	return d, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopJaeger()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
