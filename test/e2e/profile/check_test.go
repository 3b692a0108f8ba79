package profile_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestProfileChecks checks every expression of every file of every
// built-in profile against the API server's schemas, as a user's config is
// checked at each load, and compares the size bounds the schemas give the
// expressions that track their cost with those the profile holds
// (profiles.SizeBounds; UPDATE_SIZE_BOUNDS=1 writes them). The exporter
// checks a profile's expressions against the schemas only where the
// profile does not know their bounds: this is their check, once, against
// the Kubernetes version the project builds.
func TestProfileChecks(t *testing.T) {
	resolver := cluster.Resolver(t)
	for _, name := range profiles.Names() {
		files, err := profiles.Files(name)
		if err != nil {
			t.Fatal(err)
		}
		env, err := indexers.NewEnv()
		if err != nil {
			t.Fatal(err)
		}
		bounds := []exporter.SizeBound{}
		for _, f := range files {
			// Compile, unlike Sources.Load, makes a config of the file as
			// of a user's, checked whole.
			c, err := exporter.Compile(f.Path, f.Data, env)
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			infos, schemaErrs, err := exporter.ResolveResources(c, resolver)
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			for _, err := range schemaErrs {
				t.Errorf("%s: %v", f.Path, err)
			}
			for _, info := range infos {
				if info.Schema == nil {
					t.Errorf("%s: the API server publishes no schema of %s: its expressions are not checked", f.Path, info.Resource)
				}
			}
			warnings, err := c.CheckResources(env, infos)
			if err != nil {
				t.Errorf("profile %s: %v", name, err)
			}
			for _, w := range warnings {
				t.Logf("profile %s: %s", name, w)
			}
			bounds = append(bounds, c.SizeBounds()...)
		}
		env.ForgetSchemas()
		got, err := json.MarshalIndent(bounds, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		if os.Getenv("UPDATE_SIZE_BOUNDS") != "" {
			file := filepath.Join("..", "..", "..", "pkg", "exporter", "profiles", name, "size-bounds.json")
			if err := os.WriteFile(file, got, 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := profiles.SizeBounds(name); !bytes.Equal(got, want) {
			t.Errorf("profile %s: the size bounds of its expressions are not those the profile holds; write them with UPDATE_SIZE_BOUNDS=1 go test -run TestProfileChecks ./test/e2e/profile/\ngot:\n%s", name, got)
		}
	}
}
