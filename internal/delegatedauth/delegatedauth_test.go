package delegatedauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// tokens authenticates the bearer tokens it maps to user names.
type tokens map[string]string

func (t tokens) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	name, ok := t[r.Header.Get("Authorization")]
	if !ok {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
}

// allows allows the users it maps to the verb and path they may use.
type allows map[string][2]string

func (a allows) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if got, ok := a[attrs.GetUser().GetName()]; ok && !attrs.IsResourceRequest() && got == [2]string{attrs.GetVerb(), attrs.GetPath()} {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// TestFilter: a request without credentials the authenticator accepts
// gets 401, one whose user may not use its method's verb on its path 403,
// the others reach the handler.
func TestFilter(t *testing.T) {
	an := tokens{"Bearer a": "alice", "Bearer b": "bob"}
	az := allows{"alice": {"get", "/metrics"}, "bob": {"get", "/other"}}
	h := Filter(an, authorizer.AuthorizerFunc(az.Authorize), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		method, path, auth string
		want               int
	}{
		{http.MethodGet, "/metrics", "Bearer a", http.StatusTeapot},
		{http.MethodGet, "/metrics", "Bearer b", http.StatusForbidden},
		{http.MethodPost, "/metrics", "Bearer a", http.StatusForbidden},
		{http.MethodGet, "/metrics", "", http.StatusUnauthorized},
		{http.MethodGet, "/metrics", "Bearer c", http.StatusUnauthorized},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s %s with %q: %d %s, want %d", tc.method, tc.path, tc.auth, rec.Code, rec.Body.String(), tc.want)
		}
	}
}
