package queryserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// FuzzRequest feeds arbitrary bodies to the decoding and validation a
// query server runs on POST /v1/query, within its body limit: a body is
// refused with an error or decoded into a query that prints from no file,
// with a template no longer than the bound, and that the server accepts
// again once encoded as a client sends it; nothing panics.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		`{"resources":["pods"]}`,
		`{"resources":["pods"],"namespace":"a","where":"object.metadata.name == 'x'","output":"json"}`,
		`{"resources":["pods"],"output":"go-template-file","print":{"template":"/var/run/secrets/kubernetes.io/serviceaccount/token"},"where":"false"}`,
		`{"resources":["pods"],"output":"go-template-file=/etc/passwd"}`,
		`{"resources":["pods"],"output":"templatefile","print":{"template":"/etc/passwd"}}`,
		`{"resources":["pods"],"output":"jsonpath-file=/etc/passwd"}`,
		`{"resources":["pods"],"output":"custom-columns-file=/etc/passwd"}`,
		`{"resources":["pods"],"output":"GO-TEMPLATE-FILE=/etc/passwd"}`,
		`{"resources":["pods"],"print":{"template":"{{range .items}}{{.metadata.name}}{{end}}"}}`,
		`{"resources":["pods"],"output":"jsonpath={..a..b..c}"}`,
		`{"resources":["pods"],"output":"custom-columns=NAME:.metadata.name"}`,
		`{"resources":["pods"],"output":"go-template={{define \"a\"}}{{template \"a\" .}}{{end}}{{template \"a\" .}}"}`,
		`{"resources":["pods"],"by":[{"index":"byNode","value":"n1"}],"indexes":[{"name":"byNode","expr":"object.spec.nodeName"}]}`,
		`{"resources":["pods"],"unknown":1}`,
		`{"resources":"pods"}`, `{}`, `[]`, `null`, ``, `{"resources":["pods"]} trailing`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := DecodeQuery(io.LimitReader(bytes.NewReader(data), maxBodyBytes))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if err := query.TemplateFile(q.Output); err != nil {
			t.Fatalf("a query printed from a file was accepted: output %q", q.Output)
		}
		if len(q.Print.Template) > query.MaxTemplateBytes || len(q.Output) > query.MaxTemplateBytes+len("custom-columns=") {
			t.Fatalf("a template of %d bytes (output %d) was accepted", len(q.Print.Template), len(q.Output))
		}
		_ = q.Request()
		body, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeQuery(bytes.NewReader(body)); err != nil {
			t.Fatalf("the query as a client encodes it is refused: %v\n%s", err, body)
		}
	})
}

// TestDecodeQueryRefusesFiles: every output format that reads a file is
// refused, with the same usage error whatever the path, naming the format
// to send the text with.
func TestDecodeQueryRefusesFiles(t *testing.T) {
	for _, format := range []string{"go-template-file", "templatefile", "jsonpath-file", "custom-columns-file"} {
		var msgs []string
		for _, path := range []string{"/etc/passwd", "/nonexistent/file", "/var/run/secrets/kubernetes.io/serviceaccount/token"} {
			for _, body := range []string{
				`{"resources":["pods"],"where":"false","output":"` + format + `","print":{"template":"` + path + `"}}`,
				`{"resources":["pods"],"output":"` + format + `=` + path + `"}`,
			} {
				_, err := DecodeQuery(strings.NewReader(body))
				var tfe *query.TemplateFileError
				if !errors.As(err, &tfe) || !query.IsUsageError(err) {
					t.Fatalf("%s: got %v, want a usage error naming the format", body, err)
				}
				msgs = append(msgs, err.Error())
			}
		}
		for _, m := range msgs[1:] {
			if m != msgs[0] {
				t.Errorf("-o %s: the errors differ by path:\n%s\n%s", format, msgs[0], m)
			}
		}
	}
}
