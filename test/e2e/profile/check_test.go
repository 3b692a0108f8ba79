package profile_test

import (
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestProfileChecks checks every expression of every file of every
// built-in profile against the API server's schemas, as a user's config is
// checked at each load. The exporter checks a profile's expressions only
// where the schema bounds their cost (see exporter.Compiled.CheckResources):
// this is the check of the others, once, against the Kubernetes version the
// project builds.
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
		}
		env.ForgetSchemas()
	}
}
