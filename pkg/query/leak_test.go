package query

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when they leave goroutines behind:
// informers, watch loops and the emitter must all end with their context.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
