// Package kubeconfigs writes the kubeconfigs of several clusters that the
// tests and the benchmark give commands over several contexts.
package kubeconfigs

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Merge writes at path a kubeconfig with a context per kubeconfig of
// sources, named by names (in order), each with its source's current
// context's cluster and user; the first is current.
func Merge(path string, sources, names []string) error {
	out := clientcmdapi.NewConfig()
	for i, source := range sources {
		cfg, err := clientcmd.LoadFromFile(source)
		if err != nil {
			return err
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		if ctx == nil {
			return fmt.Errorf("%s has no current context", source)
		}
		name := names[i]
		out.Clusters[name], out.AuthInfos[name] = cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	out.CurrentContext = names[0]
	return clientcmd.WriteToFile(*out, path)
}

// AddContext adds to the kubeconfig at path a context name with the user
// of the current context, reaching its cluster, or server when not empty.
func AddContext(path, name, server string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return err
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	if cur == nil {
		return fmt.Errorf("%s has no current context", path)
	}
	ctx := *cur
	if server != "" {
		cluster := *cfg.Clusters[cur.Cluster]
		cluster.Server = server
		cfg.Clusters[name] = &cluster
		ctx.Cluster = name
	}
	cfg.Contexts[name] = &ctx
	return clientcmd.WriteToFile(*cfg, path)
}
