package query

import (
	"errors"
	"fmt"
	"strings"
)

// UsageError is a mistake in the request itself: an invalid expression, an
// unknown index or output format, inconsistent flags, or a resource type the
// server does not have.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

func (e *UsageError) Unwrap() error { return e.Err }

// IsUsageError reports whether err is, or wraps, a *UsageError.
func IsUsageError(err error) bool {
	var usage *UsageError
	return errors.As(err, &usage)
}

// UnknownIndex says that no index is called name, lists the known ones and
// names how to define one, as names call it (--index, :index).
func UnknownIndex(name string, known []string, names Names) error {
	return fmt.Errorf("unknown index %q: known indexes are %s (define one with %s %s=CEL)", name, strings.Join(known, ", "), names.Of(PartIndex), name)
}
