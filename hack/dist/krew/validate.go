package krew

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Limits krew-index sets on the texts: `kubectl krew search` shows the
// short description in a column, and krew's manifest check flags longer
// lines in the description and caveats.
const (
	MaxShortDescription = 50
	MaxLineLength       = 80
)

var (
	// safeName is krew's rule for plugin names.
	safeName = regexp.MustCompile(`^[\w-]+$`)
	// sha256Hex is krew's rule for sha256 values.
	sha256Hex = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// semVer is semver.org's grammar after krew's required "v".
	semVer = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	// windowsReserved are file names Windows refuses; krew refuses them as plugin names.
	windowsReserved = []string{"CON", "PRN", "AUX", "NUL",
		"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}
)

// SupportedPlatforms are the os/arch pairs selectors are checked against:
// every platform selector must select at least one of them, and none may be
// selected by two platforms.
var SupportedPlatforms = [][2]string{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"}, {"linux", "ppc64le"}, {"linux", "s390x"},
	{"windows", "386"}, {"windows", "amd64"}, {"windows", "arm64"},
}

// ValidVersion reports whether v is a semantic version with the "v" prefix
// krew requires (v1.2.3, v1.2.3-rc.1).
func ValidVersion(v string) bool { return semVer.MatchString(v) }

// ValidSHA256 reports whether s is a sha256 as krew accepts it: 64
// lowercase hexadecimal digits.
func ValidSHA256(s string) bool { return sha256Hex.MatchString(s) }

// Validate checks p, the manifest of the plugin name (the name of its file
// in krew-index without .yaml), and returns every problem found, joined.
func Validate(p *Plugin, name string) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if p.APIVersion != APIVersion {
		add("apiVersion %q: want %s", p.APIVersion, APIVersion)
	}
	if p.Kind != Kind {
		add("kind %q: want %s", p.Kind, Kind)
	}
	if !safeName.MatchString(name) || isWindowsReserved(name) {
		add("plugin name %q is not allowed: it must match %s and not be a reserved Windows file name", name, safeName)
	}
	if p.Metadata.Name != name {
		add("metadata.name %q: the plugin (and its manifest file) is named %q", p.Metadata.Name, name)
	}

	s := p.Spec
	switch {
	case s.Version == "":
		add("spec.version is empty")
	case !ValidVersion(s.Version):
		add("spec.version %q is not a semantic version with the prefix v (v1.2.3)", s.Version)
	}
	switch n := utf8.RuneCountInString(s.ShortDescription); {
	case n == 0:
		add("spec.shortDescription is empty")
	case strings.ContainsAny(s.ShortDescription, "\r\n"):
		add("spec.shortDescription has a line break")
	case n > MaxShortDescription:
		add("spec.shortDescription has %d characters, more than %d", n, MaxShortDescription)
	}
	if strings.TrimSpace(s.Description) == "" {
		add("spec.description is empty")
	}
	errs = append(errs, lineLengths("spec.description", s.Description)...)
	errs = append(errs, lineLengths("spec.caveats", s.Caveats)...)
	if err := httpsURL(s.Homepage); err != nil {
		add("spec.homepage: %v", err)
	}

	if len(s.Platforms) == 0 {
		add("spec.platforms is empty")
	}
	for i, pl := range s.Platforms {
		for _, err := range validatePlatform(pl) {
			add("spec.platforms[%d]: %v", i, err)
		}
	}
	errs = append(errs, overlaps(s.Platforms)...)
	return errors.Join(errs...)
}

func isWindowsReserved(name string) bool {
	for _, r := range windowsReserved {
		if strings.EqualFold(r, name) {
			return true
		}
	}
	return false
}

// lineLengths flags lines longer than MaxLineLength, except a single word
// (a URL) alone on its line, as krew's check does.
func lineLengths(field, s string) []error {
	var errs []error
	for i, line := range strings.Split(s, "\n") {
		if utf8.RuneCountInString(line) > MaxLineLength && strings.Contains(strings.TrimSpace(line), " ") {
			errs = append(errs, fmt.Errorf("%s: line %d is longer than %d characters", field, i+1, MaxLineLength))
		}
	}
	return errs
}

func httpsURL(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an https URL", s)
	}
	return nil
}

func validatePlatform(pl Platform) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := httpsURL(pl.URI); err != nil {
		add("uri: %v", err)
	}
	switch {
	case pl.SHA256 == "":
		add("sha256 is empty")
	case !ValidSHA256(pl.SHA256):
		add("sha256 %q is not 64 lowercase hexadecimal digits", pl.SHA256)
	}
	if pl.Bin == "" {
		add("bin is empty")
	}
	if pl.Files != nil && len(pl.Files) == 0 {
		add("files is empty: leave it out or list files")
	}
	for j, f := range pl.Files {
		if f.From == "" {
			add("files[%d].from is empty", j)
		}
		if f.To == "" {
			add("files[%d].to is empty", j)
		} else if path.Clean(f.To) != f.To {
			add("files[%d].to %q is not a clean path (%q)", j, f.To, path.Clean(f.To))
		}
	}
	if err := validateSelector(pl.Selector); err != nil {
		add("selector: %v", err)
	} else if goos, _ := findMatch(pl.Selector); goos == "" {
		add("selector %s selects none of the supported platforms", describe(pl.Selector))
	}
	return errs
}

func validateSelector(sel *Selector) error {
	if sel == nil {
		return errors.New("missing")
	}
	if sel.MatchLabels == nil && len(sel.MatchExpressions) == 0 {
		return errors.New("empty")
	}
	if sel.MatchLabels != nil && len(sel.MatchLabels) == 0 {
		return errors.New("matchLabels is given but empty")
	}
	if sel.MatchExpressions != nil && len(sel.MatchExpressions) == 0 {
		return errors.New("matchExpressions is given but empty")
	}
	for k := range sel.MatchLabels {
		if k != "os" && k != "arch" {
			return fmt.Errorf("key %q: only os and arch are supported", k)
		}
	}
	for _, r := range sel.MatchExpressions {
		if r.Key != "os" && r.Key != "arch" {
			return fmt.Errorf("key %q: only os and arch are supported", r.Key)
		}
	}
	_, err := labelSelector(sel)
	return err
}

func labelSelector(sel *Selector) (labels.Selector, error) {
	ls := &metav1.LabelSelector{MatchLabels: sel.MatchLabels}
	for _, r := range sel.MatchExpressions {
		ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values,
		})
	}
	return metav1.LabelSelectorAsSelector(ls)
}

// Matches reports whether the selector selects os/arch.
func (s *Selector) Matches(goos, goarch string) bool {
	if s == nil {
		return false
	}
	sel, err := labelSelector(s)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set{"os": goos, "arch": goarch})
}

func findMatch(sel *Selector) (string, string) {
	for _, p := range SupportedPlatforms {
		if sel.Matches(p[0], p[1]) {
			return p[0], p[1]
		}
	}
	return "", ""
}

func describe(sel *Selector) string {
	if sel == nil {
		return "<none>"
	}
	if ls, err := labelSelector(sel); err == nil {
		return fmt.Sprintf("%q", ls.String())
	}
	return fmt.Sprintf("%+v", *sel)
}

// overlaps reports each supported os/arch that two platforms select.
func overlaps(platforms []Platform) []error {
	var errs []error
	for _, p := range SupportedPlatforms {
		var idx []int
		for i, pl := range platforms {
			if pl.Selector.Matches(p[0], p[1]) {
				idx = append(idx, i)
			}
		}
		if len(idx) > 1 {
			errs = append(errs, fmt.Errorf("spec.platforms %v all select os=%s arch=%s", idx, p[0], p[1]))
		}
	}
	return errs
}
