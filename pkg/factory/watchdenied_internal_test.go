package factory

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestWatchDeniedNeedsAnAllowedList checks that a watch RBAC refuses is
// reported as denied while the list is allowed only when a list succeeds
// with it, before or after: a refused streamed list (a watch) followed by
// a refused list is a forbidden resource, not a denied watch; and that the
// denial ends with a watch allowed or a list that fails.
func TestWatchDeniedNeedsAnAllowedList(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	refused := apierrors.NewForbidden(pods, "", errors.New(`User "u" cannot watch resource "pods"`))
	listRefused := apierrors.NewForbidden(pods, "", errors.New(`User "u" cannot list resource "pods"`))
	unreachable := errors.New("dial tcp: connection refused")
	type step struct {
		request string
		err     error
		// denied: WatchDenied after the step; called: the step calls
		// onWatchDenied.
		denied, called bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"streamed list refused, then the list", []step{
			{"watch", refused, false, false}, {"list", listRefused, false, false}, {"watch", refused, false, false}, {"list", listRefused, false, false}}},
		{"streamed list refused, the list allowed", []step{
			{"watch", refused, false, false}, {"list", nil, true, true}, {"watch", refused, true, true}, {"list", nil, true, true}}},
		{"list allowed, then the watch refused", []step{
			{"list", nil, false, false}, {"watch", refused, true, true}}},
		{"denied until a watch is allowed", []step{
			{"list", nil, false, false}, {"watch", refused, true, true}, {"list", nil, true, true}, {"watch", nil, false, false}, {"list", nil, false, false}}},
		{"denied until a list fails", []step{
			{"list", nil, false, false}, {"watch", refused, true, true}, {"list", unreachable, false, false}, {"watch", refused, false, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			inf := &Informer{onWatchDenied: func(error) { calls++ }}
			for n, s := range tc.steps {
				before := calls
				inf.recordRequest(context.Background(), s.request, s.err)
				if got := inf.WatchDenied() != nil; got != s.denied {
					t.Errorf("step %d (%s, %v): watch denied %v, want %v", n, s.request, s.err, got, s.denied)
				}
				if got := calls > before; got != s.called {
					t.Errorf("step %d (%s, %v): onWatchDenied called %v, want %v", n, s.request, s.err, got, s.called)
				}
			}
			if h := inf.Healthy(); tc.steps[len(tc.steps)-1].denied && h == nil {
				t.Errorf("healthy while the watch is denied")
			}
		})
	}
}
