// Command testapp is the local node's test workload: one small static
// program whose first argument says how it behaves, so that the tests'
// pods really run, crash, get OOM-killed or fail their probes.
//
//	testapp serve [-addr :8080] [-ready=false]   serve /healthz (200) and /readyz (200, or 503 with -ready=false)
//	testapp exit [-code N] [-after D]             exit with code N after D
//	testapp oom [-step-mib N]                     allocate and touch memory until killed
//	testapp sleep                                 wait for SIGTERM
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testapp serve|exit|oom|sleep [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", ":8080", "serve: listen address")
	ready := fs.Bool("ready", true, "serve: whether /readyz answers 200 (else 503)")
	code := fs.Int("code", 0, "exit: the exit code")
	after := fs.Duration("after", 0, "exit: how long to run first")
	step := fs.Int("step-mib", 16, "oom: MiB allocated per step")
	_ = fs.Parse(os.Args[2:])

	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGINT, syscall.SIGTERM)
	switch os.Args[1] {
	case "serve":
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprintln(w, "ok") })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if !*ready {
				http.Error(w, "not ready", http.StatusServiceUnavailable)
				return
			}
			_, _ = fmt.Fprintln(w, "ok")
		})
		srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { <-term; _ = srv.Close() }()
		fmt.Printf("serving on %s (ready=%t)\n", *addr, *ready)
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "exit":
		fmt.Printf("exiting with %d after %s\n", *code, *after)
		select {
		case <-time.After(*after):
		case <-term:
		}
		os.Exit(*code)
	case "oom":
		// Each step is kept reachable and touched, so that it is resident.
		var held [][]byte
		for {
			b := make([]byte, *step<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			held = append(held, b)
			fmt.Printf("holding %d MiB\n", len(held)**step)
			time.Sleep(10 * time.Millisecond)
		}
	case "sleep":
		<-term
	default:
		fmt.Fprintf(os.Stderr, "testapp: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}
