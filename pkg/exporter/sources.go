package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"

	"github.com/kubectl-informer/kubectl-informer/internal/yamlcheck"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/crs"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// Sources are the configs an exporter serves together: a built-in profile
// (see package profiles), chosen in part by a Selection, and the user's
// config file. At least one of them is set.
type Sources struct {
	// ConfigPath is the user's config file; empty: none.
	ConfigPath string
	// Profile names a built-in profile; empty: none.
	Profile string
	// Selection chooses the profile's families.
	Selection Selection
	// CustomResourceState is a kube-state-metrics custom resource state
	// config (CustomResourceStateMetrics), translated into a config by
	// package crs; CustomResourceStateName names it in messages. Empty:
	// none.
	CustomResourceState     []byte
	CustomResourceStateName string
	// Available reports whether the API server has a resource of the
	// profile; the files of those it has not are left out, and
	// Compiled.Unavailable names them, as kube-state-metrics serves what
	// the server has (admission policies are only in Kubernetes 1.36 and
	// later, say). nil: every resource is taken to be there, and one that
	// is not fails the load as any config's.
	Available func(resource string) bool
	// LabelsAllowlist and AnnotationsAllowlist choose the keys of the
	// labelsFrom maps of every config (see Compiled.SetAllowlists).
	LabelsAllowlist      map[string][]string
	AnnotationsAllowlist map[string][]string
}

// Selection chooses the families of a profile by the flags of
// kube-state-metrics of the same names.
type Selection struct {
	// Resources are the profile's resources to serve; empty: all of them.
	Resources []string
	// MetricAllowlist and MetricDenylist are regular expressions matched
	// anywhere in a family's name: with an allowlist, only the families
	// one of them matches are served; with a denylist, those it matches are
	// not. Not both.
	MetricAllowlist []string
	MetricDenylist  []string
	// MetricOptInList are regular expressions matched anywhere in a
	// family's name: the profile's opt-in families
	// (profiles.OptInFamilies) are served only when one of them matches,
	// and the allowlist or denylist then applies to them as to the
	// others, as kube-state-metrics' --metric-opt-in-list.
	MetricOptInList []string
}

// Validate checks the selection against the profile: the regular
// expressions compile, allowlist and denylist are not both given, and
// every resource is one the profile knows; each error names the flag
// (kube-state-metrics' and export's) at fault. It returns the resources the
// profile's source has but the profile does not serve yet, to be warned
// about.
func (s Selection) Validate(profile string) (unserved []string, err error) {
	var errs []error
	if len(s.MetricAllowlist) > 0 && len(s.MetricDenylist) > 0 {
		errs = append(errs, errors.New("--metric-allowlist and --metric-denylist are exclusive: give one"))
	}
	if _, err := s.keeper(profile); err != nil {
		errs = append(errs, err)
	}
	files, err := profiles.Files(profile)
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	served := make([]string, len(files))
	for i, f := range files {
		served[i] = f.Resource
	}
	known := profiles.KnownResources(profile)
	for _, r := range s.Resources {
		switch {
		case slices.Contains(served, r):
		case slices.Contains(known, r):
			unserved = append(unserved, r)
		default:
			errs = append(errs, fmt.Errorf("--resources: resource %q is not one of the %s profile; its resources are %s", r, profile, strings.Join(served, ", ")))
		}
	}
	return unserved, errors.Join(errs...)
}

// UnmatchedOptIns returns the patterns of MetricOptInList that match
// none of the profile's opt-in families, to be warned about (a pattern
// that does not compile is Validate's error).
func (s Selection) UnmatchedOptIns(profile string) []string {
	var out []string
	for _, expr := range s.MetricOptInList {
		re, err := regexp.Compile(expr)
		if err == nil && !slices.ContainsFunc(profiles.OptInFamilies(profile), re.MatchString) {
			out = append(out, expr)
		}
	}
	return out
}

// keeper returns whether the selection serves a family of profile, by its
// name, with the regular expressions compiled once.
func (s Selection) keeper(profile string) (func(name string) bool, error) {
	list, allow, flag := s.MetricDenylist, false, "--metric-denylist"
	if len(s.MetricAllowlist) > 0 {
		list, allow, flag = s.MetricAllowlist, true, "--metric-allowlist"
	}
	res, err := compilePatterns(flag+": metric name pattern", list)
	if err != nil {
		return nil, err
	}
	optIns, err := compilePatterns("--metric-opt-in-list: metric opt-in pattern", s.MetricOptInList)
	if err != nil {
		return nil, err
	}
	optIn := profiles.OptInFamilies(profile)
	matches := func(res []*regexp.Regexp, name string) bool {
		return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(name) })
	}
	return func(name string) bool {
		return matches(res, name) == allow && (!slices.Contains(optIn, name) || matches(optIns, name))
	}, nil
}

// compilePatterns compiles regular expressions; what names them in an
// error.
func compilePatterns(what string, exprs []string) ([]*regexp.Regexp, error) {
	res := make([]*regexp.Regexp, len(exprs))
	for i, expr := range exprs {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", what, expr, err)
		}
		res[i] = re
	}
	return res, nil
}

// Files returns the config files of profile the selection keeps: those
// of the selected resources (without a selection, the profile's default
// ones: see profiles.File.Default), each with only the selected families
// (the opt-in ones only when MetricOptInList names them); a file left
// without families is left out. A file the selection does not
// change is returned as it is; one it does is written again from its
// YAML, comments included.
func (s Selection) Files(profile string) ([]profiles.File, error) {
	files, err := profiles.Files(profile)
	if err != nil {
		return nil, err
	}
	keeps, err := s.keeper(profile)
	if err != nil {
		return nil, err
	}
	var out []profiles.File
	for _, f := range files {
		if len(s.Resources) > 0 && !slices.Contains(s.Resources, f.Resource) || len(s.Resources) == 0 && !f.Default {
			continue
		}
		data, kept, err := selectFamilies(f.Data, keeps)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		if kept == 0 {
			continue
		}
		f.Data = data
		out = append(out, f)
	}
	return out, nil
}

// selectFamilies removes from a config the metrics keeps does not keep,
// and the resources left without metrics. It returns the config and the
// number of metrics kept.
func selectFamilies(data []byte, keeps func(name string) bool) ([]byte, int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, 0, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, 0, errors.New("not a YAML document")
	}
	root := doc.Content[0]
	prefix := yamlcheck.ScalarField(root, "prefix")
	resources := yamlcheck.Field(root, "resources")
	if resources == nil || resources.Kind != yaml.SequenceNode {
		return nil, 0, errors.New("no resources")
	}
	kept, changed := 0, false
	var entries []*yaml.Node
	for _, r := range resources.Content {
		metrics := yamlcheck.Field(r, "metrics")
		if metrics == nil || metrics.Kind != yaml.SequenceNode {
			entries = append(entries, r)
			continue
		}
		var ms []*yaml.Node
		for _, m := range metrics.Content {
			if keeps(prefix + yamlcheck.ScalarField(m, "name")) {
				ms = append(ms, m)
			}
		}
		changed = changed || len(ms) != len(metrics.Content)
		kept += len(ms)
		if len(ms) == 0 {
			continue
		}
		metrics.Content = ms
		entries = append(entries, r)
	}
	if !changed {
		return data, kept, nil
	}
	resources.Content = entries
	// A kept metric may refer to an anchor of one removed (labels: *x):
	// the aliases are replaced by what they refer to.
	expandAliases(root)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, 0, err
	}
	if err := enc.Close(); err != nil {
		return nil, 0, err
	}
	return b.Bytes(), kept, nil
}

// expandAliases replaces each alias under n by a copy of the node it
// refers to, and drops the anchors.
func expandAliases(n *yaml.Node) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		*n = *copyNode(n.Alias)
	}
	n.Anchor = ""
	for _, c := range n.Content {
		expandAliases(c)
	}
}

// copyNode returns a deep copy of n.
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		c.Content[i] = copyNode(e)
	}
	return &c
}

// Load reads and compiles the sources in env: the profile's selected
// files, then the config file, merged (see Merge), with the allowlists
// set.
func (s Sources) Load(env *indexers.Env) (*Compiled, error) {
	var parts []*Compiled
	var unavailable []string
	if s.Profile != "" {
		if _, err := s.Selection.Validate(s.Profile); err != nil {
			return nil, err
		}
		files, err := s.Selection.Files(s.Profile)
		if err != nil {
			return nil, err
		}
		files = slices.DeleteFunc(files, func(f profiles.File) bool {
			if s.Available != nil && !s.Available(f.Resource) {
				unavailable = append(unavailable, f.Resource)
				return true
			}
			return false
		})
		// The files are compiled on every core: a profile's are many.
		compiled, errs := make([]*Compiled, len(files)), make([]error, len(files))
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for i, f := range files {
			g.Go(func() error {
				compiled[i], errs[i] = compile(f.Path, f.Data, env, true)
				if errs[i] == nil {
					compiled[i].knownBounds = knownSizeBounds(s.Profile)
				}
				return nil
			})
		}
		_ = g.Wait() // the errors are in errs, the first file's first
		for i := range files {
			if errs[i] != nil {
				return nil, errs[i]
			}
			parts = append(parts, compiled[i])
		}
	}
	if len(s.CustomResourceState) > 0 {
		data, err := crs.Convert(s.CustomResourceStateName, s.CustomResourceState)
		if err != nil {
			return nil, err
		}
		c, err := Compile(s.CustomResourceStateName+" (translated)", data, env)
		if err != nil {
			return nil, err
		}
		parts = append(parts, c)
	}
	if s.ConfigPath != "" {
		c, err := Load(s.ConfigPath, env)
		if err != nil {
			return nil, err
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		if s.Profile != "" {
			return nil, fmt.Errorf("the selection leaves no family of the %s profile, and there is no config file", s.Profile)
		}
		return nil, errors.New("no config: give a config file, a profile or a custom resource state config")
	}
	c, err := Merge(parts...)
	if err != nil {
		return nil, err
	}
	c.Unavailable = unavailable
	if err := c.SetAllowlists(s.LabelsAllowlist, s.AnnotationsAllowlist); err != nil {
		return nil, err
	}
	return c, nil
}
