package exporter

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Merge returns the config that serves the families of parts together, in
// one process and on the same caches: its resources are those of the parts
// in order (a resource in several parts is watched once). A metric name in
// two parts is an error naming both places. Merge of one part returns it.
//
// The merged config checks each part on its own (CheckResources,
// DuplicateSeries), so messages name the part's file and lines; its Path
// lists the parts' paths and its Hash covers their content.
func Merge(parts ...*Compiled) (*Compiled, error) {
	switch len(parts) {
	case 0:
		return nil, errors.New("no config to serve")
	case 1:
		return parts[0], nil
	}
	m := &Compiled{Config: &Config{}, parts: parts}
	seen := map[string]string{}
	var errs []error
	h := sha256.New()
	var paths []string
	for _, p := range parts {
		paths = append(paths, p.Path)
		h.Write([]byte(p.Hash))
		for _, r := range p.Resources {
			for _, f := range r.Families {
				at := fmt.Sprintf("%s:%d", p.Path, f.Line)
				if first, dup := seen[f.Name]; dup {
					errs = append(errs, fmt.Errorf("%s: metric %q is also defined at %s; metric names must be unique across the configs served together: rename one, or leave one family out (with the metric denylist, for the profile's)", at, f.Name, first))
					continue
				}
				seen[f.Name] = at
			}
		}
		m.Resources = append(m.Resources, p.Resources...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	m.Path = strings.Join(paths, ", ")
	m.Hash = hex.EncodeToString(h.Sum(nil))
	return m, nil
}

// partsOf returns the configs c was merged from, each with the offset of
// its first resource in c.Resources; c alone when it was not merged.
func (c *Compiled) partsOf() ([]*Compiled, []int) {
	if len(c.parts) == 0 {
		return []*Compiled{c}, []int{0}
	}
	offsets := make([]int, len(c.parts))
	n := 0
	for i, p := range c.parts {
		offsets[i] = n
		n += len(p.Resources)
	}
	return c.parts, offsets
}
