package queryserver

import (
	"fmt"
	"net/http"
	"strings"
)

// The bounds of what a request may ask before it is authorized: whatever
// the caller, the work and memory spent on a request before its
// authorization is decided are bounded by these.
const (
	// MaxNameLength bounds a resource type name, a namespace, a cluster
	// name: a Kubernetes name fits in 253 characters (a DNS subdomain).
	MaxNameLength = 253
	// MaxResourceNames bounds the resource type names of a query, over
	// all its resource arguments ("pods,nodes" names two).
	MaxResourceNames = 64
	// MaxColumns bounds the index columns and the label columns of a
	// query, each.
	MaxColumns = 32
	// MaxGroupByKeys bounds the keys of the aggregates of a query: an
	// object is added to every combination of its keys' values.
	MaxGroupByKeys = 8
	// MaxAggregates bounds the aggregates of a query, each computed for
	// every row.
	MaxAggregates = 32
	// maxResourceArg bounds one resource argument as written, commas and
	// blanks included.
	maxResourceArg = MaxResourceNames * (MaxNameLength + 1)
	// maxImpersonation bounds the values of the Impersonate-* headers of
	// a request, in number and each in length.
	maxImpersonation, maxImpersonationValue = 64, 1024
	// logFieldLength bounds a field of the request's log line that the
	// caller wrote (see shorten).
	logFieldLength = 256
)

// checkBounds refuses, with a message naming the bound, a query whose
// resource arguments, namespace or cluster names exceed the bounds above.
func checkBounds(q *Query) error {
	if len(q.Resources) > MaxResourceNames {
		return fmt.Errorf("the query names %d resource arguments: at most %d are served in one query", len(q.Resources), MaxResourceNames)
	}
	names := 0
	for _, arg := range q.Resources {
		if len(arg) > maxResourceArg {
			return fmt.Errorf("resource argument %q is %d bytes long: at most %d are served (%d types of at most %d characters)", shorten(arg, 64), len(arg), maxResourceArg, MaxResourceNames, MaxNameLength)
		}
		for name := range strings.SplitSeq(arg, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if len(name) > MaxNameLength {
				return fmt.Errorf("resource type %q is %d bytes long: a resource type name is at most %d characters", shorten(name, 64), len(name), MaxNameLength)
			}
			if names++; names > MaxResourceNames {
				return fmt.Errorf("the query names more than %d resource types: name fewer in one query", MaxResourceNames)
			}
		}
	}
	if n := len(q.Print.IndexColumns); n > MaxColumns {
		return fmt.Errorf("the query asks for %d index columns: at most %d are served in one query", n, MaxColumns)
	}
	if n := len(q.Print.LabelColumns); n > MaxColumns {
		return fmt.Errorf("the query asks for %d label columns: at most %d are served in one query", n, MaxColumns)
	}
	keys := len(q.GroupByKeys)
	if q.GroupBy != "" {
		keys++ // the first key
	}
	if keys > MaxGroupByKeys {
		return fmt.Errorf("the query groups by %d keys: at most %d are served in one query", keys, MaxGroupByKeys)
	}
	if n := len(q.Aggregates); n > MaxAggregates {
		return fmt.Errorf("the query asks for %d aggregates: at most %d are served in one query", n, MaxAggregates)
	}
	if len(q.Namespace) > MaxNameLength {
		return fmt.Errorf("namespace %q is %d bytes long: a namespace name is at most %d characters", shorten(q.Namespace, 64), len(q.Namespace), MaxNameLength)
	}
	if len(q.Clusters) > MaxResourceNames {
		return fmt.Errorf("the query names %d clusters: at most %d are served in one query", len(q.Clusters), MaxResourceNames)
	}
	for _, c := range q.Clusters {
		if len(c) > MaxNameLength {
			return fmt.Errorf("cluster %q is %d bytes long: a cluster's context name is at most %d characters here", shorten(c, 64), len(c), MaxNameLength)
		}
	}
	return nil
}

// checkImpersonation refuses a request whose Impersonate-* headers carry
// more than maxImpersonation values, or one longer than
// maxImpersonationValue: each is asked about in a SubjectAccessReview, and
// the answer cached.
func checkImpersonation(h http.Header) error {
	n := 0
	for k, vs := range h {
		if !strings.HasPrefix(k, "Impersonate-") {
			continue
		}
		for _, v := range vs {
			if n++; n > maxImpersonation {
				return fmt.Errorf("the request carries more than %d impersonation values: at most %d are served", maxImpersonation, maxImpersonation)
			}
			if len(k)+len(v) > maxImpersonationValue {
				return fmt.Errorf("header %s %q is %d bytes long: at most %d are served", shorten(k, 64), shorten(v, 64), len(k)+len(v), maxImpersonationValue)
			}
		}
	}
	return nil
}

// shorten returns s when it is at most n bytes long, else its first n
// bytes (cut at a rune boundary) and "…(N more bytes)": for logs and
// messages quoting what a caller wrote.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && !isRuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d more bytes)", s[:cut], len(s)-cut)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
