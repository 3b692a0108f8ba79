package serving

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestUntilCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Until(ctx, srv, func() error { return srv.Serve(ln) }) }()
	resp, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Until = %v after its context ended, want nil", err)
		}
	case <-time.After(Grace + time.Second):
		t.Fatal("Until did not return after its context ended")
	}
	if _, err := http.Get("http://" + ln.Addr().String()); err == nil {
		t.Error("the server still answers after Until returned")
	}
}

func TestUntilServeFails(t *testing.T) {
	boom := errors.New("address in use")
	err := Until(context.Background(), &http.Server{ReadHeaderTimeout: time.Minute}, func() error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("Until = %v, want %v", err, boom)
	}
}
