package app

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/version"
)

// run executes the root command with args and returns the exit code, stdout and stderr.
func run(args ...string) (int, string, string) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := NewRootCommand(streams)
	cmd.SetArgs(args)
	code := Execute(cmd, streams)
	return code, out.String(), errOut.String()
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    string // substring
		stderr    string // substring
		emptyErrs bool
	}{
		{name: "version", args: []string{"version", "--client"}, code: ExitOK, stdout: "kubectl-informer dev (commit ", emptyErrs: true},
		{name: "help lists verbs", args: []string{"--help"}, code: ExitOK, stdout: "version     Print the plugin's version"},
		{name: "help shows exit codes", args: []string{"--help"}, code: ExitOK, stdout: "2  usage or expression error"},
		{name: "help uses the kubectl form", args: []string{"--help"}, code: ExitOK, stdout: "kubectl informer [command]"},
		{name: "unknown verb", args: []string{"bogus"}, code: ExitUsage, stderr: `error: unknown command "bogus"`},
		{name: "unknown flag", args: []string{"version", "--bogus"}, code: ExitUsage, stderr: "error: unknown flag: --bogus"},
		{name: "extra argument", args: []string{"version", "x"}, code: ExitUsage, stderr: `error: unknown command "x"`},
		{name: "bad output", args: []string{"version", "-o", "xml", "--client"}, code: ExitUsage, stderr: "error: --output must be 'yaml' or 'json'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", out, tt.stdout)
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.stderr)
			}
			if tt.emptyErrs && errOut != "" {
				t.Errorf("stderr %q, want nothing", errOut)
			}
		})
	}
}

func TestVersionJSON(t *testing.T) {
	code, out, _ := run("version", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit code %d", code)
	}
	var got version.Info
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	want := version.Info{Version: "dev", Commit: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestVersionStamped(t *testing.T) {
	defer func(v, c string) { version.Version, version.Commit = v, c }(version.Version, version.Commit)
	version.Version, version.Commit = "v1.2.3", "abc1234"
	var out bytes.Buffer
	o := &VersionOptions{IOStreams: genericiooptions.IOStreams{Out: &out}, Client: true}
	if err := o.Run(); err != nil {
		t.Fatal(err)
	}
	want := "kubectl-informer v1.2.3 (commit abc1234, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}
