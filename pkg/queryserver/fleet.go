package queryserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// Asked is a request as the server hands it to its [Answerer]: the query,
// the clusters it reads, and how to decide what its caller may read.
type Asked struct {
	Request plan.Request
	// Clusters are the clusters the query names, by their context names
	// on the server; AllClusters asks every cluster the server holds.
	// Neither: the home cluster.
	Clusters    []string
	AllClusters bool
	// May decides with the home cluster whether the caller may list a
	// resource there.
	May Access
	// MayReadAll decides with the home cluster whether the caller may do
	// everything there (every verb on every resource of every group, as
	// cluster-admin may): only such callers read the other clusters.
	MayReadAll func(ctx context.Context) (bool, error)
	// Budget, when not nil, is charged every evaluation.
	Budget *indexers.Budget
}

// Fleet is the caches of a query server: those of its home cluster, which
// authenticates and authorizes callers, and of any other clusters it
// serves. It answers a query over one cluster as [Served.Answer] does, and
// over several (Asked.Clusters, Asked.AllClusters) merged as a query with
// --context a,b answers from local caches: a CLUSTER column, --sort-by,
// --limit, --count and --group-by over the merged set. It is an
// [Answerer].
//
// The authorization model: the home cluster decides everything. Its own
// objects are read as the home cluster allows the caller to list them
// (see Served.Answer); the objects of the other clusters only by callers
// the home cluster allows every verb on every resource (cluster-admin),
// and then all of them, read-only. The server's own credentials read
// every cluster; callers never present credentials to the others.
type Fleet struct {
	// names are the clusters' names, in the order given; the home
	// cluster's is first among them or not, as given.
	names []string
	home  string
	// served are the clusters whose caches are filled, by name.
	served map[string]*Served
	// unserved are the clusters whose caches could not be filled, by
	// name, with why.
	unserved map[string]error
}

// FleetMember is a cluster a query server serves: its context's name, its
// connection, and what to serve there (see Serve).
type FleetMember struct {
	Name    string
	Conn    plan.Conn
	Request plan.Request
}

// UnservedError is a query reading a cluster whose caches the server
// could not fill when it started.
type UnservedError struct {
	Cluster string
	Err     error
}

func (e *UnservedError) Error() string {
	return fmt.Sprintf("this server could not fill its caches of cluster %q when it started (%v): restart it once it can reach the cluster", e.Cluster, e.Err)
}

func (e *UnservedError) Unwrap() error { return e.Err }

// ClusterForbiddenError is a query reading a cluster other than the home
// cluster by a caller whom the home cluster does not allow everything.
type ClusterForbiddenError struct {
	Cluster, Home string
	// User names the caller in the message; "" says "the caller".
	User string
}

func (e *ClusterForbiddenError) Error() string {
	return fmt.Sprintf("cluster %q is %s", e.Cluster, e.reason())
}

// reason says why, without naming the cluster.
func (e *ClusterForbiddenError) reason() string {
	who := "the caller"
	if e.User != "" {
		who = fmt.Sprintf("User %q", e.User)
	}
	return fmt.Sprintf("forbidden: %s may read the clusters other than this server's home cluster %q only when %q allows it every verb on every resource (cluster-admin)", who, e.Home, e.Home)
}

// unnamed is a ClusterForbiddenError worded for a warning that names the
// cluster already.
type unnamed struct{ *ClusterForbiddenError }

func (u unnamed) Error() string { return u.reason() }
func (u unnamed) Unwrap() error { return u.ClusterForbiddenError }

// NewFleet returns the Fleet of one cluster, home, whose caches are
// filled.
func NewFleet(home string, s *Served) *Fleet {
	return &Fleet{names: []string{home}, home: home, served: map[string]*Served{home: s}, unserved: map[string]error{}}
}

// ServeFleet fills the caches of every member in parallel, as Serve fills
// one cluster's, and returns once each has synced or failed. home names
// the member that authenticates and authorizes callers: when its caches
// cannot be filled, ServeFleet returns its error as it is, for the caller
// to word. Another member that
// cannot be filled is logged on errOut, as explain words the error, and
// left out: queries reading it are told so. A resource type that a member
// lacks (a CRD installed in some clusters only) is served in the others,
// with a warning; one that none has is an error. Each member's warnings
// name it.
func ServeFleet(ctx context.Context, env *indexers.Env, home string, members []FleetMember, errOut io.Writer, explain func(cluster string, err error) error) (*Fleet, error) {
	if explain == nil {
		explain = func(_ string, err error) error { return err }
	}
	f := &Fleet{home: home, served: map[string]*Served{}, unserved: map[string]error{}}
	served := make([]*Served, len(members))
	absent := make([][]string, len(members))
	errs := make([]error, len(members))
	warn := plan.LockedWriter(errOut)
	var wg sync.WaitGroup
	for i, m := range members {
		f.names = append(f.names, m.Name)
		wg.Go(func() {
			w := plan.ClusterWarnings(warn, m.Name)
			req := m.Request
			req.Progress = nil
			absent[i], errs[i] = plan.LackedTypes(m.Conn.Resolver, plan.ArgTypes(req.Resources))
			if errs[i] != nil {
				absent[i] = nil
				return
			}
			if len(absent[i]) > 0 {
				if req.Resources = plan.WithoutTypes(req.Resources, absent[i]); len(req.Resources) == 0 {
					return
				}
			}
			served[i], errs[i] = Serve(ctx, env, m.Conn, req, w)
		})
	}
	wg.Wait()
	// Whether a cluster that could not tell has a type is not known.
	if !slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		if err := plan.LackedByAll(absent); err != nil {
			return nil, err
		}
	}
	for i, m := range members {
		for _, t := range absent[i] {
			_, _ = fmt.Fprintf(errOut, "warning: cluster %q has no resource type %q: no objects of it served there\n", m.Name, t)
		}
		switch {
		case errs[i] != nil && m.Name == home:
			return nil, errs[i]
		case errs[i] != nil:
			f.unserved[m.Name] = explain(m.Name, errs[i])
			_, _ = fmt.Fprintf(errOut, "warning: %v\n", &UnservedError{Cluster: m.Name, Err: f.unserved[m.Name]})
		case served[i] != nil:
			f.served[m.Name] = served[i]
		default:
			// Every type absent there: it answers with no objects.
			f.served[m.Name] = &Served{env: env, conn: m.Conn, names: newNameCache(m.Conn.Resolver)}
		}
	}
	return f, nil
}

// Clusters returns the names of the clusters served and of those that
// could not be, in the order given.
func (f *Fleet) Clusters() (served, unserved []string) {
	for _, n := range f.names {
		if f.served[n] != nil {
			served = append(served, n)
		} else {
			unserved = append(unserved, n)
		}
	}
	return served, unserved
}

// KeepAnswers has each served cluster keep the -o json text of the
// objects its answers print, within the room of c (see
// Served.KeepAnswers). Answers over several clusters, whose objects carry
// their cluster's name, encode them each time.
func (f *Fleet) KeepAnswers(c *AnswerCache) error {
	for _, name := range f.names {
		if s := f.served[name]; s != nil {
			if err := s.KeepAnswers(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// OnNameCacheFull has full called once per served cluster, the first
// time its cache of resource type names has no room for a name that
// resolves (it keeps 1,024 of them); such names are then resolved on each
// request. Call it before the first answer.
func (f *Fleet) OnNameCacheFull(full func()) {
	for _, name := range f.names {
		if s := f.served[name]; s != nil {
			s.names.full = full
		}
	}
}

// Resources returns the resources served, in any cluster: in the order
// of the clusters, then of each one's resources.
func (f *Fleet) Resources() []factory.Resource {
	var out []factory.Resource
	for _, n := range f.names {
		if s := f.served[n]; s != nil {
			for _, r := range s.Resources() {
				if !slices.ContainsFunc(out, func(o factory.Resource) bool { return o.GVR == r.GVR }) {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// Synced reports whether the caches of every cluster served have synced.
func (f *Fleet) Synced() bool {
	for _, s := range f.served {
		if !s.Synced() {
			return false
		}
	}
	return true
}

// WatchDenied returns Served.WatchDenied's lines of every cluster, each
// named by its cluster when several are served.
func (f *Fleet) WatchDenied() []string {
	var out []string
	for _, n := range f.names {
		s := f.served[n]
		if s == nil {
			continue
		}
		for _, line := range s.WatchDenied() {
			if len(f.names) > 1 {
				line = n + ": " + line
			}
			out = append(out, line)
		}
	}
	return out
}

// Answer answers a, printing the answer on out and warnings on errOut.
// Over one cluster it answers as Served.Answer does. Over several (or
// AllClusters) it answers from each and prints the answers merged, with
// the clusters' warnings naming them; a cluster that cannot answer (not
// served, forbidden to the caller, a mistake of the request there) is
// named in a warning and, once the others' answer is printed, Answer
// returns a *plan.PartialError. When none answers, it returns the one
// cluster's error, or the first when all are forbidden or mistakes, or
// else an error naming each.
func (f *Fleet) Answer(a Asked, out, errOut io.Writer) error {
	names, merged, err := f.selected(a)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if a.Budget != nil {
		ctx = a.Budget.Context()
	}
	// Whether the caller may read the clusters other than home: asked
	// once, when the query reads one.
	var readAll *bool
	mayRead := func(name string) error {
		if name == f.home {
			return nil
		}
		if readAll == nil {
			if a.MayReadAll == nil {
				return &ClusterForbiddenError{Cluster: name, Home: f.home}
			}
			ok, err := a.MayReadAll(ctx)
			if err != nil {
				return err
			}
			readAll = &ok
		}
		if !*readAll {
			return &ClusterForbiddenError{Cluster: name, Home: f.home}
		}
		return nil
	}
	if !merged {
		name := names[0]
		if err := f.unservedError(name); err != nil {
			return err
		}
		if err := mayRead(name); err != nil {
			return err
		}
		return f.served[name].Answer(a.Request, f.access(name, a.May), a.Budget, out, errOut)
	}
	req := printedForOthers(a.Request, a.Budget)
	req.Print.Clusters = true
	var (
		answers []plan.ClusterAnswer
		first   *plan.Plan
		env     *indexers.Env
		failed  []plan.MemberError
		absent  [][]string
	)
	for _, name := range names {
		s := f.served[name]
		err := f.unservedError(name)
		if err == nil {
			err = mayRead(name)
		}
		var r *reply
		var lacks []string
		if err == nil {
			r, lacks, err = s.answerWithout(req, f.access(name, a.May), a.Budget)
		}
		if err != nil {
			if indexers.IsBudgetStop(err) || !isMemberError(err) {
				return err
			}
			var forbidden *ClusterForbiddenError
			if errors.As(err, &forbidden) {
				err = unnamed{forbidden}
			}
			failed = append(failed, plan.MemberError{Cluster: name, Err: err})
			continue
		}
		absent = append(absent, lacks)
		env = s.env
		w := plan.ClusterWarnings(errOut, name)
		for _, t := range lacks {
			_, _ = fmt.Fprintf(errOut, "warning: cluster %q has no resource type %q: no objects of it there\n", name, t)
		}
		ans := plan.ClusterAnswer{Name: name}
		if r != nil {
			for _, l := range r.warnings {
				_, _ = fmt.Fprintln(w, l)
			}
			ans.Caches, ans.Queried, ans.Results = s.caches, r.queried, r.results
			if first == nil {
				first = r.plan
			}
		}
		answers = append(answers, ans)
	}
	if len(answers) == 0 {
		return plan.Unanswered(failed, isForbidden, query.IsUsageError)
	}
	if len(failed) == 0 {
		if err := plan.LackedByAll(absent); err != nil {
			return err
		}
	}
	for _, fe := range failed {
		_, _ = fmt.Fprintf(errOut, "warning: %v\n", fe)
	}
	if first == nil {
		// No cluster answering has any of the types: printed as one
		// with none of their objects.
		if first, err = plan.Compile(env, req); err != nil {
			return err
		}
	}
	if err := first.PrintFleet(ctx, answers, out, errOut); err != nil {
		return err
	}
	if len(failed) > 0 {
		return &plan.PartialError{Failed: failed, Clusters: len(names)}
	}
	return nil
}

// selected returns the clusters a asks for, and whether their answers are
// merged (several clusters, or all of them, even one).
func (f *Fleet) selected(a Asked) ([]string, bool, error) {
	if a.AllClusters {
		if len(a.Clusters) > 0 {
			return nil, false, &query.UsageError{Err: errors.New("name clusters or ask for all of them, not both")}
		}
		return f.names, true, nil
	}
	var names []string
	for _, n := range a.Clusters {
		if !slices.Contains(f.names, n) {
			return nil, false, &query.UsageError{Err: fmt.Errorf("this server serves no cluster %q; it serves %s", n, strings.Join(f.names, ", "))}
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return []string{f.home}, false, nil
	}
	return names, len(names) > 1, nil
}

func (f *Fleet) unservedError(name string) error {
	if err := f.unserved[name]; err != nil {
		return &UnservedError{Cluster: name, Err: err}
	}
	return nil
}

// access is what the caller may read in cluster name: as the home cluster
// allows it there; everything elsewhere, once mayRead has allowed it.
func (f *Fleet) access(name string, may Access) Access {
	if name == f.home {
		return may
	}
	return func(context.Context, factory.Resource, string) (bool, error) { return true, nil }
}

// isMemberError reports whether err is why one cluster of several could
// not answer, leaving the others' answer: a cluster not served or
// forbidden, or a mistake of the request there. Anything else fails the
// whole request.
func isMemberError(err error) bool {
	var unserved *UnservedError
	return errors.As(err, &unserved) || isForbidden(err) || query.IsUsageError(err)
}

// isForbidden reports whether err is a caller's lack of permission, in
// the home cluster or for another.
func isForbidden(err error) bool {
	var f *ForbiddenError
	var c *ClusterForbiddenError
	return errors.As(err, &f) || errors.As(err, &c)
}

// namesCached returns the number of resource type names the served
// clusters keep resolved.
func (f *Fleet) namesCached() int {
	n := 0
	for _, s := range f.served {
		n += s.names.len()
	}
	return n
}
