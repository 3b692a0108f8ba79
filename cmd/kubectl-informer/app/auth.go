package app

import (
	// The client-go auth-provider plugins: a kubeconfig whose user has
	// `auth-provider: {name: oidc, ...}` authenticates as it does with kubectl
	// instead of failing with `no Auth Provider found for name "oidc"`. (The
	// azure and gcp providers were removed from client-go; their users now use
	// exec credential plugins, which need no import.)
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)
