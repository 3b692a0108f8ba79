package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
)

// answerResult is the query server's -o json answer of every pod read by
// one client, beside the time to write the same bytes.
type answerResult struct {
	// first is the first -o json answer since the server synced: it
	// encodes every pod, and keeps their text (--answer-cache).
	first time.Duration
	// answer and floor are sorted times, runs of each, after the first.
	answer, floor []time.Duration
	bytes         int
	proto         string // of both connections
}

// answerVsWrite measures the query server's answer to `query pods -A -o
// json` as the plugin's own client reads it (queryserver.Client, in this
// process, into a counter), from the request to its last byte: the first
// such answer since the server synced, on a connection a --count query
// opened, then, alternated runs times, the next answers and their floor:
// the same bytes written from memory by a TLS server of this process, over
// a connection of the same protocol, read the same way. want is the answer
// a local query printed, which each answer read here must be: call it
// before anything else asks the server for -o json.
func answerVsWrite(kubeconfig string, srv *serveProcess, want []byte, runs int) (answerResult, error) {
	var r answerResult
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return r, err
	}
	client, err := queryserver.NewClient(cfg, srv.url, srv.ca)
	if err != nil {
		return r, err
	}
	floor := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(want)
	}))
	floor.EnableHTTP2 = true
	floor.StartTLS()
	defer floor.Close()
	floorClient := floor.Client()

	ctx := context.Background()
	if err := client.Query(ctx, queryserver.Query{Resources: []string{"pods"}, Count: true}, io.Discard, io.Discard); err != nil {
		return r, err
	}
	q := queryserver.Query{Resources: []string{"pods"}, Output: "json"}
	for i := range runs + 1 { // the first of each warms the floor's connection
		// The first answer is kept and checked; the others are counted,
		// as the floor's are.
		var got bytes.Buffer
		var out io.Writer = &got
		counted := &counter{}
		if i > 0 {
			out = counted
		}
		start := time.Now()
		if err := client.Query(ctx, q, out, io.Discard); err != nil {
			return r, err
		}
		answered := time.Since(start)
		if i == 0 {
			if !bytes.Equal(got.Bytes(), want) {
				return r, fmt.Errorf("the query server's -o json answer read by its client (%d bytes) is not what a local query printed (%d bytes)", got.Len(), len(want))
			}
			r.first = answered
		}
		if i > 0 && counted.n != int64(len(want)) {
			return r, fmt.Errorf("the query server's -o json answer was %d bytes, not %d", counted.n, len(want))
		}
		start = time.Now()
		resp, err := floorClient.Get(floor.URL)
		if err != nil {
			return r, err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		written := time.Since(start)
		if err != nil {
			return r, err
		}
		if n != int64(len(want)) {
			return r, errors.New("the floor server wrote a short answer")
		}
		r.proto = resp.Proto
		if i > 0 {
			r.answer, r.floor = append(r.answer, answered), append(r.floor, written)
		}
	}
	slices.Sort(r.answer)
	slices.Sort(r.floor)
	r.bytes = len(want)
	return r, nil
}

// counter counts what is written to it.
type counter struct{ n int64 }

func (c *counter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return len(b), nil
}
