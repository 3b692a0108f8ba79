package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serverResources are what the query server serves.
const serverResources = "pods,nodes,deployments"

// serverConfig names the pods index the query server builds. The queries
// that use it are given it too, so that the one-shot local query answers
// --by from the same index; the others are not, as building an index costs
// a local query time and memory.
const serverConfig = `apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  pods:
    byNode: object.spec.?nodeName.orValue("")
`

// serverShape is a query asked of the query server and, the same, of local
// caches.
type serverShape struct {
	name  string
	args  []string // after "query"
	index bool     // reads the index of serverConfig: --config is given
}

var serverShapes = []serverShape{
	{"query pods -A --count", []string{"pods", "-A", "--count"}, false},
	{"query pods -A --where 'phase == Running' --count", []string{"pods", "-A", "--where", `object.status.phase == "Running"`, "--count"}, false},
	{"query pods -A --where 'phase == Pending'", []string{"pods", "-A", "--where", `object.status.phase == "Pending"`}, false},
	{"query pods -A --config FILE --by byNode=node-001 -o name", []string{"pods", "-A", "--by", "byNode=node-001", "-o", "name"}, true},
	{"query pods -A --count --group-by node", []string{"pods", "-A", "--count", "--group-by", `object.spec.?nodeName.orValue("")`}, false},
	{"query pods -A -o json", []string{"pods", "-A", "-o", "json"}, false},
}

// serverResult is what benchServer measured.
type serverResult struct {
	// readies are the times to ready of several starts, sorted.
	readies   []time.Duration
	hwmReady  int64 // peak RSS of the last start, at ready
	rssSynced int64 // 1 s after ready
	rssAfter  int64 // after the queries
	// concurrent is the server answering concurrentAnswers -o json
	// queries of every pod at once.
	concurrent concurrentResult
	// answer is its -o json answer of every pod beside the time to write
	// the same bytes.
	answer answerResult
	// local and remote are each shape's one-shot local query and the same
	// query sent to the server, in the order of serverShapes.
	local, remote []row
}

// benchServer starts `serve` on the workload's pods, nodes and deployments
// runs times and measures its time to ready; the last start stays up and
// answers each of serverShapes, measured as whole client processes beside
// the same query answered from local caches, once both have been checked
// to print the same bytes. The server is stopped with SIGTERM at the end,
// and must exit 0.
func benchServer(plugin, kubeconfig string, runs int) (serverResult, error) {
	var r serverResult
	dir, err := os.MkdirTemp("", "kubectl-informer-bench-serve-")
	if err != nil {
		return r, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(serverConfig), 0o600); err != nil {
		return r, err
	}
	var srv *serveProcess
	defer func() {
		if srv != nil {
			_ = srv.stop()
		}
	}()
	// Time to ready varies from start to start: start it a few times, each
	// in a new certificate directory, so each generates its certificate.
	for i := range max(runs, 3) {
		if srv != nil {
			err := srv.stop()
			srv = nil
			if err != nil {
				return r, err
			}
		}
		var ready time.Duration
		srv, ready, err = startServer(plugin, kubeconfig, config, filepath.Join(dir, fmt.Sprintf("certs-%d", i)))
		if err != nil {
			return r, err
		}
		r.readies = append(r.readies, ready)
	}
	slices.Sort(r.readies)
	pid := srv.cmd.Process.Pid
	r.hwmReady = procField(pid, "VmHWM:")
	// As for the exporter: measured once the memory of the initial lists
	// has gone back to the operating system.
	time.Sleep(time.Second)
	r.rssSynced = procRSS(pid)

	kc := "--kubeconfig=" + kubeconfig
	fmt.Fprintf(os.Stderr, "reading the query server's -o json answer beside the same bytes written from memory…\n")
	want, err := measured{"query pods -A -o json", plugin, []string{"query", kc, "pods", "-A", "-o", "json"}}.output()
	if err != nil {
		return r, err
	}
	if r.answer, err = answerVsWrite(kubeconfig, srv, want, max(runs, 5)); err != nil {
		return r, err
	}
	for _, s := range serverShapes {
		args := []string{"query", kc}
		if s.index {
			args = append(args, "--config="+config)
		}
		args = append(args, s.args...)
		local := measured{s.name, plugin, args}
		remote := measured{s.name + " --query-server", plugin, append(slices.Clone(args), "--query-server", srv.url, "--server-ca", srv.ca)}
		fmt.Fprintf(os.Stderr, "checking %s against the query server…\n", s.name)
		if err := sameOutput(local, remote); err != nil {
			return r, err
		}
		// In turn, as the one-shot commands are.
		rows, err := measureAll([]measured{local, remote}, runs)
		if err != nil {
			return r, err
		}
		r.local, r.remote = append(r.local, rows[0]), append(r.remote, rows[1])
	}
	r.rssAfter = procRSS(pid)
	fmt.Fprintf(os.Stderr, "asking the query server for %d -o json answers at once…\n", concurrentAnswers)
	if r.concurrent, err = answerConcurrently(plugin, []string{"query", kc, "pods", "-A", "-o", "json", "--query-server", srv.url, "--server-ca", srv.ca}, pid); err != nil {
		return r, err
	}
	err = srv.stop()
	srv = nil
	return r, err
}

// concurrentAnswers is the number of clients answerConcurrently starts at
// once.
const concurrentAnswers = 8

// concurrentResult is the server's RSS while answering several clients at
// once, and after.
type concurrentResult struct {
	before, peak int64
	// after is the RSS 3 s after the last answer ended.
	after int64
	wall  time.Duration // until every client has its answer
	bytes int64         // of one answer
}

// answerConcurrently runs concurrentAnswers clients (args of plugin) at
// once, sampling the RSS of the server pid every 20 ms until all have
// their answer, each of which must be the same bytes.
func answerConcurrently(plugin string, args []string, pid int) (concurrentResult, error) {
	r := concurrentResult{before: procRSS(pid)}
	stop := make(chan struct{})
	samples := make(chan int64, 1)
	go func() {
		peak := int64(0)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				samples <- peak
				return
			case <-tick.C:
				peak = max(peak, procRSS(pid))
			}
		}
	}()
	outs := make([][]byte, concurrentAnswers)
	errs := make([]error, concurrentAnswers)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range concurrentAnswers {
		wg.Go(func() { outs[i], errs[i] = measured{"query --query-server -o json", plugin, args}.output() })
	}
	wg.Wait()
	r.wall = time.Since(start)
	close(stop)
	r.peak = <-samples
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	for _, o := range outs[1:] {
		if !bytes.Equal(o, outs[0]) {
			return r, errors.New("the query server's concurrent -o json answers differ")
		}
	}
	r.bytes = int64(len(outs[0]))
	time.Sleep(3 * time.Second)
	r.after = procRSS(pid)
	return r, nil
}

// sameOutput runs both commands once and fails unless they print the same
// bytes, but for the values of a table's AGE column: the two runs print
// the same objects, and the seconds between them can turn 19m into 20m.
func sameOutput(local, remote measured) error {
	want, err := local.output()
	if err != nil {
		return err
	}
	got, err := remote.output()
	if err != nil {
		return err
	}
	want, got = maskAges(want), maskAges(got)
	if bytes.Equal(want, got) {
		return nil
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	line := func(l []string) string {
		if i >= len(l) {
			return "(end of output)"
		}
		if s := l[i]; len(s) > 200 {
			return s[:200] + "…"
		}
		return l[i]
	}
	return fmt.Errorf("%s: the query server's answer (%d bytes) differs from the local query's (%d bytes) from line %d:\nlocal:  %s\nserver: %s",
		local.name, len(got), len(want), i+1, line(wl), line(gl))
}

// output runs the command once and returns what it printed on stdout.
func (m measured) output() ([]byte, error) {
	cmd := exec.Command(m.path, m.args...) //nolint:gosec // G204: runs the binary the benchmark was told to measure
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", m.name, err, errOut.String())
	}
	return out.Bytes(), nil
}

// serveProcess is a running query server.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string // https://127.0.0.1:PORT
	ca     string // its self-signed certificate, for --server-ca
	stderr bytes.Buffer
	exited chan struct{}
	err    error // of cmd.Wait, once exited is closed
}

// startServer starts the query server with a self-signed certificate in
// certDir and waits until /readyz answers 200.
func startServer(plugin, kubeconfig, config, certDir string) (*serveProcess, time.Duration, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, 0, err
	}
	p := &serveProcess{url: "https://" + addr, ca: filepath.Join(certDir, "serving.crt"), exited: make(chan struct{})}
	p.cmd = exec.Command(plugin, "serve", serverResources, "-A", "--kubeconfig="+kubeconfig, "--config="+config, //nolint:gosec // G204: runs the binary the benchmark was told to measure
		"--listen-address="+addr, "--cert-dir="+certDir,
		// answerConcurrently asks as one user more than the default 4
		// queries at once.
		fmt.Sprintf("--max-inflight-per-user=%d", concurrentAnswers))
	p.cmd.Stderr = &p.stderr
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	// The server listens before its caches have synced and serves only
	// once they have: a request made before waits for that.
	for {
		select {
		case <-p.exited:
			return nil, 0, fmt.Errorf("the query server exited before it was ready: %v\n%s", p.err, p.stderr.String())
		default:
		}
		if time.Since(start) > 2*time.Minute {
			_ = p.stop()
			return nil, 0, fmt.Errorf("the query server was not ready after 2 minutes")
		}
		if ok := p.ready(); ok {
			return p, time.Since(start), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ready reports whether /readyz answers 200 over HTTPS verified with the
// server's certificate, once that has been written.
func (p *serveProcess) ready() bool {
	pem, err := os.ReadFile(p.ca)
	if err != nil {
		return false
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return false
	}
	c := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true},
	}
	resp, err := c.Get(p.url + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop ends the server with SIGTERM, after which it must exit 0 within
// 15 s.
func (p *serveProcess) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("the query server did not stop within 15 s of SIGTERM\n%s", p.stderr.String())
	}
	if p.err != nil {
		return fmt.Errorf("the query server stopped by SIGTERM: %v\n%s", p.err, p.stderr.String())
	}
	return nil
}

func (r serverResult) render(pods int) string {
	if len(r.readies) == 0 {
		return ""
	}
	var b strings.Builder
	n := len(r.readies)
	fmt.Fprintf(&b, "\n## Query server (`serve %s -A`)\n\n", serverResources)
	fmt.Fprintf(&b, "`kubectl-informer serve %s -A`, with the pods index byNode of a config file, fills its caches once and\n", serverResources)
	fmt.Fprintf(&b, "answers `query … --server URL --server-ca FILE` from them over HTTPS, authenticating the caller with a TokenReview.\n")
	fmt.Fprintf(&b, "Each query below is a whole client process, sent to the server (warm) and run alone with the same flags\n")
	fmt.Fprintf(&b, "(one-shot local: it lists and syncs its own caches); the two outputs were checked to be byte for byte the same.\n\n")
	fmt.Fprintf(&b, "| measure | query server |\n|---|---|\n")
	fmt.Fprintf(&b, "| time to ready (`/readyz` 200, each start generating its certificate), median of %d starts (min–max) | %s (%s–%s) |\n",
		n, secs(r.readies[n/2]), secs(r.readies[0]), secs(r.readies[n-1]))
	fmt.Fprintf(&b, "| peak RSS while syncing (VmHWM at ready) | %s |\n", mib(r.hwmReady))
	fmt.Fprintf(&b, "| RSS after sync (1 s after ready) | %s |\n", mib(r.rssSynced))
	fmt.Fprintf(&b, "| RSS after the queries below | %s |\n", mib(r.rssAfter))
	if c := r.concurrent; c.wall > 0 {
		fmt.Fprintf(&b, "| %d clients asking `query pods -A -o json --query-server` at once (%d KiB each): until all have their answer | %s |\n",
			concurrentAnswers, c.bytes/1024, wall(c.wall))
		fmt.Fprintf(&b, "| the same: peak RSS (sampled every 20 ms), above the RSS before | %s, +%s |\n", mib(c.peak), mib(c.peak-c.before))
		fmt.Fprintf(&b, "| the same: RSS 3 s after the last answer | %s |\n", mib(c.after))
	}
	if a := r.answer; len(a.answer) > 0 {
		n := len(a.answer)
		fmt.Fprintf(&b, "| `query pods -A -o json` (%d KiB) read by the plugin's client in the harness, from the request to the last byte: the first since the server synced (every pod encoded, and its text kept) | %s: %.2f× the floor below |\n",
			a.bytes/1024, wall(a.first), a.first.Seconds()/a.floor[n/2].Seconds())
		fmt.Fprintf(&b, "| the same, each next answer (the pods' text kept), median of %d (min–max) | %s (%s–%s) |\n",
			n, wall(a.answer[n/2]), wall(a.answer[0]), wall(a.answer[n-1]))
		fmt.Fprintf(&b, "| floor: the same bytes written from memory by a TLS server of the harness (%s), read the same way, runs alternated | %s (%s–%s): the answer takes %.2f× |\n",
			a.proto, wall(a.floor[n/2]), wall(a.floor[0]), wall(a.floor[n-1]), a.answer[n/2].Seconds()/a.floor[n/2].Seconds())
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "| query (%d pods) | one-shot local: wall | peak RSS | `--query-server`: wall | peak RSS | local ÷ server wall | stdout |\n|---|---|---|---|---|---|---|\n", pods)
	for i, l := range r.local {
		s := r.remote[i]
		lm, ll, lh := l.wall()
		sm, sl, sh := s.wall()
		lr, _, _ := l.rss()
		sr, _, _ := s.rss()
		fmt.Fprintf(&b, "| `%s` | %s (%s–%s) | %s | %s (%s–%s) | %s | %.1f× | %d KiB |\n",
			l.name, wall(lm), wall(ll), wall(lh), mib(lr), wall(sm), wall(sl), wall(sh), mib(sr), lm.Seconds()/sm.Seconds(), l.output/1024)
	}
	return b.String()
}

// wall formats a wall time: in milliseconds under a second, else seconds.
func wall(d time.Duration) string {
	if d < time.Second {
		return msd(d)
	}
	return secs(d)
}

// maskAges replaces the last column of each row of a table whose last
// header is AGE by "-".
func maskAges(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	if f := bytes.Fields(lines[0]); len(f) == 0 || string(f[len(f)-1]) != "AGE" {
		return b
	}
	for i := 1; i < len(lines); i++ {
		line := bytes.TrimRight(lines[i], " ")
		if j := bytes.LastIndexByte(line, ' '); j >= 0 {
			lines[i] = append(line[:j+1:j+1], '-')
		}
	}
	return bytes.Join(lines, []byte("\n"))
}
