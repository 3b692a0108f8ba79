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
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
