// Package krew reads, writes and checks krew plugin manifests
// (krew.googlecontainertools.github.com/v1alpha2 Plugin) and the release
// archives they point at, with the rules krew and krew-index apply: those of
// krew's manifest validation (apiVersion, kind, name, semantic version,
// short description, platforms with a selector, uri, sha256, bin and files),
// no two platforms selecting the same os/arch, and an installation that finds
// the bin and every file in the archive.
package krew

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	yaml "go.yaml.in/yaml/v3"
)

// Manifest identification.
const (
	APIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	Kind       = "Plugin"
)

// Plugin is a krew plugin manifest. Fields are those of krew's
// index.Plugin that a manifest may set.
type Plugin struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   Metadata `yaml:"metadata"`
	Spec       Spec     `yaml:"spec"`
}

// Metadata names the plugin: "kubectl NAME".
type Metadata struct {
	Name string `yaml:"name"`
}

// Spec describes the plugin and where each platform downloads it from.
type Spec struct {
	Version          string     `yaml:"version"`
	Homepage         string     `yaml:"homepage,omitempty"`
	ShortDescription string     `yaml:"shortDescription"`
	Description      string     `yaml:"description"`
	Caveats          string     `yaml:"caveats,omitempty"`
	Platforms        []Platform `yaml:"platforms"`
}

// Platform is one installation candidate, chosen by its selector.
type Platform struct {
	Selector *Selector       `yaml:"selector"`
	URI      string          `yaml:"uri"`
	SHA256   string          `yaml:"sha256"`
	Bin      string          `yaml:"bin"`
	Files    []FileOperation `yaml:"files,omitempty"`
}

// Selector is a label selector over the labels os and arch.
type Selector struct {
	MatchLabels      map[string]string `yaml:"matchLabels,omitempty"`
	MatchExpressions []Requirement     `yaml:"matchExpressions,omitempty"`
}

// Requirement is a label selector requirement (In, NotIn, Exists, DoesNotExist).
type Requirement struct {
	Key      string   `yaml:"key"`
	Operator string   `yaml:"operator"`
	Values   []string `yaml:"values,omitempty"`
}

// FileOperation copies the archive entries matching From (a file or a
// glob) to To in the installation directory.
type FileOperation struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

// MarshalYAML writes matchLabels with os before arch, as manifests are
// usually written; yaml would sort the keys otherwise.
func (s Selector) MarshalYAML() (any, error) {
	node := &yaml.Node{Kind: yaml.MappingNode}
	if len(s.MatchLabels) > 0 {
		labels := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range labelOrder(s.MatchLabels) {
			labels.Content = append(labels.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Value: k},
				&yaml.Node{Kind: yaml.ScalarNode, Value: s.MatchLabels[k]})
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "matchLabels"}, labels)
	}
	if len(s.MatchExpressions) > 0 {
		var exprs yaml.Node
		if err := exprs.Encode(s.MatchExpressions); err != nil {
			return nil, err
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "matchExpressions"}, &exprs)
	}
	return node, nil
}

// labelOrder returns the keys of m: os, arch, then any other in order.
func labelOrder(m map[string]string) []string {
	var keys []string
	for _, k := range []string{"os", "arch"} {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range m {
		if k != "os" && k != "arch" {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(keys, rest...)
}

// Parse reads a manifest. Unknown fields and trailing documents are errors.
func Parse(data []byte) (*Plugin, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Plugin
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the manifest is empty")
		}
		return nil, err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("a manifest holds exactly one YAML document")
	}
	return &p, nil
}

// Load reads the manifest in path.
func Load(path string) (*Plugin, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the manifest the user named
	if err != nil {
		return nil, err
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Marshal writes the manifest as YAML indented by two spaces, lists not
// indented under their key, as krew-index's manifests are; multi-line texts
// become literal blocks.
func Marshal(p *Plugin) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// OSArch returns the os and arch a platform's matchLabels select ("" when
// the selector leaves them open).
func (pl Platform) OSArch() (goos, goarch string) {
	if pl.Selector == nil {
		return "", ""
	}
	return pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
}
