package app

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps a developer's own config file out of the tests.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubectl-informer-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Setenv("XDG_CONFIG_HOME", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
