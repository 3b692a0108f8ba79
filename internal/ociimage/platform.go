package ociimage

import (
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Platform is an os/arch[/variant] the image is built for.
type Platform struct{ OS, Arch, Variant string }

func (p Platform) String() string {
	if p.Variant == "" {
		return p.OS + "/" + p.Arch
	}
	return p.OS + "/" + p.Arch + "/" + p.Variant
}

// DefaultPlatforms are kube-state-metrics' image platforms, in the index's
// order. 32-bit ARM is ARMv7 with hardware floating point (GOARM=7), the
// variant kube-state-metrics' linux/arm image and its distroless base are;
// arm64 carries the variant v8 as distroless' index does.
var DefaultPlatforms = []Platform{
	{OS: "linux", Arch: "amd64"},
	{OS: "linux", Arch: "arm64", Variant: "v8"},
	{OS: "linux", Arch: "arm", Variant: "v7"},
	{OS: "linux", Arch: "ppc64le"},
	{OS: "linux", Arch: "s390x"},
}

// ParsePlatforms reads a list of os/arch[/variant] separated by commas or
// spaces; "" is every default platform. linux/arm means linux/arm/v7 and
// linux/arm64 linux/arm64/v8. The result is in DefaultPlatforms' order.
func ParsePlatforms(s string) ([]Platform, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 {
		return slices.Clone(DefaultPlatforms), nil
	}
	want := map[Platform]bool{}
	for _, f := range fields {
		p, ok := lookupPlatform(f)
		if !ok {
			names := make([]string, len(DefaultPlatforms))
			for i, d := range DefaultPlatforms {
				names[i] = d.String()
			}
			return nil, fmt.Errorf("platform %q: want os/arch, one of %s", f, strings.Join(names, ", "))
		}
		want[p] = true
	}
	var out []Platform
	for _, p := range DefaultPlatforms {
		if want[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

func lookupPlatform(s string) (Platform, bool) {
	for _, p := range DefaultPlatforms {
		if s == p.String() || s == p.OS+"/"+p.Arch {
			return p, true
		}
	}
	return Platform{}, false
}

// GoEnv is the environment of `go build` for p: GOOS and GOARCH, GOARM=7
// for arm, and each architecture's level pinned to Go's default (GOAMD64=v1,
// GOARM64=v8.0, GOPPC64=power8) so that a developer's own setting cannot
// change the binary, and the image runs on every machine of its platform.
func (p Platform) GoEnv() []string {
	env := []string{"GOOS=" + p.OS, "GOARCH=" + p.Arch}
	switch p.Arch {
	case "amd64":
		env = append(env, "GOAMD64=v1")
	case "arm64":
		env = append(env, "GOARM64=v8.0")
	case "arm":
		env = append(env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	case "ppc64le":
		env = append(env, "GOPPC64=power8")
	}
	return env
}

// OCI is p as an image index's descriptor and a config name it.
func (p Platform) OCI() *v1.Platform {
	return &v1.Platform{OS: p.OS, Architecture: p.Arch, Variant: p.Variant}
}
