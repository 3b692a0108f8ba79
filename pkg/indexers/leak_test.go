package indexers_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when they leave goroutines behind:
// an evaluation stopped by its context or its cost limit must not leave
// one running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
