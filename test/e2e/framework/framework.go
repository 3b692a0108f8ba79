// Package framework starts a real kube-apiserver and etcd for end-to-end
// tests: the binaries the project builds from the Kubernetes Go modules into
// _output/bin, run by controller-runtime's envtest. Each test package starts
// its own control plane in TestMain and stops it when the package is done.
//
// Tests never touch a cluster from the developer's own kubeconfig: Main
// points KUBECONFIG at the test cluster's admin kubeconfig for the whole
// package, and every command under test is given --kubeconfig explicitly;
// XDG_CONFIG_HOME points at an empty directory, so no config file of the
// developer's is read either.
package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// Cluster is a running control plane with an admin and an unprivileged user.
type Cluster struct {
	env *envtest.Environment
	// certDir holds the API server's certificates; removed by Stop.
	certDir string
	// etcdDir is etcd's data directory; removed by Stop.
	etcdDir string
	// nodeDir is the state directory of a cluster StartNode started with
	// localcluster, which has no env.
	nodeDir string
	// sharedNode: the node cluster in nodeDir is not the tests' own
	// (NODE_CLUSTER_DIR), and Stop leaves it running.
	sharedNode bool

	// Dir holds the kubeconfigs; removed by Stop.
	Dir string
	// Config is the admin (system:masters) REST config.
	Config *rest.Config
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// UnprivilegedConfig is authenticated but bound to no RBAC role.
	UnprivilegedConfig *rest.Config
	// UnprivilegedKubeconfig is the path of the unprivileged user's kubeconfig.
	UnprivilegedKubeconfig string
	// Client is a clientset for the admin user.
	Client kubernetes.Interface
	// Root is the module's root directory.
	Root string
	// BinDir holds kube-apiserver, etcd and kubectl.
	BinDir string
}

// ModuleRoot returns the directory of the main module's go.mod.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the kubectl-informer module")
	}
	return filepath.Dir(gomod), nil
}

// binDir returns the module's root and the directory of the binaries the
// project builds: $KUBEBUILDER_ASSETS, else ROOT/_output/bin.
func binDir() (root, bin string, err error) {
	if root, err = ModuleRoot(); err != nil {
		return "", "", err
	}
	bin = os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		bin = filepath.Join(root, "_output", "bin")
	}
	return root, bin, nil
}

// Start starts etcd and kube-apiserver from ROOT/_output/bin (or
// $KUBEBUILDER_ASSETS when set) and creates the users.
func Start() (*Cluster, error) {
	root, bin, err := binDir()
	if err != nil {
		return nil, err
	}
	for _, b := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run 'make controlplane' (or 'make test', which builds it)", b, bin)
		}
	}
	// envtest's own client logs through controller-runtime's logger, which
	// otherwise prints a stack trace saying that it was never set.
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// The API server's certificates live in a directory of ours, so that
	// RestartAPIServer brings it back with the same ones and clients keep
	// trusting it.
	certDir, err := os.MkdirTemp("", "kubectl-informer-e2e-apiserver-")
	if err != nil {
		return nil, err
	}
	apiserver := env.ControlPlane.GetAPIServer()
	apiserver.CertDir = certDir
	// Allow enough concurrent requests for tests that load many objects.
	// Pod templates are served without a watch cache, as every resource is
	// with --watch-cache=false: their watches are etcd's, and a watch from
	// a compacted revision fails with 410 Gone (see EtcdCompact).
	apiserver.Configure().
		Set("max-requests-inflight", "1000").
		Set("max-mutating-requests-inflight", "500").
		Set("watch-cache-sizes", "podtemplates#0")
	for flag, value := range APIServerFlags {
		apiserver.Configure().Set(flag, value)
	}
	// So is etcd's data directory, so that RestartEtcd brings it back with
	// its data.
	etcdDir, err := os.MkdirTemp("", "kubectl-informer-e2e-etcd-")
	if err != nil {
		_ = os.RemoveAll(certDir)
		return nil, err
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
	cfg, err := env.Start()
	if err != nil {
		_ = os.RemoveAll(certDir)
		_ = os.RemoveAll(etcdDir)
		return nil, fmt.Errorf("starting the control plane from %s: %w", bin, err)
	}
	c := &Cluster{env: env, Config: cfg, Root: root, BinDir: bin, certDir: certDir, etcdDir: etcdDir}
	if err := c.init(); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) init() error {
	dir, err := os.MkdirTemp("", "kubectl-informer-e2e-")
	if err != nil {
		return err
	}
	c.Dir = dir
	admin, err := c.env.AddUser(envtest.User{Name: "e2e-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding the admin user: %w", err)
	}
	if c.Kubeconfig, err = writeKubeconfig(admin, filepath.Join(dir, "admin.kubeconfig")); err != nil {
		return err
	}
	c.Config = admin.Config()
	nobody, err := c.env.AddUser(envtest.User{Name: "e2e-unprivileged"}, nil)
	if err != nil {
		return fmt.Errorf("adding the unprivileged user: %w", err)
	}
	if c.UnprivilegedKubeconfig, err = writeKubeconfig(nobody, filepath.Join(dir, "unprivileged.kubeconfig")); err != nil {
		return err
	}
	c.UnprivilegedConfig = nobody.Config()
	c.Client, err = kubernetes.NewForConfig(c.Config)
	return err
}

// AddUser adds a user authenticated as name, in groups, and writes its
// kubeconfig into Dir. RBAC grants it nothing: bind it to roles.
func (c *Cluster) AddUser(name string, groups ...string) (kubeconfig string, cfg *rest.Config, err error) {
	if c.env == nil {
		return "", nil, errors.New("a node's cluster has no client-certificate users: use ServiceAccountToken")
	}
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", nil, fmt.Errorf("adding the user %s: %w", name, err)
	}
	if kubeconfig, err = writeKubeconfig(u, filepath.Join(c.Dir, name+".kubeconfig")); err != nil {
		return "", nil, err
	}
	return kubeconfig, u.Config(), nil
}

func writeKubeconfig(u *envtest.AuthenticatedUser, path string) (string, error) {
	b, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, os.WriteFile(path, b, 0o600)
}

// Stop stops the control plane and removes Dir.
func (c *Cluster) Stop() error {
	if c.nodeDir != "" {
		return c.stopNode()
	}
	if c.Dir != "" {
		_ = os.RemoveAll(c.Dir)
	}
	err := c.env.Stop()
	for _, dir := range []string{c.certDir, c.etcdDir} {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
	}
	return err
}

// RestartAPIServer kills the kube-apiserver (SIGKILL, as a crash would),
// runs during (if not nil) while it is down, and starts it again on the
// same address with the same certificates and users; it returns once the
// new one is healthy. etcd keeps running, so the objects stay, and clients
// see a server that went away and came back. A client resumes its watches
// from the resourceVersion each had reached, if the new server can: one
// served by a watch cache cannot (410 Gone: the cache starts at etcd's
// current revision), and the client lists again; one served by etcd, such
// as that of pod templates here (see Start), can from any revision not
// compacted (see EtcdCompact).
func (c *Cluster) RestartAPIServer(during func() error) error {
	apiserver := c.env.ControlPlane.GetAPIServer()
	if err := killProcess("--cert-dir=" + c.certDir); err != nil {
		return fmt.Errorf("killing the kube-apiserver: %w", err)
	}
	if err := stopKilled(apiserver.Stop); err != nil {
		return fmt.Errorf("stopping the kube-apiserver: %w", err)
	}
	var duringErr error
	if during != nil {
		duringErr = during()
	}
	if err := apiserver.Start(); err != nil {
		return fmt.Errorf("starting the kube-apiserver again: %w", err)
	}
	return duringErr
}

// RestartEtcd kills etcd (SIGKILL, as a crash would), runs during (if not
// nil) while it is down, and starts it again on the same address with the
// same data; it returns once the new one is healthy. The kube-apiserver
// keeps running: its requests to etcd fail, or wait, until etcd is back.
func (c *Cluster) RestartEtcd(during func() error) error {
	etcd := c.env.ControlPlane.Etcd
	if err := killProcess("--data-dir=" + c.etcdDir); err != nil {
		return fmt.Errorf("killing etcd: %w", err)
	}
	if err := stopKilled(etcd.Stop); err != nil {
		return fmt.Errorf("stopping etcd: %w", err)
	}
	var duringErr error
	if during != nil {
		duringErr = during()
	}
	if err := etcd.Start(); err != nil {
		return fmt.Errorf("starting etcd again: %w", err)
	}
	return duringErr
}

// stopKilled calls the Stop of a process killProcess killed, which
// envtest may not know yet has exited: until it does, Stop signals the
// process and fails, as it is gone, without changing anything.
func stopKilled(stop func() error) error {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := stop()
		if !errors.Is(err, syscall.ESRCH) || time.Now().After(deadline) {
			return err
		}
	}
}

// killProcess kills the process whose command line has arg and waits
// until it is gone.
func killProcess(arg string) error {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err != nil || strings.Contains(string(stat), ") Z ") {
				return nil // gone, or a zombie until envtest reaps it
			}
		}
		return fmt.Errorf("process %d still runs 10s after SIGKILL", pid)
	}
	return fmt.Errorf("no process with %s on its command line", arg)
}

// etcd runs fn with a client of etcd.
func (c *Cluster) etcd(fn func(*clientv3.Client) error) error {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{c.env.ControlPlane.Etcd.URL.String()},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("connecting to etcd: %w", err)
	}
	defer func() { _ = cli.Close() }()
	return fn(cli)
}

// EtcdDelete deletes key from etcd directly, behind the API server's back:
// while the API server is down (see RestartAPIServer), this is a change that
// no watch served by a watch cache sees; a client learns of it by listing
// again. Keys are those of the API server's storage, such as
// /registry/pods/NAMESPACE/NAME.
func (c *Cluster) EtcdDelete(ctx context.Context, key string) error {
	return c.etcd(func(cli *clientv3.Client) error {
		resp, err := cli.Delete(ctx, key)
		if err != nil {
			return fmt.Errorf("deleting %s from etcd: %w", key, err)
		}
		if resp.Deleted != 1 {
			return fmt.Errorf("deleting %s from etcd: %d keys deleted, want 1", key, resp.Deleted)
		}
		return nil
	})
}

// EtcdGet reads the object stored at key, as EtcdDelete names keys, and
// decodes it into a client-go type such as *corev1.Pod. Its
// resourceVersion is empty: the API server sets it from etcd's revision.
func (c *Cluster) EtcdGet(ctx context.Context, key string) (runtime.Object, error) {
	var obj runtime.Object
	err := c.etcd(func(cli *clientv3.Client) error {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("reading %s from etcd: %w", key, err)
		}
		if len(resp.Kvs) != 1 {
			return fmt.Errorf("reading %s from etcd: %d keys, want 1", key, len(resp.Kvs))
		}
		obj, _, err = scheme.Codecs.UniversalDeserializer().Decode(resp.Kvs[0].Value, nil, nil)
		if err != nil {
			return fmt.Errorf("decoding %s: %w", key, err)
		}
		return nil
	})
	return obj, err
}

// EtcdPut stores obj, a client-go type such as *corev1.Pod, at key as the
// API server stores it (protobuf), behind its back: EtcdDelete's
// counterpart to create or change an object while the API server is down.
// The object's name and namespace must be those of the key; its
// resourceVersion must be empty.
func (c *Cluster) EtcdPut(ctx context.Context, key string, obj runtime.Object) error {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	var b bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &b); err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	return c.etcd(func(cli *clientv3.Client) error {
		if _, err := cli.Put(ctx, key, b.String()); err != nil {
			return fmt.Errorf("writing %s to etcd: %w", key, err)
		}
		return nil
	})
}

// etcdTxnOps is how many puts EtcdPutAll makes in one transaction: etcd's
// default --max-txn-ops is 128.
const etcdTxnOps = 100

// EtcdPutAll stores each object of objs at its key, as EtcdPut does, many
// to a transaction and a few transactions at a time: a way to load many
// objects in seconds where creating them through the API server takes
// minutes (and a second request for each status). The API server serves
// them as any others: its watch cache receives them from etcd's watch.
// They are stored as given: give each a UID and a creationTimestamp, as
// the API server would have.
func (c *Cluster) EtcdPutAll(ctx context.Context, objs map[string]runtime.Object) error {
	enc := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var batches [][]clientv3.Op
	for _, key := range slices.Sorted(maps.Keys(objs)) {
		obj := objs[key].DeepCopyObject()
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		var b bytes.Buffer
		if err := enc.Encode(obj, &b); err != nil {
			return fmt.Errorf("encoding %s: %w", key, err)
		}
		if len(batches) == 0 || len(batches[len(batches)-1]) == etcdTxnOps {
			batches = append(batches, nil)
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], clientv3.OpPut(key, b.String()))
	}
	return c.etcd(func(cli *clientv3.Client) error {
		var g errgroup.Group
		g.SetLimit(4)
		for _, ops := range batches {
			g.Go(func() error {
				if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
					return fmt.Errorf("writing %d objects to etcd: %w", len(ops), err)
				}
				return nil
			})
		}
		return g.Wait()
	})
}

// EtcdCompact compacts etcd's history at its current revision, as the API
// server does every 5 minutes with what is older than 5 minutes: a watch
// that resumes from an earlier revision gets 410 Gone, and its informer
// lists again. Only watches served by etcd itself see it, such as those of
// pod templates here (see Start): a watch cache serves its watches from the
// events it holds, whatever etcd compacted. It returns the revision.
func (c *Cluster) EtcdCompact(ctx context.Context) (int64, error) {
	var rev int64
	err := c.etcd(func(cli *clientv3.Client) error {
		resp, err := cli.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return fmt.Errorf("reading etcd's revision: %w", err)
		}
		rev = resp.Header.Revision
		if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
			return fmt.Errorf("compacting etcd at revision %d: %w", rev, err)
		}
		return nil
	})
	return rev, err
}

// APIServerFlags are kube-apiserver flags that Start adds, set by a
// package's TestMain before Main: --runtime-config to leave out an API, as
// an older server lacks it, say.
var APIServerFlags map[string]string

// Main runs a test package against a fresh control plane, stored in *c for
// the tests, after running each setup function. It points KUBECONFIG at the
// test cluster so nothing can reach the developer's own cluster. Use it as:
//
//	func TestMain(m *testing.M) { os.Exit(framework.Main(m, &cluster)) }
func Main(m *testing.M, c **Cluster, setup ...func(*Cluster) error) int {
	return run(m, c, Start, setup...)
}

func run(m *testing.M, c **Cluster, start func() (*Cluster, error), setup ...func(*Cluster) error) int {
	cl, err := start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	*c = cl
	err = errors.Join(
		os.Setenv("KUBECONFIG", cl.Kubeconfig),
		// Nor can a developer's own config file change what tests see.
		os.Setenv("XDG_CONFIG_HOME", cl.Dir),
		// Discovery is cached by host and port, which the next package's
		// cluster may reuse: each cluster has a cache of its own.
		os.Setenv("KUBECACHEDIR", filepath.Join(cl.Dir, "cache")),
	)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		_ = cl.Stop()
		return 1
	}
	for _, s := range setup {
		if err := s(cl); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: setup: %v\n", err)
			_ = cl.Stop()
			return 1
		}
	}
	code := m.Run()
	if err := cl.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping the control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Kubectl runs the kubectl the project builds against the admin kubeconfig
// (or, when args include --kubeconfig, the one given) and returns its
// combined output.
func (c *Cluster) Kubectl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.BinDir, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// LoadWorkload returns a setup function for Main that loads the sample
// workload described by spec.
func LoadWorkload(spec workload.Spec) func(*Cluster) error {
	return func(c *Cluster) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := workload.Load(ctx, c.Config, spec, nil); err != nil {
			return fmt.Errorf("loading the workload: %w", err)
		}
		return nil
	}
}

// SilentServer listens on loopback, accepts connections and never answers
// them, until the test ends. It returns its address (host:port).
func SilentServer(t testing.TB) string {
	t.Helper()
	addr, _ := SilentServerCounting(t)
	return addr
}

// SilentServerCounting is SilentServer that also returns a function
// counting the connections accepted so far. A TLS client never gets past
// its handshake with it, so each request it makes opens a connection.
func SilentServerCounting(t testing.TB) (addr string, accepted func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex // guards conns
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}
}

// ClosedPort returns a loopback address where nothing listens.
func ClosedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// SyncBuffer is a bytes.Buffer safe for a command writing and a test
// reading at the same time.
type SyncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
