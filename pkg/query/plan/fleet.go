package plan

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// Member is one cluster of a query over several: its context's name, how
// to reach it and the request compiled for it. Each cluster has a plan of
// its own: its programs read get() and byIndex() from that cluster's
// caches, and its variable cluster is the member's name.
type Member struct {
	Name string
	Conn Conn
	Plan *Plan
}

// MemberError is why one cluster of a query over several did not answer.
type MemberError struct {
	Cluster string
	Err     error
}

func (e MemberError) Error() string { return fmt.Sprintf("cluster %q: %v", e.Cluster, e.Err) }

// PartialError is the error of an answer over several clusters some of
// which did not answer: the answer of the others was printed.
type PartialError struct {
	// Failed are the clusters that did not answer, in the members' order.
	Failed []MemberError
	// Clusters is the number of clusters asked.
	Clusters int
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%d of %d clusters did not answer: the answer is from the others", len(e.Failed), e.Clusters)
}

// memberAnswer is what one cluster answered.
type memberAnswer struct {
	m       Member
	caches  *Caches
	results []*query.Result
	// absent are the resource types the cluster does not have.
	absent []string
	err    error
}

// ExecuteFleet answers the query of the members' plans over every member:
// it fills their caches in parallel, each bounded by its own
// Request.SyncTimeout, answers from each and prints one answer merged
// across them, on out, as Execute prints one cluster's. Objects carry
// their cluster (see query.PrintOptions.Clusters): tables begin with
// CLUSTER; the default order is cluster, then namespace and name;
// --sort-by, --limit, --count and --group-by apply to the merged answer.
//
// A resource type that a cluster does not have (a CRD installed in some
// clusters only) is left out there, with a warning on errOut. A cluster
// that cannot answer (unreachable, forbidden, a sync timeout) does not
// stop the others: a warning on errOut names it and the cause, as explain
// (given the cluster's name) words it, and once the others' answer is
// printed ExecuteFleet returns a *PartialError. When no cluster answers,
// it prints nothing and returns: the one cluster's error; the first
// *query.UsageError when the request is wrong in every cluster, as when
// none has a resource type; or else an error naming each cluster's.
func ExecuteFleet(ctx context.Context, members []Member, out, errOut io.Writer, explain func(cluster string, err error) error) error {
	for _, m := range members {
		m.Plan.stopAtCostLimit = true
	}
	answers := fillFleet(ctx, members, errOut, FillOptions{}, true)
	answered, failed, err := sortOut(answers, errOut, explain)
	if err != nil {
		return err
	}
	if err := answered[0].m.Plan.PrintFleet(ctx, clusterAnswers(answered), out, errOut); err != nil {
		return err
	}
	if len(failed) > 0 {
		return &PartialError{Failed: failed, Clusters: len(members)}
	}
	return nil
}

// Filled is a cluster of a query over several whose caches are filled:
// its plan answers from them, and so do the plans Plan.With makes of it.
type Filled struct {
	Name string
	Plan *Plan
}

// FillFleet fills the caches of every member in parallel with opts, each
// within its own Request.SyncTimeout, leaving out the resource types a
// cluster does not have, as ExecuteFleet does; the warnings, and those
// naming the clusters that could not be filled, go to errOut. It returns
// the clusters filled, in the members' order, and the errors of the
// others, as explain words them; when none is filled, or no cluster has a
// resource type, it returns the error ExecuteFleet would.
func FillFleet(ctx context.Context, members []Member, errOut io.Writer, opts FillOptions, explain func(cluster string, err error) error) ([]Filled, []MemberError, error) {
	answered, failed, err := sortOut(fillFleet(ctx, members, errOut, opts, false), errOut, explain)
	if err != nil {
		return nil, nil, err
	}
	filled := make([]Filled, 0, len(answered))
	for _, a := range answered {
		filled = append(filled, Filled{Name: a.m.Name, Plan: a.m.Plan})
	}
	return filled, failed, nil
}

// AnswerFleet answers the query of each filled cluster's plan from its
// caches and prints the answer merged across them, as ExecuteFleet does.
func AnswerFleet(ctx context.Context, filled []Filled, out, errOut io.Writer) error {
	return answerFleet(ctx, filled, out, errOut, errOut)
}

// answerFleet is AnswerFleet with the warnings of evaluations written to
// warnings, apart from what printing says on errOut.
func answerFleet(ctx context.Context, filled []Filled, out, errOut, warnings io.Writer) error {
	answers := make([]memberAnswer, len(filled))
	for i, f := range filled {
		answers[i] = memberAnswer{m: Member{Name: f.Name, Plan: f.Plan}, caches: f.Plan.caches}
		answerFilled(ctx, &answers[i], ClusterWarnings(warnings, f.Name))
		if answers[i].err != nil {
			return answers[i].err
		}
	}
	return answers[0].m.Plan.PrintFleet(ctx, clusterAnswers(answers), out, errOut)
}

// ExecuteWatchFleet answers like ExecuteFleet, then keeps every cluster's
// caches following its cluster and prints the merged answer again
// whenever an event of any cluster changed it, as ExecuteWatch does for
// one. A cluster whose RBAC denies the watch while allowing the list is
// named in a warning once, as watch names it, and the others go on. When
// ctx ends it returns nil, or a *PartialError naming the clusters that
// could not be filled or watched.
func ExecuteWatchFleet(ctx context.Context, members []Member, out, errOut io.Writer, debounce time.Duration, explain func(cluster string, err error) error) error {
	if explain == nil {
		explain = func(_ string, err error) error { return err }
	}
	for _, m := range members {
		m.Plan.watching = true
	}
	errOut = LockedWriter(errOut)
	filled, failed, err := FillFleet(ctx, members, errOut, FillOptions{Lasting: true}, explain)
	if err != nil {
		return err
	}
	var informers []*factory.Informer
	denied := make([]error, len(filled))
	var wg sync.WaitGroup
	watching, stop := context.WithCancel(ctx)
	defer func() {
		stop()
		wg.Wait()
	}()
	for i, f := range filled {
		c := f.Plan.caches
		if c == nil {
			continue
		}
		informers = append(informers, c.factory.Informers()...)
		wg.Go(func() {
			select {
			case <-watching.Done():
			case <-c.factory.WatchDenied():
				denied[i] = explain(f.Name, c.factory.WatchDeniedError())
				_, _ = fmt.Fprintf(errOut, "warning: cluster %q: %v\n", f.Name, denied[i])
			}
		})
	}
	render := func(warnings io.Writer) (text, said string, err error) {
		var b, e bytes.Buffer
		err = answerFleet(ctx, filled, &b, &e, warnings)
		return b.String(), e.String(), err
	}
	if err := watchAnswers(ctx, informers, nil, render, out, errOut, debounce); err != nil {
		return err
	}
	stop()
	wg.Wait()
	for i, err := range denied {
		if err != nil {
			failed = append(failed, MemberError{Cluster: filled[i].Name, Err: err})
		}
	}
	if len(failed) > 0 {
		return &PartialError{Failed: failed, Clusters: len(members)}
	}
	return nil
}

// fillFleet fills every member's caches in parallel and, with answer,
// answers from them.
func fillFleet(ctx context.Context, members []Member, errOut io.Writer, opts FillOptions, answer bool) []memberAnswer {
	answers := make([]memberAnswer, len(members))
	warn := LockedWriter(errOut)
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() {
			w := ClusterWarnings(warn, m.Name)
			answers[i] = fillMember(ctx, m, w, opts)
			if answer && answers[i].err == nil {
				answerFilled(ctx, &answers[i], w)
			}
		})
	}
	wg.Wait()
	return answers
}

// sortOut tells the clusters that answered from those that did not,
// warning on errOut of the types some lack and of the clusters that did
// not answer; when none answered, or no cluster has a type, it returns the
// error to return instead.
func sortOut(answers []memberAnswer, errOut io.Writer, explain func(cluster string, err error) error) ([]memberAnswer, []MemberError, error) {
	if explain == nil {
		explain = func(_ string, err error) error { return err }
	}
	if err := absentEverywhere(answers); err != nil {
		return nil, nil, err
	}
	var answered []memberAnswer
	var failed []MemberError
	for _, a := range answers {
		for _, t := range a.absent {
			_, _ = fmt.Fprintf(errOut, "warning: cluster %q has no resource type %q: no objects of it there\n", a.m.Name, t)
		}
		if a.err != nil {
			failed = append(failed, MemberError{Cluster: a.m.Name, Err: explain(a.m.Name, a.err)})
			continue
		}
		answered = append(answered, a)
	}
	if len(answered) == 0 {
		return nil, nil, Unanswered(failed, query.IsUsageError)
	}
	for _, f := range failed {
		_, _ = fmt.Fprintf(errOut, "warning: %v\n", f)
	}
	return answered, failed, nil
}

// fillMember fills the member's caches with opts, leaving out the
// resource types the cluster does not have.
func fillMember(ctx context.Context, m Member, errOut io.Writer, opts FillOptions) memberAnswer {
	a := memberAnswer{m: m}
	p := m.Plan
	if a.absent, a.err = LackedTypes(m.Conn.Resolver, ArgTypes(p.req.Resources)); a.err != nil {
		return a
	}
	if len(a.absent) > 0 {
		args := WithoutTypes(p.req.Resources, a.absent)
		if len(args) == 0 {
			return a
		}
		np, err := p.With(func(r *Request) { r.Resources = args })
		if err != nil {
			a.err = err
			return a
		}
		p = np
	}
	c, err := p.Fill(ctx, m.Conn, errOut, opts)
	if err != nil {
		a.err = err
		return a
	}
	a.caches, a.m.Plan = c, p
	return a
}

// answerFilled answers the query of a's plan from its filled caches (none
// when the cluster has none of the types), warning on errOut of the
// expressions that failed on some objects; the objects name the cluster.
func answerFilled(ctx context.Context, a *memberAnswer, errOut io.Writer) {
	if a.caches == nil {
		return
	}
	results, err := a.m.Plan.results(ctx, a.caches.queried)
	if err != nil {
		a.err = err
		return
	}
	for _, w := range WarningLines(a.caches.queried, results) {
		_, _ = fmt.Fprintln(errOut, w)
	}
	for _, r := range results {
		r.Warnings = nil
	}
	a.results = results
}

// clusterAnswers returns what the clusters that answered answered.
func clusterAnswers(answered []memberAnswer) []ClusterAnswer {
	out := make([]ClusterAnswer, 0, len(answered))
	for _, a := range answered {
		ca := ClusterAnswer{Name: a.m.Name, Caches: a.caches, Results: a.results}
		if a.caches != nil {
			ca.Queried = a.caches.queried
		}
		out = append(out, ca)
	}
	return out
}

// ArgTypes returns the resource types of a query's arguments (see
// splitArgs): those of TYPE/NAME arguments, or else of the first,
// TYPE[,TYPE...].
func ArgTypes(args []string) []string {
	var types []string
	if len(args) > 0 && !strings.Contains(args[0], "/") {
		for t := range strings.SplitSeq(args[0], ",") {
			if t = strings.TrimSpace(t); t != "" {
				types = append(types, t)
			}
		}
		return types
	}
	for _, a := range args {
		if t, _, ok := strings.Cut(a, "/"); ok {
			types = append(types, strings.TrimSpace(t))
		}
	}
	return types
}

// WithoutTypes returns the arguments args without the types absent: none
// when no type is left.
func WithoutTypes(args, absent []string) []string {
	if len(args) > 0 && !strings.Contains(args[0], "/") {
		kept := slices.DeleteFunc(ArgTypes(args[:1]), func(t string) bool { return slices.Contains(absent, t) })
		if len(kept) == 0 {
			return nil
		}
		return append([]string{strings.Join(kept, ",")}, args[1:]...)
	}
	return slices.DeleteFunc(slices.Clone(args), func(a string) bool {
		t, _, _ := strings.Cut(a, "/")
		return slices.Contains(absent, strings.TrimSpace(t))
	})
}

// ClusterAnswer is one cluster's answer to a query over several: the
// cluster's name, the caches it was answered from (nil when the cluster
// has none of the types queried), and the informers queried there with
// their results, in the same order.
type ClusterAnswer struct {
	Name    string
	Caches  *Caches
	Queried []*factory.Informer
	Results []*query.Result
}

// PrintFleet prints the answers of several clusters, in the clusters'
// order, merged into one answer to p's request as ExecuteFleet prints it:
// the answers' items are marked with their cluster (see
// query.PrintOptions.Clusters, which p's request sets for a CLUSTER
// column), the answers of one resource type are merged, and --sort-by,
// --limit, --count and --group-by apply to the merged set. answers holds
// at least one answer.
func (p *Plan) PrintFleet(ctx context.Context, answers []ClusterAnswer, out, errOut io.Writer) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	// The answers by resource type, in the order types first appear.
	var gvrs []schema.GroupVersionResource
	infs := map[schema.GroupVersionResource]*factory.Informer{}
	byType := map[schema.GroupVersionResource][]*query.Result{}
	merged := &Caches{}
	for _, a := range answers {
		if a.Caches == nil {
			continue // every type absent there
		}
		for i, inf := range a.Queried {
			gvr := inf.Resource.GVR
			if _, seen := infs[gvr]; !seen {
				gvrs = append(gvrs, gvr)
				infs[gvr] = inf
			}
			r := a.Results[i]
			for j := range r.Items {
				r.Items[j].Cluster = a.Name
			}
			byType[gvr] = append(byType[gvr], r)
			if cols := a.Caches.printerColumns(gvr); cols != nil {
				if merged.crdColumns == nil {
					merged.crdColumns = map[schema.GroupVersionResource][]query.PrinterColumn{}
				}
				merged.crdColumns[gvr] = cols
			}
		}
	}
	var all []*query.Result
	var allInfs, queried []*factory.Informer
	for _, gvr := range gvrs {
		all = append(all, byType[gvr]...)
		allInfs = append(allInfs, slices.Repeat([]*factory.Informer{infs[gvr]}, len(byType[gvr]))...)
		queried = append(queried, infs[gvr])
	}
	if len(queried) == 0 {
		// No cluster has any of the types: kubectl's message.
		return p.Print(out, errOut, merged, nil, []*query.Result{{Mode: query.ModeObjects}})
	}
	if p.req.Count || p.aggregated() {
		// Print adds up counts and merges groups and aggregates over any
		// number of answers.
		return p.Print(out, errOut, merged, allInfs, all)
	}
	results := make([]*query.Result, len(gvrs))
	var notFound NotFoundError
	for t, gvr := range gvrs {
		results[t] = mergeClusters(byType[gvr], p.req.SortBy != "", p.descending)
		for _, name := range results[t].Missing {
			notFound.Missing = append(notFound.Missing, Missing{Resource: gvr.GroupResource(), Name: name})
		}
	}
	query.LimitMerged(results, p.req.Limit, p.req.SortBy != "", p.descending)
	if err := p.Print(out, errOut, merged, queried, results); err != nil {
		return err
	}
	if len(notFound.Missing) > 0 {
		return &notFound
	}
	return nil
}

// mergeClusters merges the answers of several clusters for one resource
// type: in the order of the sort key (ties by namespace and name, then in
// the clusters' order), or else cluster by cluster, each in namespace and
// name order (reversed when descending). A named object is missing when
// no cluster has it.
func mergeClusters(results []*query.Result, sorted, descending bool) *query.Result {
	m := &query.Result{Mode: query.ModeObjects}
	if len(results) > 0 {
		m.ColumnNames, m.Indexers = results[0].ColumnNames, results[0].Indexers
	}
	missing := map[string]int{}
	for _, r := range results {
		m.Matched += r.Matched
		for _, name := range r.Missing {
			missing[name]++
		}
	}
	if !sorted && descending {
		results = slices.Clone(results)
		slices.Reverse(results)
	}
	for _, ref := range query.MergedOrder(results, sorted, descending) {
		m.Items = append(m.Items, results[ref.Result].Items[ref.Item])
	}
	if len(results) > 0 {
		for _, name := range results[0].Missing {
			if missing[name] == len(results) {
				m.Missing = append(m.Missing, name)
			}
		}
	}
	return m
}

// LackedTypes returns those of types that r's cluster does not have. A
// type it cannot resolve for another reason is an error, returned with
// the types found lacking before it.
func LackedTypes(r *factory.Resolver, types []string) ([]string, error) {
	var absent []string
	for _, t := range types {
		if _, err := r.ResolveOne(t); err != nil {
			if !factory.IsUnknownResource(err) {
				return absent, err
			}
			absent = append(absent, t)
		}
	}
	return absent, nil
}

// LackedByAll returns the usage error of a resource type that every
// cluster lacks, absent holding the types each lacks (see LackedTypes), as
// one cluster's query reports a type its server does not have; nil when
// there is none: the first such type in the first cluster's order.
func LackedByAll(absent [][]string) error {
	if len(absent) == 0 {
		return nil
	}
	for _, t := range absent[0] {
		if !slices.ContainsFunc(absent[1:], func(a []string) bool { return !slices.Contains(a, t) }) {
			return &query.UsageError{Err: fmt.Errorf("the server doesn't have a resource type %q in any of the clusters", t)}
		}
	}
	return nil
}

// absentEverywhere is LackedByAll over the answers. When a cluster did not
// answer, whether it has the type is not known: nil.
func absentEverywhere(answers []memberAnswer) error {
	absent := make([][]string, len(answers))
	for i, a := range answers {
		if a.err != nil {
			return nil
		}
		absent[i] = a.absent
	}
	return LackedByAll(absent)
}

// Unanswered is the error of a query over several clusters none of which
// answered (failed holds at least one): the one cluster's error; the
// first when every cluster's is alike by one of alike (a mistake of the
// request, say, which has an exit code of its own); else NoAnswer.
func Unanswered(failed []MemberError, alike ...func(error) bool) error {
	if len(failed) == 1 {
		return failed[0].Err
	}
	for _, same := range alike {
		if !slices.ContainsFunc(failed, func(m MemberError) bool { return !same(m.Err) }) {
			return failed[0].Err
		}
	}
	return NoAnswer(failed)
}

// NoAnswer is the error of a query over several clusters none of which
// answered: one line per cluster's error.
func NoAnswer(errs []MemberError) error {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = "  " + e.Error()
	}
	return fmt.Errorf("no cluster answered:\n%s", strings.Join(lines, "\n"))
}

// LockedWriter returns a writer that serialises the writes of several
// goroutines (the clusters') to w: each write reaches w whole.
func LockedWriter(w io.Writer) io.Writer { return &lockedWriter{w: w} }

// ClusterWarnings returns a writer of whole lines to w, each naming
// cluster: "warning: cluster east: …" for a warning, "cluster east: …"
// for any other line. It is for one goroutine.
func ClusterWarnings(w io.Writer, cluster string) io.Writer {
	return &prefixWriter{w: w, prefix: "cluster " + cluster + ": "}
}

// lockedWriter serialises the writes of the clusters' goroutines.
type lockedWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter writes each whole line written to it to w, after prefix
// and after "warning: " when the line begins with it, so that a warning
// names its cluster: "warning: cluster a: …".
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := slices.Index(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(p.buf[:i+1])
		p.buf = p.buf[i+1:]
		if rest, ok := strings.CutPrefix(line, "warning: "); ok {
			line = "warning: " + p.prefix + rest
		} else {
			line = p.prefix + line
		}
		if _, err := io.WriteString(p.w, line); err != nil {
			return len(b), err
		}
	}
}
