package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// Defaults of Options.ContactBackoff and Options.MaxContactBackoff.
const (
	DefaultContactBackoff    = time.Second
	DefaultMaxContactBackoff = 30 * time.Second
)

// ContactTimeout bounds each attempt to reach the API server before the
// first config is loaded: a server that accepts connections and never
// answers fails the attempt after it.
const ContactTimeout = 10 * time.Second

// reachFix is what an operator does about an API server that cannot be
// reached.
const reachFix = "check that the API server is running and reachable from here, and that the kubeconfig (or the pod's service account and KUBERNETES_SERVICE_HOST) points at it"

// contactState is how the attempts to reach the API server fare until the
// first config is loaded.
type contactState struct {
	// err is the last attempt's failure; nil before the first attempt
	// failed and once one succeeded.
	err error
	// failures counts the failed attempts.
	failures int
	// next is when the next attempt starts, while err is set.
	next time.Time
	// reached is set once an attempt has reached the API server.
	reached bool
}

// unreachable reports whether err is a failure to reach the API server,
// or an answer that says it cannot serve yet (503, 500, 429, timeouts),
// which trying again may mend; not a mistake of the config, nor a refusal
// of the credentials.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var se *factory.ServerError
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &se), errors.As(err, &ne), errors.As(err, &ue),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

// loadFirst loads the first config (see Reload), trying again while the
// API server cannot be reached. Before each attempt it asks the server for
// its version, within ContactTimeout, so that an unreachable server costs
// no compilation of the config. The state of the attempts is kept for
// /readyz and telemetry, and logged when it changes: the first failure, a
// failure of another cause, the success after failures. Each attempt is
// logged at debug level.
func (x *Exporter) loadFirst(ctx context.Context) error {
	delay := x.opts.ContactBackoff
	if delay <= 0 {
		delay = DefaultContactBackoff
	}
	limit := x.maxContactBackoff()
	delay = min(delay, limit)
	var logged string // the cause logged last
	for attempt := 1; ; attempt++ {
		err := x.probe(ctx)
		if err == nil && x.opts.AutoShard.Pod != "" && x.shardSource == "" {
			x.shardSource, err = x.detectShard(ctx, x.kube)
		}
		if err == nil {
			err = x.Reload(ctx)
		}
		if ctx.Err() != nil || !unreachable(err) {
			x.contacted(err == nil || !unreachable(err))
			if logged != "" && err == nil {
				x.log.Info("the API server answered; the config is loaded", "attempts", attempt)
			}
			return err
		}
		x.mu.Lock()
		x.contact.err, x.contact.next = err, time.Now().Add(delay)
		x.contact.failures++
		x.mu.Unlock()
		x.tel.contactFailed()
		if msg := err.Error(); msg != logged {
			x.log.Error("the API server cannot be reached: the config is loaded once it answers, trying again with a backoff of up to "+limit.String()+"; /readyz answers 503 until then",
				"attempt", attempt, "err", err)
			logged = msg
		} else {
			x.log.Debug("the API server cannot be reached", "attempt", attempt, "retry_in", delay, "err", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, limit)
	}
}

// probe asks the API server for its version within ContactTimeout; an
// error that unreachable accepts means it cannot be reached. A resolver
// without a REST client (a fake's) is not asked.
func (x *Exporter) probe(ctx context.Context) error {
	dc := x.resolver.Discovery()
	if dc == nil {
		return nil
	}
	rc := dc.RESTClient()
	if rc == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ContactTimeout)
	defer cancel()
	err := rc.Get().AbsPath("/version").Do(ctx).Error()
	if err != nil && unreachable(err) {
		return &factory.ServerError{Err: err}
	}
	return nil // reached: whatever else is wrong, loading the config says
}

// contacted records that an attempt to load the first config ended:
// having reached the API server or not.
func (x *Exporter) contacted(reached bool) {
	x.mu.Lock()
	x.contact.err = nil
	x.contact.reached = x.contact.reached || reached
	x.mu.Unlock()
	x.tel.setReachable(reached)
}

// notLoaded is why no config is loaded, for /readyz.
func (x *Exporter) notLoaded() error {
	x.mu.RLock()
	c := x.contact
	x.mu.RUnlock()
	if c.err == nil {
		return errors.New("no config loaded yet: reaching the API server and resolving the config's resources")
	}
	wait := time.Until(c.next).Round(time.Second)
	when := "now"
	if wait > 0 {
		when = "in " + wait.String()
	}
	msg := c.err.Error()
	var se *factory.ServerError
	if !errors.As(c.err, &se) {
		msg += "\n" + reachFix
	}
	return fmt.Errorf("no config loaded: the API server cannot be reached (%d attempts failed; the next %s, with a backoff of up to %s)\n%s",
		c.failures, when, x.maxContactBackoff(), msg)
}

// maxContactBackoff is Options.MaxContactBackoff or its default.
func (x *Exporter) maxContactBackoff() time.Duration {
	if x.opts.MaxContactBackoff > 0 {
		return x.opts.MaxContactBackoff
	}
	return DefaultMaxContactBackoff
}
