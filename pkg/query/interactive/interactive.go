package interactive

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// LineReader reads a session's input one line at a time, without the line
// end; io.EOF ends the session. A line editor such as
// github.com/peterh/liner's *State implements it.
type LineReader interface {
	Prompt(prompt string) (string, error)
}

// NewLineReader returns a LineReader that reads lines from r as they are,
// without editing, and writes no prompt.
func NewLineReader(r io.Reader) LineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	return &plainLines{sc: sc}
}

type plainLines struct{ sc *bufio.Scanner }

func (l *plainLines) Prompt(string) (string, error) {
	if l.sc.Scan() {
		return l.sc.Text(), nil
	}
	if err := l.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

// Options configures a Session.
type Options struct {
	// Prompt is passed to the LineReader before each line, and a short
	// greeting goes to the error stream when the caches have synced.
	// Default "": no prompt and no greeting, for input that is not typed.
	Prompt string
	// Samples is the number of cached objects per resource whose fields
	// Complete offers. Default 200.
	Samples int
}

// Session answers queries typed one line at a time from caches filled
// once. A line that does not start with ":" is a CEL predicate that
// replaces the filter (--where); a line starting with ":" is a command (see
// :help). Each change prints the new answer; a mistake prints its message
// and leaves the query as it was. The caches keep following the cluster,
// so the same query typed again may answer differently.
type Session struct {
	out, errOut io.Writer
	opts        Options

	// lineMu guards run, line and stopLine: Interrupt runs on any
	// goroutine.
	lineMu sync.Mutex
	// line is the context of the work on the line Run is handling, which
	// stopLine ends, and run the context Run was called with; nil when Run
	// handles no line.
	run, line context.Context
	stopLine  context.CancelFunc

	// mu guards plan, listOutput and samples: Complete runs on the
	// goroutine that reads lines.
	mu   sync.Mutex
	plan *plan.Plan
	// fleet are the clusters of a session over several, each with its
	// current plan; plan is then that of the first with caches, which
	// completion and :resources read. Nil over one cluster.
	fleet []plan.Filled
	// listOutput is the output format that counting replaced by the
	// table, restored when counting ends.
	listOutput string
	// samples are the first objects of each queried cache as JSON maps,
	// converted on the first completion of a field.
	samples []map[string]any

	// failures counts the lines whose error was printed; usageFailure is
	// set when one of them was a mistake in the line rather than a failure
	// to answer it. Only the goroutine that calls Do uses them.
	failures     int
	usageFailure bool
}

// LinesFailedError ends a session whose input is not typed (no Prompt)
// when some of its lines failed; each printed its error when it was read.
// Run returns it wrapped in a *query.UsageError when a line was a mistake (an
// invalid expression, an unknown command or index), as the same query on
// the command line would be.
type LinesFailedError struct {
	// Lines are the numbers of the lines that failed, counted from 1.
	Lines []int
	// Read is the number of lines read.
	Read int
}

func (e *LinesFailedError) Error() string {
	nums := make([]string, 0, len(e.Lines))
	for _, n := range e.Lines {
		nums = append(nums, strconv.Itoa(n))
	}
	line := "line"
	if len(e.Lines) > 1 {
		line = "lines"
	}
	return fmt.Sprintf("%d of %d input lines failed (%s %s); each printed its error above", len(e.Lines), e.Read, line, strings.Join(nums, ", "))
}

// NewSession fills the caches of p, with whole objects so that any later
// expression can read any field, and returns the session that answers from
// them. The caches follow the cluster until ctx ends.
func NewSession(ctx context.Context, conn plan.Conn, p *plan.Plan, out, errOut io.Writer, opts Options) (*Session, error) {
	if opts.Samples <= 0 {
		opts.Samples = 200
	}
	if req := p.Request(); !req.WholeObjects || req.Names != query.SessionNames {
		var err error
		if p, err = p.With(func(r *plan.Request) { r.WholeObjects, r.Names = true, query.SessionNames }); err != nil {
			return nil, err
		}
	}
	if _, err := p.Fill(ctx, conn, errOut, plan.FillOptions{Lasting: true, Relations: true}); err != nil {
		return nil, err
	}
	s := &Session{out: out, errOut: errOut, opts: opts, plan: p}
	if opts.Prompt != "" {
		var counts []string
		for _, inf := range p.Caches().Queried() {
			counts = append(counts, fmt.Sprintf("%d %s", len(inf.Informer.GetIndexer().ListKeys()), inf.Resource))
		}
		_, _ = fmt.Fprintf(errOut, "%s cached. Type a CEL filter or a command (:help); :quit or Ctrl-D ends.\n", strings.Join(counts, ", "))
	}
	return s, nil
}

type lineRead struct {
	line string
	err  error
}

// Run answers the lines of lines until io.EOF, ":quit" or the end of ctx;
// it returns nil then, except that a session without a Prompt (input that
// is not typed) returns a *LinesFailedError when some lines failed, and
// that when ctx ended while a line was being handled (its answer stopped)
// it returns the context's cause. Only an error reading lines ends it
// otherwise.
func (s *Session) Run(ctx context.Context, lines LineReader) error {
	var read int
	var failed []int
	for {
		// A read blocked on a terminal cannot be interrupted: it is left
		// behind when ctx ends.
		ch := make(chan lineRead, 1)
		go func() {
			line, err := lines.Prompt(s.opts.Prompt)
			// From here Interrupt stops the work on the line: a line
			// editor lets Ctrl-C be a signal again once it has returned.
			s.beginLine(ctx)
			ch <- lineRead{line, err}
		}()
		var r lineRead
		select {
		case <-ctx.Done():
			return nil
		case r = <-ch:
		}
		if r.err != nil {
			s.endLine()
			if errors.Is(r.err, io.EOF) {
				return s.linesFailed(failed, read)
			}
			return r.err
		}
		read++
		before := s.failures
		quit := s.Do(r.line)
		s.endLine()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if s.failures > before {
			failed = append(failed, read)
		}
		if quit {
			return s.linesFailed(failed, read)
		}
	}
}

// linesFailed returns the error of a session that read read lines, of
// which those numbered failed failed: none when the lines were typed.
func (s *Session) linesFailed(failed []int, read int) error {
	if len(failed) == 0 || s.opts.Prompt != "" {
		return nil
	}
	err := &LinesFailedError{Lines: failed, Read: read}
	if s.usageFailure {
		return &query.UsageError{Err: err}
	}
	return err
}

// fail prints the error of a line and counts it; usage tells a mistake in
// the line from a failure to answer it.
func (s *Session) fail(err error, usage bool) {
	_, _ = fmt.Fprintf(s.errOut, "error: %v\n", err)
	s.failures++
	s.usageFailure = s.usageFailure || usage
}

// Interrupt stops the work on the line Run is handling, if any: its
// answer stops and "interrupted" is printed instead of the rest of it; the
// session goes on. It reports whether Run was handling a line, and may be
// called from any goroutine (a signal handler's).
func (s *Session) Interrupt() bool {
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	if s.stopLine == nil {
		return false
	}
	s.stopLine()
	return true
}

// beginLine starts the context of the work on a line, which ends with ctx,
// Run's.
func (s *Session) beginLine(ctx context.Context) {
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	s.run = ctx
	s.line, s.stopLine = context.WithCancel(ctx)
}

// endLine ends the context of the work on a line.
func (s *Session) endLine() {
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	if s.stopLine != nil {
		s.stopLine()
	}
	s.run, s.line, s.stopLine = nil, nil, nil
}

// answerContext returns the context an answer runs with, the line's, and
// the context of Run, whose end ends the session; outside Run (Do called
// alone) both are one that does not end.
func (s *Session) answerContext() (line, run context.Context) {
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	if s.line != nil {
		return s.line, s.run
	}
	return context.Background(), context.Background()
}

// Do handles one line and reports whether it ends the session.
func (s *Session) Do(line string) (quit bool) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return false
	}
	if !strings.HasPrefix(line, ":") {
		s.change(func(r *plan.Request) { r.Where = line })
		return false
	}
	name, arg, _ := strings.Cut(line[1:], " ")
	arg = strings.TrimSpace(arg)
	cmd, ok := commandNamed(name)
	if !ok {
		s.fail(fmt.Errorf("unknown command %q: the commands are %s (:help explains them)", ":"+name, strings.Join(commandNames(), ", ")), true)
		return false
	}
	if cmd.name == "quit" {
		return true
	}
	if err := cmd.run(s, arg); err != nil {
		s.fail(err, true)
	}
	return false
}

// NewFleetSession is NewSession over the clusters of members, filled in
// parallel (see plan.FillFleet): each line is answered over them all,
// merged, as query answers over several contexts. A cluster that cannot
// be filled is named in a warning, and the session answers from the
// others; when none can, or no cluster has a resource type, it returns
// the error. Completion reads the first cluster's caches, and :index is
// not available.
func NewFleetSession(ctx context.Context, members []plan.Member, out, errOut io.Writer, opts Options, explain func(cluster string, err error) error) (*Session, error) {
	if opts.Samples <= 0 {
		opts.Samples = 200
	}
	members = slices.Clone(members)
	for i, m := range members {
		if req := m.Plan.Request(); !req.WholeObjects || req.Names != query.SessionNames {
			p, err := m.Plan.With(func(r *plan.Request) { r.WholeObjects, r.Names = true, query.SessionNames })
			if err != nil {
				return nil, err
			}
			members[i].Plan = p
		}
	}
	filled, _, err := plan.FillFleet(ctx, members, errOut, plan.FillOptions{Lasting: true, Relations: true}, explain)
	if err != nil {
		return nil, err
	}
	s := &Session{out: out, errOut: errOut, opts: opts, fleet: filled}
	s.plan = s.first()
	if opts.Prompt != "" {
		var counts []string
		for _, f := range filled {
			if c := f.Plan.Caches(); c != nil {
				for _, inf := range c.Queried() {
					counts = append(counts, fmt.Sprintf("%d %s in %s", len(inf.Informer.GetIndexer().ListKeys()), inf.Resource, f.Name))
				}
			}
		}
		_, _ = fmt.Fprintf(errOut, "%s cached. Type a CEL filter or a command (:help); :quit or Ctrl-D ends.\n", strings.Join(counts, ", "))
	}
	return s, nil
}

// first returns the plan of the first cluster of the fleet that has
// caches (some cluster has: plan.FillFleet says so).
func (s *Session) first() *plan.Plan {
	for _, f := range s.fleet {
		if f.Plan.Caches() != nil {
			return f.Plan
		}
	}
	return s.fleet[0].Plan
}

// change compiles the query that edit makes of the current one and, when
// it compiles, makes it current and prints its answer.
func (s *Session) change(edit func(*plan.Request)) {
	s.mu.Lock()
	var err error
	if s.fleet != nil {
		err = s.changeFleet(edit)
	} else {
		var np *plan.Plan
		if np, err = s.plan.With(edit); err == nil {
			s.plan = np
		}
	}
	s.mu.Unlock()
	if err != nil {
		s.fail(err, true)
		return
	}
	s.answer()
}

// changeFleet makes edit of the current plan of every cluster, or of none
// when it fails in one. The caller holds mu.
func (s *Session) changeFleet(edit func(*plan.Request)) error {
	next := slices.Clone(s.fleet)
	for i, f := range next {
		np, err := f.Plan.With(edit)
		if err != nil {
			return err
		}
		next[i].Plan = np
	}
	s.fleet = next
	s.plan = s.first()
	return nil
}

// answer prints the answer of the current query. An answer ends with a
// line end even where the format writes none (jsonpath, go-template, as
// kubectl prints them), so that the next prompt or answer starts a line.
func (s *Session) answer() {
	s.mu.Lock()
	p, fleet := s.plan, s.fleet
	s.mu.Unlock()
	ctx, run := s.answerContext()
	out := &lineEnd{w: s.out}
	var err error
	if fleet != nil {
		err = plan.AnswerFleet(ctx, fleet, out, s.errOut)
	} else {
		err = p.AnswerContext(ctx, out, s.errOut)
	}
	if out.open {
		_, _ = io.WriteString(s.out, "\n")
	}
	switch {
	case err == nil:
	case run.Err() != nil:
		// The session is ending; Run says why.
	case ctx.Err() != nil:
		_, _ = fmt.Fprintln(s.errOut, "interrupted") // by Interrupt
	default:
		var usage *query.UsageError
		s.fail(err, errors.As(err, &usage))
	}
}

// lineEnd writes to w and remembers whether what it wrote last ends a line.
type lineEnd struct {
	w    io.Writer
	open bool
}

func (l *lineEnd) Write(b []byte) (int, error) {
	n, err := l.w.Write(b)
	if n > 0 {
		l.open = b[n-1] != '\n'
	}
	return n, err
}

// command is one ":" command of a session.
type command struct {
	name, args, help string
	run              func(s *Session, arg string) error
}

var commands []command

func init() {
	commands = []command{
		{"by", "[INDEX VALUE]", "answer from an index (repeat to intersect); alone, clear", (*Session).by},
		{"where", "", "clear the filter (any line that is not a command sets it)", func(s *Session, _ string) error {
			s.change(func(r *plan.Request) { r.Where = "" })
			return nil
		}},
		{"count", "", "count instead of listing, or list again", func(s *Session, _ string) error {
			s.change(func(r *plan.Request) { s.setCount(r, !r.Count) })
			return nil
		}},
		{"group", "[[NAME=]CEL]", "count (or :aggregate) per value of the expression (repeat to add a key); alone, clear", (*Session).group},
		{"aggregate", "[NAME=FUNC(CEL)]", "compute count(), sum, avg, min, max, quantile(Q, CEL) or distinct per :group group, or over all (repeat for more); alone, clear", (*Session).aggregate},
		{"sort", "[CEL]", "order by the expression's value; alone, clear", func(s *Session, arg string) error {
			s.change(func(r *plan.Request) { r.SortBy = arg })
			return nil
		}},
		{"columns", "[NAME=CEL,...]", "extra table columns; alone, clear", (*Session).columns},
		{"limit", "N", "print at most N results (0: all)", func(s *Session, arg string) error {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 {
				return fmt.Errorf(":limit %q: want a number, 0 for all", arg)
			}
			s.change(func(r *plan.Request) { r.Limit = n })
			return nil
		}},
		{"o", "FORMAT", "output format: " + strings.Join(append([]string{"table"}, query.AllowedFormats()...), ", "), func(s *Session, arg string) error {
			if arg == "" {
				return fmt.Errorf(":o needs a format: %s", strings.Join(append([]string{"table"}, query.AllowedFormats()...), ", "))
			}
			if arg == "table" {
				arg = ""
			}
			s.change(func(r *plan.Request) { r.Output = arg })
			return nil
		}},
		{"index", "NAME=CEL", "index the queried resources by the expression, for :by", (*Session).index},
		{"resources", "[RESOURCE]", "the queried resources, their object counts and indexes", (*Session).resources},
		{"help", "", "this list", func(s *Session, _ string) error { s.help(); return nil }},
		{"quit", "", "end the session (so does Ctrl-D)", nil},
	}
}

// setCount starts or ends counting. Counts print as text: a format that
// prints objects is put aside while counting and restored after; ending
// counting ends grouping too. Called by edits, with mu held.
func (s *Session) setCount(r *plan.Request, on bool) {
	if on == r.Count {
		return
	}
	r.Count = on
	if on {
		if r.Output != "" && r.Output != "wide" {
			s.listOutput, r.Output = r.Output, ""
		}
		return
	}
	r.GroupBy, r.GroupByKeys = "", nil
	if s.listOutput != "" {
		r.Output, s.listOutput = s.listOutput, ""
	}
}

func commandNamed(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, ":"+c.name)
	}
	return out
}

func (s *Session) help() {
	tw := printers.GetNewTabWriter(s.out)
	_, _ = fmt.Fprintln(tw, "CEL\tkeep the objects for which the expression is true, e.g. object.status.phase == \"Pending\"")
	for _, c := range commands {
		_, _ = fmt.Fprintf(tw, ":%s %s\t%s\n", c.name, c.args, c.help)
	}
	_ = tw.Flush()
}

// aggregate adds an aggregate (:aggregate NAME=FUNC(CEL)), or clears
// them: grouping then counts again.
func (s *Session) aggregate(arg string) error {
	if arg == "" {
		s.change(func(r *plan.Request) {
			r.Aggregates, r.SortBy = nil, "" // a sort named an aggregate or key
			if r.GroupBy != "" {
				s.setCount(r, true)
			}
		})
		return nil
	}
	name, expr, ok := strings.Cut(arg, "=")
	name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
	if !ok || name == "" || expr == "" {
		return fmt.Errorf(":aggregate %q: want :aggregate NAME=FUNC(CEL) (:aggregate alone clears)", arg)
	}
	s.change(func(r *plan.Request) {
		r.Aggregates = append(slices.Clone(r.Aggregates), plan.NamedExpr{Name: name, Expr: expr})
		if r.Count {
			// Aggregates replace counting; count() counts.
			r.Count = false
			if s.listOutput != "" {
				r.Output, s.listOutput = s.listOutput, ""
			}
		}
	})
	return nil
}

// group adds a key of the groups (:group [NAME=]CEL), as --group-by
// repeated does, or clears them: the answer is then the number of
// matching objects, or the aggregates over all of them.
func (s *Session) group(arg string) error {
	s.change(func(r *plan.Request) {
		switch {
		case arg == "":
			if len(r.GroupByKeys) > 0 || len(r.Aggregates) > 0 {
				r.SortBy = "" // it may name a key
			}
			r.GroupBy, r.GroupByKeys = "", nil
			if len(r.Aggregates) == 0 {
				s.setCount(r, true)
			}
		case r.GroupBy == "":
			r.GroupBy = arg
			if len(r.Aggregates) == 0 {
				s.setCount(r, true)
			}
		default:
			r.GroupByKeys = append(slices.Clone(r.GroupByKeys), arg)
		}
	})
	return nil
}

func (s *Session) by(arg string) error {
	if arg == "" {
		s.change(func(r *plan.Request) { r.By = nil })
		return nil
	}
	name, value, _ := strings.Cut(arg, " ")
	value = strings.TrimSpace(value)
	if value == "" {
		name, value, _ = strings.Cut(arg, "=")
	}
	if name == "" || value == "" {
		return fmt.Errorf(":by %q: want :by INDEX VALUE (:by alone clears)", arg)
	}
	s.change(func(r *plan.Request) { r.By = append(r.By, query.Selector{Index: name, Value: value}) })
	return nil
}

func (s *Session) columns(arg string) error {
	var cols []plan.NamedExpr
	if arg != "" {
		for _, part := range plan.SplitColumns(arg) {
			name, expr, ok := strings.Cut(part, "=")
			name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
			if !ok || name == "" || expr == "" {
				return fmt.Errorf(":columns %q: want NAME=CEL[,NAME=CEL...]", part)
			}
			cols = append(cols, plan.NamedExpr{Name: name, Expr: expr})
		}
	}
	s.change(func(r *plan.Request) { r.Columns = cols })
	return nil
}

// index compiles NAME=CEL and registers it on every queried cache. The
// cached objects are indexed first under the line's context, so that
// Interrupt stops that work and leaves the caches' indexes as they were;
// client-go then takes the values computed (and computes those of objects
// changed meanwhile) when the index is registered.
func (s *Session) index(arg string) error {
	name, expr, ok := strings.Cut(arg, "=")
	name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
	if !ok || name == "" || expr == "" {
		return fmt.Errorf(":index %q: want NAME=CEL", arg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fleet != nil {
		return &query.UsageError{Err: errors.New(":index reads one cluster: give the index with --index when the session starts")}
	}
	for _, inf := range s.plan.Caches().Queried() {
		if _, dup := inf.Informer.GetIndexer().GetIndexers()[name]; dup {
			return fmt.Errorf("%s already has an index %q: choose another name", inf.Resource, name)
		}
	}
	np, prog, err := s.plan.WithIndex(name, expr)
	if err != nil {
		return err
	}
	ctx, _ := s.answerContext()
	stats := &indexers.Stats{}
	computed := make([]*precomputed, len(np.Caches().Queried()))
	for i, inf := range np.Caches().Queried() {
		computed[i] = precompute(ctx, name, prog, inf.Informer.GetStore().List(), stats)
		if ctx.Err() != nil {
			_, _ = fmt.Fprintln(s.errOut, "interrupted: no index was added")
			return nil
		}
	}
	for i, inf := range np.Caches().Queried() {
		fn := indexers.IndexFunc(name, prog, stats)
		err := inf.Informer.AddIndexers(cache.Indexers{name: computed[i].indexFunc(fn)})
		computed[i].release()
		if err != nil {
			return fmt.Errorf("adding index %q to %s: %w", name, inf.Resource, err)
		}
		_, _ = fmt.Fprintf(s.out, "%s: index %q has %d values\n", inf.Resource, name, len(inf.Informer.GetIndexer().ListIndexFuncValues(name)))
	}
	for _, line := range stats.Summary() {
		_, _ = fmt.Fprintf(s.errOut, "warning: %s\n", line)
	}
	s.plan = np
	return nil
}

// precomputed are the values of an index for the objects a cache held,
// computed before the index is registered.
type precomputed struct {
	mu sync.Mutex
	// values by object (the cache's pointer); nil once released. Guarded
	// by mu: client-go calls the index function of a registered index from
	// the informer's goroutine too.
	values map[any][]string
}

// precompute computes the values of the index name, compiled as prog, for
// objs, until ctx ends. Failures are counted in stats.
func precompute(ctx context.Context, name string, prog *indexers.Program, objs []any, stats *indexers.Stats) *precomputed {
	fn := indexers.IndexFunc(name, prog.WithBudget(indexers.NewContextBudget(ctx)), stats)
	pc := &precomputed{values: make(map[any][]string, len(objs))}
	for _, obj := range objs {
		if ctx.Err() != nil {
			break
		}
		values, _ := fn(obj) // an index function of package indexers returns no error
		pc.values[obj] = values
	}
	return pc
}

// indexFunc returns an index function that gives an object's precomputed
// values, and computes with fn those of objects not precomputed.
func (pc *precomputed) indexFunc(fn cache.IndexFunc) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		pc.mu.Lock()
		values, ok := pc.values[obj]
		pc.mu.Unlock()
		if ok {
			return values, nil
		}
		return fn(obj)
	}
}

// release drops the precomputed values: from then on every object is
// computed.
func (pc *precomputed) release() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.values = nil
}

func (s *Session) resources(arg string) error {
	s.mu.Lock()
	clusters, several := s.fleet, s.fleet != nil
	if !several {
		clusters = []plan.Filled{{Plan: s.plan}}
	}
	s.mu.Unlock()
	tw := printers.GetNewTabWriter(s.out)
	if several {
		_, _ = fmt.Fprint(tw, "CLUSTER\t")
	}
	_, _ = fmt.Fprintln(tw, "RESOURCE\tOBJECTS\tINDEXES")
	found := false
	for _, f := range clusters {
		if f.Plan.Caches() == nil {
			continue
		}
		for _, inf := range f.Plan.Caches().Queried() {
			if arg != "" && arg != inf.Resource.String() && arg != inf.Resource.GVR.Resource {
				continue
			}
			found = true
			if f.Name != "" {
				_, _ = fmt.Fprintf(tw, "%s\t", f.Name)
			}
			var names []string
			for _, n := range slices.Sorted(maps.Keys(inf.Informer.GetIndexer().GetIndexers())) {
				if !indexers.IsBuiltinIndex(n) { // those of the relationship functions
					names = append(names, n)
				}
			}
			_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\n", inf.Resource, len(inf.Informer.GetIndexer().ListKeys()), strings.Join(names, ","))
		}
	}
	if !found {
		return fmt.Errorf("%q is not queried here: the queried resources are %s", arg, strings.Join(s.resourceNames(), ", "))
	}
	return tw.Flush()
}

func (s *Session) resourceNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, inf := range s.plan.Caches().Queried() {
		out = append(out, inf.Resource.String())
	}
	return out
}

// Complete completes the word before pos (in runes) in line, as
// github.com/peterh/liner's WordCompleter: command names after ":", index
// names and values after ":by", formats after ":o", resources after
// ":resources", and elsewhere the field names seen at a path such as
// object.status. in a sample of the cached objects, and the keys of a map
// after [" (object.metadata.labels["app.kubernetes.io/na).
//
// Every completion extends the text before pos as typed: liner replaces
// that text with the longest prefix the completions share, so that one
// that does not start with it would delete what was typed.
func (s *Session) Complete(line string, pos int) (head string, completions []string, tail string) {
	runes := []rune(line)
	pos = min(max(pos, 0), len(runes))
	before := string(runes[:pos])
	head, completions, tail = s.complete(before, string(runes[pos:]))
	kept := completions[:0]
	for _, c := range completions {
		if strings.HasPrefix(head+c, before) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	return head, kept, tail
}

// complete returns the completions of the word that ends before.
func (s *Session) complete(before, tail string) (head string, completions []string, _ string) {
	trimmed := strings.TrimLeft(before, " ")
	if strings.HasPrefix(trimmed, ":") {
		name, rest, spaced := strings.Cut(trimmed[1:], " ")
		if !spaced {
			for _, c := range commands {
				if strings.HasPrefix(c.name, name) {
					word := ":" + c.name
					if c.args != "" {
						word += " "
					}
					completions = append(completions, word)
				}
			}
			return before[:len(before)-len(trimmed)], completions, tail
		}
		switch name {
		case "by":
			args := strings.Fields(rest)
			if len(args) == 0 || (len(args) == 1 && !strings.HasSuffix(rest, " ")) {
				return completeWord(before, tail, s.indexNames(), " ")
			}
			if len(args) == 2 || (len(args) == 1 && strings.HasSuffix(rest, " ")) {
				return completeWord(before, tail, s.indexValues(args[0]), "")
			}
			return before, nil, tail
		case "o":
			return completeWord(before, tail, append([]string{"table"}, query.AllowedFormats()...), "")
		case "resources":
			return completeWord(before, tail, s.resourceNames(), "")
		case "where", "sort", "group", "columns", "aggregate":
		default:
			return before, nil, tail
		}
	}
	if h, c, ok := s.completeKey(before); ok {
		return h, c, tail
	}
	h, c := s.completeField(before)
	return h, c, tail
}

// completeKey completes the key of a map after an opening bracket and,
// perhaps, a quote and the start of the key: object.metadata.labels[ or
// object.metadata.labels["app. offers each key seen there in the samples,
// quoted and closed (object.metadata.labels["app.kubernetes.io/name"]).
// It reports false when before does not end so.
func (s *Session) completeKey(before string) (string, []string, bool) {
	b := strings.LastIndexByte(before, '[')
	if b < 0 {
		return "", nil, false
	}
	open := before[b+1:]
	quote := byte('"')
	if open != "" {
		quote = open[0]
		if quote != '"' && quote != '\'' || strings.ContainsAny(open[1:], string(quote)+"\\") {
			return "", nil, false
		}
		open = open[1:]
	}
	path := before[:b]
	i := fieldStart(path)
	head, word := path[:i], path[i:]
	segments := strings.Split(word, ".")
	if segments[0] != indexers.ObjectVar || len(segments) < 2 {
		return "", nil, false
	}
	keys := sets.New[string]()
	for _, obj := range s.sampleObjects() {
		for _, v := range walk([]any{obj}, segments[1:]) {
			if m, ok := v.(map[string]any); ok {
				for k := range m {
					if strings.HasPrefix(k, open) && !strings.ContainsAny(k, string(quote)+"\\\n") {
						keys.Insert(k)
					}
				}
			}
		}
	}
	var out []string
	for _, k := range sets.List(keys) {
		out = append(out, word+"["+string(quote)+k+string(quote)+"]")
	}
	return head, out, true
}

// fieldStart returns where the field path that ends s starts: after the
// last byte that cannot be part of one.
func fieldStart(s string) int {
	i := len(s)
	for i > 0 {
		if c := s[i-1]; !strings.ContainsRune(".?[]_", rune(c)) && !isASCIIAlnum(c) {
			break
		}
		i--
	}
	return i
}

// completeWord offers the candidates that start with the last
// space-separated word of before, followed by suffix.
func completeWord(before, tail string, candidates []string, suffix string) (string, []string, string) {
	i := strings.LastIndex(before, " ") + 1
	head, word := before[:i], before[i:]
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, word) {
			out = append(out, c+suffix)
		}
	}
	return head, out, tail
}

func (s *Session) indexNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := sets.New[string]()
	for _, inf := range s.plan.Caches().Queried() {
		for n := range inf.Informer.GetIndexer().GetIndexers() {
			set.Insert(n)
		}
	}
	return sets.List(set)
}

// indexValues returns the values of an index, at most 500.
func (s *Session) indexValues(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := sets.New[string]()
	for _, inf := range s.plan.Caches().Queried() {
		idx := inf.Informer.GetIndexer()
		if _, ok := idx.GetIndexers()[name]; !ok {
			continue
		}
		for _, v := range idx.ListIndexFuncValues(name) {
			if len(set) < 500 {
				set.Insert(v)
			}
		}
	}
	return sets.List(set)
}

// listFunctions are what Complete offers after a list and a dot: the
// macros and functions every CEL list has. A list has no fields: the
// fields of its elements are reached through these, or through an index
// (object.spec.containers[0].image).
var listFunctions = []string{"all(", "exists(", "exists_one(", "filter(", "map(", "size()"}

// completeField completes the field path that ends before: "obj" to
// "object", "object.status.ph" to "object.status.phase". A segment may
// be optional (?field) or indexed (containers[0]). Only what type-checks
// is offered: after a list, its functions (listFunctions); after a list
// indexed with [N], the fields of its elements.
func (s *Session) completeField(before string) (string, []string) {
	i := fieldStart(before)
	head, word := before[:i], before[i:]
	dot := strings.LastIndex(word, ".")
	if dot < 0 {
		if word != "" && strings.HasPrefix(indexers.ObjectVar, word) {
			return head, []string{indexers.ObjectVar}
		}
		return before, nil
	}
	segments := strings.Split(word[:dot], ".")
	if segments[0] != indexers.ObjectVar {
		return before, nil
	}
	prefix := word[:dot+1]
	partial := word[dot+1:]
	optional := strings.Contains(word, "?")
	if strings.HasPrefix(partial, "?") {
		prefix, partial = prefix+"?", partial[1:]
	}
	keys := sets.New[string]()
	list := false
	for _, obj := range s.sampleObjects() {
		for _, v := range walk([]any{obj}, segments[1:]) {
			switch v := v.(type) {
			case map[string]any:
				for k := range v {
					if strings.HasPrefix(k, partial) {
						keys.Insert(k)
					}
				}
			case []any:
				list = true
			}
		}
	}
	// A key that is not an identifier is offered after [ (completeKey):
	// here it would not extend the text typed.
	var out []string
	for _, k := range sets.List(keys) {
		if isIdent(k) {
			out = append(out, prefix+k)
		}
	}
	// An optional value (?field anywhere before) has no list functions.
	if list && !optional {
		for _, f := range listFunctions {
			if strings.HasPrefix(f, partial) {
				out = append(out, prefix+f)
			}
		}
	}
	return head, out
}

// walk follows segments down from values and returns the values found
// there. A segment selects a field of a map; each [N] after it selects
// the elements of a list (any N: the samples stand for every element). A
// list cannot be followed by a field name, as in CEL: nothing is found
// below it.
func walk(values []any, segments []string) []any {
	for _, seg := range segments {
		seg = strings.TrimPrefix(seg, "?")
		indexes := 0
		if b := strings.IndexByte(seg, '['); b >= 0 {
			indexes = strings.Count(seg[b:], "[")
			seg = seg[:b]
		}
		var next []any
		for _, v := range values {
			if m, ok := v.(map[string]any); ok {
				if c, ok := m[seg]; ok {
					next = append(next, c)
				}
			}
		}
		for range indexes {
			var elems []any
			for _, v := range next {
				if l, ok := v.([]any); ok {
					elems = append(elems, l...)
				}
			}
			next = elems
		}
		values = next
	}
	return values
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdent(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// sampleObjects returns up to opts.Samples objects per queried resource as
// JSON maps, converting them on first use.
func (s *Session) sampleObjects() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples != nil {
		return s.samples
	}
	s.samples = []map[string]any{}
	for _, inf := range s.plan.Caches().Queried() {
		for i, obj := range inf.Informer.GetIndexer().List() {
			if i >= s.opts.Samples {
				break
			}
			if m, err := query.JSONMap(obj); err == nil && m != nil {
				s.samples = append(s.samples, m)
			}
		}
	}
	return s.samples
}
