// Package queryserver answers queries over HTTPS from the warm caches of
// one long-running process (kubectl informer serve), for many users, with
// the authentication and authorization of the Kubernetes API server they
// query: each request's bearer token is validated with a TokenReview (its
// client certificate against the cluster's client CA), and what it may read
// is decided with SubjectAccessReviews, both through k8s.io/apiserver's
// delegating authenticator and authorizer, which cache their decisions
// briefly. A request that impersonates (the Impersonate-User,
// Impersonate-Group, Impersonate-Uid and Impersonate-Extra-* headers that
// kubectl's --as, --as-group and --as-uid send) is answered as the user it
// impersonates, once SubjectAccessReviews have allowed its caller to
// "impersonate" each part of it, as the API server decides; else 403.
//
// The protocol is one endpoint, POST /v1/query, whose body is a [Query] (a
// query as the command line states it) and whose answer is the text the
// command line would print (a v1 List for -o json), streamed; what the
// command line prints on standard error (warnings, "No resources found")
// follows in the trailer [StderrTrailer]. A request refused before its
// answer starts gets a JSON metav1.Status: 400 for a mistake in the query,
// 401 when the caller is not authenticated, 403 when it may not list what
// the query reads, 429 over a per-user limit, 503 until the caches have
// synced.
//
// [Serve] fills the server's caches once with package plan (whole objects,
// the indexes of the server's flags and config) and [Served.Answer] answers
// each request from them as the command line would from its own, after
// deciding with the caller's permissions which namespaces of each resource
// it may read ([Access]); the HTTP side ([Server], [Query]) authenticates,
// limits and streams.
//
// It is built on package plan and the engine (package query); it must not
// import query/watch or query/interactive.
package queryserver
