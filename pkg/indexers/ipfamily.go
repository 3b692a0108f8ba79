package indexers

import (
	"net/netip"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// ipFamily(s) is the family of the address s as Go's netip.ParseAddr reads
// it, once unmapped: "4" for an IPv4 address and for an IPv4-mapped IPv6
// one (::ffff:1.2.3.4), "6" for an IPv6 address (with or without a zone:
// fe80::1%eth0), and "" for a string that is no address. This is how
// kube-state-metrics labels a pod's addresses; Kubernetes' isIP() and ip()
// refuse mapped and zoned addresses, which a pod's status may still hold:
//
//	ipFamily("10.0.0.1") == "4"
//	ipFamily("::ffff:10.0.0.1") == "4"
//	ipFamily("fd00::1") == "6"
//	ipFamily("10.0.0.300") == ""
const ipFamilyOverload = "ip_family_string"

// ipFamilyFunctions declares ipFamily().
func ipFamilyFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function("ipFamily",
			cel.Overload(ipFamilyOverload, []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(unaryOf(func(s types.String) ref.Val {
					return types.String(IPFamily(string(s)))
				})))),
	}
}

// IPFamily is ipFamily() in Go: "4", "6" or "".
func IPFamily(s string) string {
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	switch addr = addr.Unmap(); {
	case addr.Is4():
		return "4"
	case addr.Is6():
		return "6"
	}
	return ""
}
