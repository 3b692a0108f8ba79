package queryserver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestImpersonate checks how the Impersonate-* headers become the user a
// query is answered as, and which SubjectAccessReviews decide it, against
// an authorizer that allows impersonating the user "bob", the service
// account shop/reader and the group "readers" only.
func TestImpersonate(t *testing.T) {
	caller := &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}
	var asked []string
	az := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() != "alice" || a.GetVerb() != "impersonate" {
			return authorizer.DecisionDeny, "", errors.New("unexpected review")
		}
		asked = append(asked, a.GetResource()+"/"+a.GetNamespace()+"/"+a.GetName())
		switch a.GetResource() + "/" + a.GetNamespace() + "/" + a.GetName() {
		case "users//bob", "serviceaccounts/shop/reader", "groups//readers":
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	tests := []struct {
		name    string
		headers map[string][]string
		// user and groups of the user answered as; err the error's text.
		user   string
		groups []string
		err    string
	}{
		{name: "none", user: "alice", groups: []string{"system:authenticated"}},
		{name: "user", headers: map[string][]string{"Impersonate-User": {"bob"}}, user: "bob", groups: []string{"system:authenticated"}},
		{name: "user and group", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"readers"}},
			user: "bob", groups: []string{"readers", "system:authenticated"}},
		{name: "service account", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:shop:reader"}},
			user: "system:serviceaccount:shop:reader", groups: []string{"system:serviceaccounts", "system:serviceaccounts:shop", "system:authenticated"}},
		{name: "user not allowed", headers: map[string][]string{"Impersonate-User": {"nobody"}},
			err: `users "nobody" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`},
		{name: "group not allowed", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"system:masters"}},
			err: `groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope`},
		{name: "service account not allowed", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:kube-system:admin"}},
			err: `serviceaccounts "admin" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"`},
		{name: "uid not allowed", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Uid": {"42"}},
			err: `uids "42" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`},
		{name: "group without user", headers: map[string][]string{"Impersonate-Group": {"readers"}}, err: errImpersonationWithoutUser.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			h := http.Header{}
			for k, vs := range tt.headers {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			u, err := impersonate(context.Background(), az, caller, h)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.GetName() != tt.user || !slices.Equal(u.GetGroups(), tt.groups) {
				t.Errorf("answered as %q in %v, want %q in %v", u.GetName(), u.GetGroups(), tt.user, tt.groups)
			}
			if len(asked) != len(h.Values("Impersonate-User"))+len(h.Values("Impersonate-Group")) {
				t.Errorf("reviews %v: want one per user and group impersonated", asked)
			}
		})
	}
}
