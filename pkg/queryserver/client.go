package queryserver

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Client sends queries to a query server with the credentials of a
// kubeconfig.
type Client struct {
	url  string
	http *http.Client
	// AnswerTimeout, when positive, bounds the wait for the answer to
	// start; the answer itself may then take as long as it needs.
	AnswerTimeout time.Duration
}

// NoAnswerError is a query server that did not start answering within the
// client's AnswerTimeout.
type NoAnswerError struct {
	URL   string
	Limit time.Duration
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("the query server at %s did not answer within %s", e.URL, e.Limit)
}

// UnreachableError is a query server the request could not reach.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%v\nthe query server could not be reached: check that it runs at %s", e.Err, strings.TrimSuffix(e.URL, QueryPath))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// certificateHint names the flag that fixes a query server certificate
// the client did not accept, or is "" for other errors.
func certificateHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return "the query server's certificate is signed by an authority this client does not trust: pass --server-ca with the certificate that signed it (for a self-signed server, the certificate kubectl informer serve wrote)"
	case errors.As(err, &hostname):
		return "the query server's certificate is not valid for this address: use an address its certificate names, or add it to the server's --tls-san"
	case errors.As(err, &invalid):
		return "the query server's certificate was refused: check it, or pass --server-ca with the certificate authority that signed it"
	}
	return ""
}

// NewClient returns a client of the query server at server (an https://
// URL) that authenticates as cfg does with the API server: its bearer
// token, exec plugin or client certificate. The server's certificate is
// verified with caFile, or when caFile is "", with cfg's certificate
// authority (a server whose certificate the cluster's CA signed).
func NewClient(cfg *rest.Config, server, caFile string) (*Client, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not a URL: want https://HOST:PORT", server)
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("%q: the query server speaks HTTPS only: want https://%s", server, u.Host)
	}
	c := rest.CopyConfig(cfg)
	c.Host, c.APIPath = u.Scheme+"://"+u.Host, ""
	c.ServerName = ""
	if caFile != "" {
		c.CAFile, c.CAData = caFile, nil
	}
	// The query server is not the API server: no proxy rewriting,
	// rate limits or content negotiation of client-go apply.
	c.RateLimiter, c.QPS, c.Burst = nil, 0, 0
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(u.String(), "/")
	return &Client{url: base + QueryPath, http: hc}, nil
}

// StatusError is a query the server refused: its HTTP code and the status
// it sent.
type StatusError struct {
	Code   int
	Status metav1.Status
}

func (e *StatusError) Error() string {
	msg := e.Status.Message
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	switch e.Code {
	case http.StatusUnauthorized:
		return "the query server refused the credentials sent (401 Unauthorized): " + msg +
			"; check them with kubectl auth whoami and the same --token, --context or --kubeconfig, or log in again"
	case http.StatusForbidden:
		return "Error from the query server (Forbidden): " + msg
	case http.StatusTooManyRequests:
		return "the query server refused the query (429 Too Many Requests): " + msg
	}
	return fmt.Sprintf("the query server answered %d %s: %s", e.Code, http.StatusText(e.Code), msg)
}

// Query sends q and copies the answer to out as it arrives, then what the
// command line would print on standard error to errOut. A refused query is
// a *StatusError; an answer over several clusters some of which did not
// answer, a *plan.PartialError.
func (c *Client) Query(ctx context.Context, q Query, out, errOut io.Writer) error {
	body, err := json.Marshal(q)
	if err != nil {
		return err
	}
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if c.AnswerTimeout > 0 {
		timer = time.AfterFunc(c.AnswerTimeout, func() { cancel(&NoAnswerError{URL: c.url, Limit: c.AnswerTimeout}) })
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	// Answering (or failed): the timer no longer bounds the request.
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		var na *NoAnswerError
		if errors.As(context.Cause(reqCtx), &na) {
			return na
		}
		var op *net.OpError
		if ctx.Err() == nil && errors.As(err, &op) && op.Op == "dial" {
			return &UnreachableError{URL: c.url, Err: err}
		}
		if hint := certificateHint(err); hint != "" {
			return fmt.Errorf("sending the query to %s: %w\n%s", c.url, err, hint)
		}
		return fmt.Errorf("sending the query to %s: %w", c.url, err)
	}
	defer func() { _ = resp.Body.Close() }() // read only
	if resp.StatusCode != http.StatusOK {
		se := &StatusError{Code: resp.StatusCode}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
		if err := json.Unmarshal(data, &se.Status); err != nil || se.Status.Kind != "Status" {
			se.Status = metav1.Status{Message: strings.TrimSpace(string(data))}
		}
		return se
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return fmt.Errorf("reading the answer from %s: %w", c.url, err)
	}
	if s := resp.Trailer.Get(StderrTrailer); s != "" {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("the query server sent an invalid %s trailer: %w", StderrTrailer, err)
		}
		if _, err := errOut.Write(b); err != nil {
			return err
		}
	}
	if s := resp.Trailer.Get(PartialTrailer); s != "" {
		p, err := decodePartial(s)
		if err != nil {
			return fmt.Errorf("the query server sent an invalid %s trailer: %w", PartialTrailer, err)
		}
		return p
	}
	if s := resp.Trailer.Get(ErrorTrailer); s != "" {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("the query server sent an invalid %s trailer: %w", ErrorTrailer, err)
		}
		return errors.New(string(b))
	}
	return nil
}
