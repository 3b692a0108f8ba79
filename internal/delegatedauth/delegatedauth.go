// Package delegatedauth authenticates and authorizes HTTP requests by
// asking the Kubernetes API server, as aggregated API servers and
// kube-rbac-proxy do: bearer tokens are checked with TokenReviews, client
// certificates against the cluster's client CA, and each decision with a
// SubjectAccessReview, through k8s.io/apiserver's delegating authenticator
// and authorizer, which cache their answers briefly. The query server
// (kubectl informer serve) and the exporter's auth filter share it.
package delegatedauth

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
)

// Options configures the delegated authentication and authorization of
// New.
type Options struct {
	// ClientCAFile, when set, is the CA bundle client certificates are
	// verified with (reloaded when it changes). Default: the cluster's
	// client CA, read from the ConfigMap
	// kube-system/extension-apiserver-authentication as aggregated API
	// servers read it (and followed); when it cannot be read, client
	// certificates are not accepted and a warning is logged.
	ClientCAFile string
	// NoClientCertificates accepts bearer tokens only: the client CA is
	// not read, and ClientCAFile is ignored.
	NoClientCertificates bool
	// Anonymous accepts requests without credentials as the user
	// system:anonymous (which the authorizer then judges). Default false:
	// they get 401.
	Anonymous bool
	// TokenCacheTTL is how long a TokenReview's answer is reused
	// (default 10s); AllowCacheTTL how long a SubjectAccessReview that
	// allowed (default DefaultAllowCacheTTL), DenyCacheTTL one that did
	// not (default 10s). Decisions are cached as k8s.io/apiserver's
	// webhook authorizer caches them: the last 8192 kept.
	TokenCacheTTL, AllowCacheTTL, DenyCacheTTL time.Duration
}

// defaultCacheTTL is the default of the Options TTLs but AllowCacheTTL:
// short, so that a revoked token or a permission granted takes effect
// quickly.
const defaultCacheTTL = 10 * time.Second

// DefaultAllowCacheTTL is the default of Options.AllowCacheTTL.
const DefaultAllowCacheTTL = time.Minute

// webhookBackoff is k8s.io/apiserver's default retry backoff for
// TokenReviews and SubjectAccessReviews.
var webhookBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// New returns an authenticator and an authorizer that delegate to the API
// server client talks to, with k8s.io/apiserver's delegating
// implementations; answers are cached for the TTLs of o. The client CA,
// when read from the cluster, is followed until ctx ends.
func New(ctx context.Context, client kubernetes.Interface, o Options, log *slog.Logger) (authenticator.Request, authorizer.Authorizer, error) {
	ttlOr := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	ttl := func(d time.Duration) time.Duration { return ttlOr(d, defaultCacheTTL) }
	var ca dynamiccertificates.CAContentProvider
	if !o.NoClientCertificates {
		var err error
		if ca, err = clientCA(ctx, client, o.ClientCAFile, log); err != nil {
			return nil, nil, err
		}
	}
	backoff := webhookBackoff
	authn := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                          &apiserver.AnonymousAuthConfig{Enabled: o.Anonymous},
		TokenAccessReviewClient:            client.AuthenticationV1(),
		TokenAccessReviewTimeout:           10 * time.Second,
		WebhookRetryBackoff:                &backoff,
		CacheTTL:                           ttl(o.TokenCacheTTL),
		ClientCertificateCAContentProvider: ca,
	}
	an, _, err := authn.New()
	if err != nil {
		return nil, nil, fmt.Errorf("building the authenticator: %w", err)
	}
	authz := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             ttlOr(o.AllowCacheTTL, DefaultAllowCacheTTL),
		DenyCacheTTL:              ttl(o.DenyCacheTTL),
		WebhookRetryBackoff:       &backoff,
	}
	az, err := authz.New()
	if err != nil {
		return nil, nil, fmt.Errorf("building the authorizer: %w", err)
	}
	return an, az, nil
}

// clientCA returns the provider of the CA bundle client certificates are
// verified with, or nil when there is none.
func clientCA(ctx context.Context, client kubernetes.Interface, file string, log *slog.Logger) (dynamiccertificates.CAContentProvider, error) {
	if file != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", file)
		if err != nil {
			return nil, fmt.Errorf("client CA file: %w", err)
		}
		go ca.Run(ctx, 1)
		return ca, nil
	}
	const ns, name, key = "kube-system", "extension-apiserver-authentication", "client-ca-file"
	ca, err := dynamiccertificates.NewDynamicCAFromConfigMapController("client-ca", ns, name, key, client)
	if err == nil {
		err = followConfigMapCA(ctx, client, ca, ns, name, key)
	}
	if err != nil {
		log.Warn("client certificates are not accepted: the cluster's client CA could not be read; give it with --client-ca-file",
			"configmap", ns+"/"+name, "error", err)
		return nil, nil
	}
	return ca, nil
}

// configMapCATimeout bounds the wait for the first read of the client CA
// from its ConfigMap.
const configMapCATimeout = 10 * time.Second

// followConfigMapCA runs ca, which follows the ConfigMap ns/name until ctx
// ends, and returns once it holds the bundle under key. ca reads the
// ConfigMap from an informer that only its Run starts (its RunOnce reads
// that informer's empty cache), so Run must come first. The ConfigMap is
// read once directly beforehand, so that a missing ConfigMap or key, or a
// get that is forbidden, is reported at once.
func followConfigMapCA(ctx context.Context, client kubernetes.Interface, ca *dynamiccertificates.ConfigMapCAController, ns, name, key string) error {
	cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cm.Data[key] == "" {
		return fmt.Errorf("it has no %s", key)
	}
	run, stop := context.WithCancel(ctx)
	loaded := false
	defer func() {
		if !loaded {
			stop()
		}
	}()
	go ca.Run(run, 1)
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, configMapCATimeout, true, func(context.Context) (bool, error) {
		return len(ca.CurrentCABundleContent()) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("its %s was not loaded within %s (list and watch on it are needed too): %w", key, configMapCATimeout, err)
	}
	loaded = true
	return nil
}

// Unauthorized is the message of a request refused with 401.
const Unauthorized = "Unauthorized: the request has no valid credentials (a bearer token or a client certificate the cluster accepts)"

// Refusal is why a request was refused: its HTTP status code (401 or 403)
// and a message for its caller.
type Refusal struct {
	Code    int
	Message string
}

// NonResource decides whether the caller of r may use verb on the
// non-resource URL path, as the API server decides for its own /metrics:
// nil when it may; a 401 Refusal when r has no credentials the
// authenticator accepts; a 403 one when the authorizer does not allow
// it (or could not be asked).
func NonResource(r *http.Request, an authenticator.Request, az authorizer.Authorizer, verb, path string) *Refusal {
	resp, ok, err := an.AuthenticateRequest(r)
	if err != nil || !ok {
		return &Refusal{Code: http.StatusUnauthorized, Message: Unauthorized}
	}
	decision, _, err := az.Authorize(r.Context(), authorizer.AttributesRecord{
		User: resp.User, Verb: verb, Path: path, ResourceRequest: false,
	})
	if decision != authorizer.DecisionAllow {
		msg := fmt.Sprintf("User %q cannot %s path %q", resp.User.GetName(), verb, path)
		if err != nil {
			msg += ": " + err.Error()
		}
		return &Refusal{Code: http.StatusForbidden, Message: msg}
	}
	return nil
}

// Filter passes to next only the requests whose callers may use, on the
// non-resource URL of the request's path, the verb of its method in lower
// case ("get" for GET), as kube-state-metrics' --auth-filter and
// kube-rbac-proxy decide; the others get a plain-text 401 or 403.
func Filter(an authenticator.Request, az authorizer.Authorizer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refused := NonResource(r, an, az, strings.ToLower(r.Method), r.URL.Path); refused != nil {
			http.Error(w, refused.Message, refused.Code)
			return
		}
		next.ServeHTTP(w, r)
	})
}
