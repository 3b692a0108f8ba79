package exporter

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-informer/kubectl-informer/internal/suggest"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Compile checks a config file as [Parse] does and compiles every
// expression in it with env, before anything contacts the cluster: index
// expressions as [indexers.KindIndex], label, value and each expressions as
// [indexers.KindValue]. When a metric has each, its labels and value are
// compiled with [indexers.Env.CompileEach], so that they can read the
// variable each. path is used in messages; data is the file's content, whose
// hex SHA-256 becomes Compiled.Hash.
//
// Every error found is returned, joined and sorted by line, each a
// [*LineError]. That of an expression that does not compile is reported at
// the line of the file where the expression goes wrong and wraps an
// [*indexers.ExprError] that shows it with a caret:
//
//	exporter.yaml:14: metric "kube_pod_info" label "node": invalid expression: undefined field 'nodeNam'
//	 | object.spec.nodeNam
//	 |             ^
//
// byIndex() calls must name an index that the indexes of some resource of
// the config define (or the built-in index "namespace").
func Compile(path string, data []byte, env *indexers.Env) (*Compiled, error) {
	return compile(path, data, env, false)
}

// compile is Compile; deferred, for the files of a built-in profile,
// defers the planning of the expressions' programs (see
// indexers.Env.CompileDeferred), which its tests plan (TestProfilesPlan),
// and leaves out of CheckResources those that learn nothing from a schema,
// which its tests check (see Compiled.builtin).
func compile(path string, data []byte, env *indexers.Env, deferred bool) (*Compiled, error) {
	if env == nil {
		return nil, errors.New("compiling the exporter config: no CEL environment (see indexers.NewEnv)")
	}
	p, cfg := parseConfig(path, data)
	if p.Fatal {
		return nil, p.Err()
	}
	sum := sha256.Sum256(data)
	c := &Compiled{Config: cfg, Path: path, Hash: hex.EncodeToString(sum[:])}

	var constLabels [][2]string
	for _, name := range slices.Sorted(maps.Keys(cfg.CommonLabels)) {
		constLabels = append(constLabels, [2]string{name, cfg.CommonLabels[name]})
	}
	// defined are the index names some resource defines, for byIndex().
	defined := sets.New[string]()
	for _, r := range cfg.Resources {
		for name := range r.Indexes {
			defined.Insert(name)
		}
	}
	var compiled []compiledExpr
	// programs are the programs compiled so far, by expression: the same
	// expression written in several places (a label of many metrics) is
	// compiled once, and its program shared.
	programs := map[programKey]*indexers.Program{}
	// compile compiles an expression; withEach declares the variable each.
	compile := func(withEach bool, expr string, kind indexers.Kind, context string, path ...any) *indexers.Program {
		key := programKey{expr: strings.TrimRightFunc(expr, unicode.IsSpace), kind: kind, withEach: withEach}
		prog := programs[key]
		if prog != nil {
			prog = prog.WithContext(context)
		} else {
			fn := env.Compile
			switch {
			case deferred:
				fn = func(expr string, kind indexers.Kind, context string) (*indexers.Program, error) {
					return env.CompileDeferred(expr, kind, context, withEach)
				}
			case withEach:
				fn = env.CompileEach
			}
			prog = p.compileExpr(fn, expr, kind, context, path...)
			if prog != nil {
				programs[key] = prog
			}
		}
		if prog != nil {
			compiled = append(compiled, compiledExpr{prog: prog, path: path, withEach: withEach})
		}
		return prog
	}

	for i, r := range cfg.Resources {
		at := func(parts ...any) []any { return append([]any{"resources", i}, parts...) }
		cr := &CompiledResource{Config: r, Indexes: map[string]*indexers.Program{}}
		slots := map[string]int{}     // label expression → slot
		eachSlots := map[string]int{} // each expression → slot
		resource := r.Resource
		if resource == "" {
			resource = fmt.Sprintf("resources[%d]", i)
		}
		for _, name := range slices.Sorted(maps.Keys(r.Indexes)) {
			context := fmt.Sprintf("index %q of %s", name, resource)
			if prog := compile(false, r.Indexes[name], indexers.KindIndex, context, at("indexes", name)...); prog != nil {
				cr.Indexes[name] = prog
			}
		}
		for j, m := range r.Metrics {
			mat := func(parts ...any) []any { return at(append([]any{"metrics", j}, parts...)...) }
			ctx := metricContext(cfg.Prefix, m.Name, resourceContext(r.Resource, i), j)
			f := &Family{
				Name:        cfg.Prefix + m.Name,
				Help:        strings.Trim(m.Help, "\r\n"), // as written, but for a block scalar's line ends
				Type:        m.Type,
				ConstLabels: slices.Clone(constLabels),
				Aggregate:   m.Aggregate,
				Line:        p.Line(mat()...),
			}
			withEach := m.Each != ""
			f.EachSlot = -1
			if withEach {
				f.Each = compile(false, m.Each, indexers.KindValue, ctx+" each", mat("each")...)
				if f.Each != nil {
					expr := strings.TrimSpace(m.Each)
					slot, ok := eachSlots[expr]
					if !ok {
						slot = len(eachSlots)
						eachSlots[expr] = slot
					}
					f.EachSlot = slot
				}
			}
			if len(m.Labels) > 0 {
				f.LabelNames = slices.Sorted(maps.Keys(m.Labels))
				f.Labels = make([]*indexers.Program, len(f.LabelNames))
				f.LabelSlots = make([]int, len(f.LabelNames))
				for k, name := range f.LabelNames {
					prog := compile(withEach, m.Labels[name], indexers.KindValue, fmt.Sprintf("%s label %q", ctx, name), mat("labels", name)...)
					f.Labels[k] = prog
					f.LabelSlots[k] = -1
					if prog == nil || prog.UsesEach() {
						continue
					}
					expr := strings.TrimSpace(m.Labels[name])
					slot, ok := slots[expr]
					if !ok {
						slot = len(slots)
						slots[expr] = slot
					}
					f.LabelSlots[k] = slot
				}
			}
			if m.Value != "" {
				f.Value = compile(withEach, m.Value, indexers.KindNumber, ctx+" value", mat("value")...)
			}
			if lf := m.LabelsFrom; lf != nil {
				f.LabelsFrom = compile(withEach, lf.Map, indexers.KindValue, ctx+" labelsFrom", mat("labelsFrom", "map")...)
				f.LabelsPrefix, f.LabelsAllowlist, f.LabelsVerbatim = lf.Prefix, lf.Allowlist, lf.Verbatim
				f.NoLabelsSeries = lf.Allowlist != ""
			}
			cr.Families = append(cr.Families, f)
		}
		cr.LabelSlots, cr.EachSlots = len(slots), len(eachSlots)
		c.Resources = append(c.Resources, cr)
	}

	for _, ce := range compiled {
		p.checkReferences(ce, defined)
		if !cfg.AllowSecretData {
			p.checkSecretData(cfg, ce)
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	c.parser, c.exprs, c.builtin = p, compiled, deferred
	return c, nil
}

// programKey identifies what a program is compiled from, but for the
// context named in its errors.
type programKey struct {
	expr     string
	kind     indexers.Kind
	withEach bool
}

type compileFunc func(expr string, kind indexers.Kind, context string) (*indexers.Program, error)

// compiledExpr is a compiled expression and the path of its field.
type compiledExpr struct {
	prog *indexers.Program
	path []any
	// withEach: compiled with the variable each declared.
	withEach bool
}

// compileExpr compiles the expression at path and reports its error at the
// line of the file where the expression goes wrong. A blank expression is
// reported by validate and not compiled.
func (p *configParser) compileExpr(compile compileFunc, expr string, kind indexers.Kind, context string, path ...any) *indexers.Program {
	if strings.TrimSpace(expr) == "" {
		return nil
	}
	// Trailing blanks, such as the newline that ends a block scalar, would
	// only make the expression look multi-line in messages.
	prog, err := compile(strings.TrimRightFunc(expr, unicode.IsSpace), kind, context)
	if err == nil {
		return prog
	}
	node := p.ValueNode(path...)
	var exprErr *indexers.ExprError
	if !errors.As(err, &exprErr) {
		p.Add(p.Line(path...), "", err)
		return nil
	}
	e := *exprErr
	e.Context = "" // said by the LineError
	if strings.HasPrefix(e.Message, "undeclared reference to '"+indexers.EachVar+"'") {
		e.Message += "; each is declared only in the labels and value of a metric that sets each"
	}
	p.Add(p.ExprLine(node, e.Expr, e.Line, e.Column), context, &e)
	return nil
}

// checkReferences reports the byIndex() calls of an expression that name an
// index no resource defines.
func (p *configParser) checkReferences(ce compiledExpr, defined sets.Set[string]) {
	var names []string
	for name := range defined {
		names = append(names, name)
	}
	for _, ref := range ce.prog.References() {
		for _, ix := range ref.Indexes {
			if ix == indexers.NamespaceIndex || indexers.IsBuiltinIndex(ix) || defined.Has(ix) {
				continue
			}
			msg := fmt.Sprintf("byIndex(%q, %q, …) reads index %q, which no resource of the config defines", ref.Resource, ix, ix)
			if s, ok := suggest.Closest(ix, names); ok {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += fmt.Sprintf("; define it under indexes of the entry for %s", ref.Resource)
			}
			p.Errorf(p.Line(ce.path...), ce.prog.Context(), "%s", msg)
		}
	}
}

// checkSecretData reports an expression that reads the data of Secrets:
// one of an entry for Secrets that reads data or stringData (or the whole
// object), or one that reads Secrets with get() or byIndex(), whose fields
// cannot be told.
func (p *configParser) checkSecretData(cfg *Config, ce compiledExpr) {
	const allow = "set allowSecretData: true at the top of the config to allow it, knowing that the values become label values for anyone who can scrape /metrics"
	if len(ce.path) > 1 && ce.path[0] == "resources" {
		if i, ok := ce.path[1].(int); ok && isSecrets(cfg.Resources[i].Resource) && readsSecretData(ce.prog.ObjectPaths()) {
			p.Errorf(p.Line(ce.path...), ce.prog.Context(), "reads the data of Secrets (data, stringData or the whole object); %s", allow)
		}
	}
	for _, ref := range ce.prog.References() {
		if isSecrets(ref.Resource) {
			p.Errorf(p.Line(ce.path...), ce.prog.Context(), "reads Secrets with get() or byIndex(), whose data cannot be told apart; %s", allow)
		}
	}
}

// isSecrets reports whether a resource name, as kubectl accepts it, names
// the core Secrets.
func isSecrets(name string) bool {
	res, rest, _ := strings.Cut(strings.ToLower(strings.TrimSpace(name)), ".")
	return (res == "secrets" || res == "secret") && (rest == "" || rest == "v1" || rest == "v1.")
}

// readsSecretData reports whether an expression reading paths reads the
// data of a Secret.
func readsSecretData(paths *jsonval.Paths) bool {
	if paths == nil {
		return true
	}
	for _, path := range paths.List() {
		if len(path) == 0 || path[0] == "data" || path[0] == "stringData" {
			return true
		}
	}
	return false
}
