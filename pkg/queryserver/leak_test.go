package queryserver

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when they leave goroutines behind: a
// query's handler and the client's connections must end with the server.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
