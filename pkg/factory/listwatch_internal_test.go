package factory

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// protoRecorder is a TLS server offering HTTP/2 that records the protocol
// of each request it answers with an empty pod list, and whether the
// client asked to close the connection after it.
type protoRecorder struct {
	mu     sync.Mutex
	protos []string
}

func (p *protoRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	proto := r.Proto
	if r.Close {
		proto += ", close"
	}
	p.protos = append(p.protos, proto)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"PodList","metadata":{},"items":[]}`))
}

func (p *protoRecorder) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.protos
	p.protos = nil
	return out
}

func newProtoServer(t *testing.T) (*protoRecorder, *rest.Config) {
	t.Helper()
	rec := &protoRecorder{}
	srv := httptest.NewUnstartedServer(rec)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return rec, &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

func TestStreamsOverHTTP1(t *testing.T) {
	rec, cfg := newProtoServer(t)
	ctx := context.Background()

	// The server does speak HTTP/2 to a client-go client as configured.
	plain := rest.CopyConfig(cfg)
	plain.GroupVersion = &schema.GroupVersion{Version: "v1"}
	plain.APIPath = "/api"
	plain.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Get().Resource("pods").Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0] != "HTTP/2.0" {
		t.Fatalf("a plain client-go client spoke %v, want [HTTP/2.0]", got)
	}

	c, err := newClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := c.typedClientLocked(schema.GroupVersion{Version: "v1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := typed.Get().Resource("pods").Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	if _, err := c.dynamic.Resource(pods).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.metadata.Resource(pods).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 3 {
		t.Fatalf("the server answered %d requests, want 3 (typed, dynamic, metadata)", len(got))
	}
	for i, p := range got {
		if p != "HTTP/1.1, close" {
			t.Errorf("request %d of the informers' clients: %s, want HTTP/1.1, close", i, p)
		}
	}
	if cfg.NextProtos != nil || cfg.Dial != nil {
		t.Errorf("newClients changed the caller's config: NextProtos %v, Dial set %v", cfg.NextProtos, cfg.Dial != nil)
	}
}

func TestStreamOverHTTP1KeepsOwnDialer(t *testing.T) {
	called := false
	own := func(ctx context.Context, network, addr string) (net.Conn, error) {
		called = true
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	rec, cfg := newProtoServer(t)
	cfg.Dial = own
	c, err := newClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	if _, err := c.dynamic.Resource(pods).List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Error("the config's own dial function was not used")
	}
	if got := rec.take(); len(got) != 1 || got[0] != "HTTP/1.1, close" {
		t.Errorf("got %v, want [HTTP/1.1, close]", got)
	}
}
