package queryserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// impersonationRequest is one thing a request asks to act as: a user, a
// service account, a group, a UID or an extra value, with the attributes
// its caller must be allowed to "impersonate".
type impersonationRequest struct {
	resource  string // users, serviceaccounts, groups, uids, userextras
	namespace string // of a service account
	name      string
	extraKey  string // the subresource of userextras
}

// errImpersonationWithoutUser is a request impersonating groups, a UID or
// extras without a user.
var errImpersonationWithoutUser = errors.New("impersonating groups, a UID or extras needs a user to impersonate as well (Impersonate-User)")

// impersonationRequests returns what the Impersonate-* headers of h ask
// for, as the API server reads them (--as, --as-group, --as-uid and
// Impersonate-Extra-KEY); none when there are no such headers. Groups, a
// UID or extras without a user are an error.
func impersonationRequests(h http.Header) ([]impersonationRequest, error) {
	var reqs []impersonationRequest
	name := h.Get(authenticationv1.ImpersonateUserHeader)
	if name != "" {
		if ns, sa, err := serviceaccount.SplitUsername(name); err == nil {
			reqs = append(reqs, impersonationRequest{resource: "serviceaccounts", namespace: ns, name: sa})
		} else {
			reqs = append(reqs, impersonationRequest{resource: "users", name: name})
		}
	}
	others := false
	for _, g := range h.Values(authenticationv1.ImpersonateGroupHeader) {
		reqs = append(reqs, impersonationRequest{resource: "groups", name: g})
		others = true
	}
	for header, values := range h {
		if !strings.HasPrefix(header, authenticationv1.ImpersonateUserExtraHeaderPrefix) {
			continue
		}
		key := strings.ToLower(header[len(authenticationv1.ImpersonateUserExtraHeaderPrefix):])
		if k, err := url.PathUnescape(key); err == nil {
			key = k
		}
		for _, v := range values {
			reqs = append(reqs, impersonationRequest{resource: "userextras", name: v, extraKey: key})
			others = true
		}
	}
	if uid := h.Get(authenticationv1.ImpersonateUIDHeader); uid != "" {
		reqs = append(reqs, impersonationRequest{resource: "uids", name: uid})
		others = true
	}
	if others && name == "" {
		return nil, errImpersonationWithoutUser
	}
	return reqs, nil
}

// ImpersonationForbiddenError is a request to act as someone its caller may
// not impersonate.
type ImpersonationForbiddenError struct {
	// Caller is the authenticated user who asked.
	Caller string
	// Resource is users, serviceaccounts, groups, uids or userextras, in
	// APIGroup; Namespace that of a service account; Name what was asked
	// for.
	Resource, APIGroup, Namespace, Name string
	// Reason is the authorizer's, when it gave one.
	Reason string
}

func (e *ImpersonationForbiddenError) Error() string {
	scope := "at the cluster scope"
	if e.Namespace != "" {
		scope = fmt.Sprintf("in the namespace %q", e.Namespace)
	}
	msg := fmt.Sprintf("%s %q is forbidden: User %q cannot impersonate resource %q in API group %q %s",
		e.Resource, e.Name, e.Caller, e.Resource, e.APIGroup, scope)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// impersonate returns the user that the Impersonate-* headers of r ask to
// act as, after the authorizer has allowed caller to impersonate each
// part, as the API server decides it; caller itself when there are no
// such headers. The groups of the user returned are those asked for (the
// fixed groups of a service account when none are), with
// system:authenticated added as the API server adds it.
func impersonate(ctx context.Context, az authorizer.Authorizer, caller user.Info, h http.Header) (user.Info, error) {
	reqs, err := impersonationRequests(h)
	if err != nil || len(reqs) == 0 {
		return caller, err
	}
	groupsGiven := len(h.Values(authenticationv1.ImpersonateGroupHeader)) > 0
	u := &user.DefaultInfo{Extra: map[string][]string{}}
	for _, req := range reqs {
		attrs := authorizer.AttributesRecord{
			User: caller, Verb: "impersonate", Namespace: req.namespace, Name: req.name,
			Resource: req.resource, ResourceRequest: true, APIVersion: "v1",
		}
		switch req.resource {
		case "serviceaccounts":
			u.Name = serviceaccount.MakeUsername(req.namespace, req.name)
			if !groupsGiven {
				u.Groups = serviceaccount.MakeGroupNames(req.namespace)
			}
		case "users":
			u.Name = req.name
		case "groups":
			u.Groups = append(u.Groups, req.name)
		case "uids":
			u.UID = req.name
			attrs.APIGroup = authenticationv1.GroupName
		case "userextras":
			u.Extra[req.extraKey] = append(u.Extra[req.extraKey], req.name)
			attrs.APIGroup, attrs.Subresource = authenticationv1.GroupName, req.extraKey
		}
		decision, reason, err := az.Authorize(ctx, attrs)
		if decision == authorizer.DecisionAllow {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("asking the API server whether %q may impersonate %s %q: %w", caller.GetName(), req.resource, req.name, err)
		}
		return nil, &ImpersonationForbiddenError{Caller: caller.GetName(), Resource: req.resource, APIGroup: attrs.APIGroup, Namespace: req.namespace, Name: req.name, Reason: reason}
	}
	// As the API server: system:authenticated joins the groups of a user
	// other than system:anonymous unless they name it or
	// system:unauthenticated; system:unauthenticated those of
	// system:anonymous.
	add := user.AllAuthenticated
	if u.Name == user.Anonymous {
		add = user.AllUnauthenticated
	}
	has := false
	for _, g := range u.Groups {
		if g == add || (add == user.AllAuthenticated && g == user.AllUnauthenticated) {
			has = true
		}
	}
	if !has {
		u.Groups = append(u.Groups, add)
	}
	return u, nil
}
