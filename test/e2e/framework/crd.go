package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// InstallCRD creates crd unless it exists and waits until it is
// established and the API server's discovery lists its resource.
func (c *Cluster) InstallCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	client, err := apiextensionsclient.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %q: %w", crd.Name, err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established {
				return cond.Status == apiextensionsv1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %q to be established: %w", crd.Name, err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, v := range crd.Spec.Versions {
			list, err := c.Client.Discovery().ServerResourcesForGroupVersion(crd.Spec.Group + "/" + v.Name)
			if err != nil {
				return false, nil //nolint:nilerr // not listed yet: ask again
			}
			found := false
			for _, r := range list.APIResources {
				found = found || r.Name == crd.Spec.Names.Plural
			}
			if !found {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for discovery to list %q: %w", crd.Name, err)
	}
	return nil
}

// InstallCRDForKubectl installs crd as InstallCRD does, and waits until
// kubectl's discovery lists its resource too, so that kubectl may apply
// objects of its kind.
func (c *Cluster) InstallCRDForKubectl(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if err := c.InstallCRD(ctx, crd); err != nil {
		return err
	}
	return wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		out, err := c.Kubectl("api-resources", "--api-group="+crd.Spec.Group, "-o", "name")
		return err == nil && strings.Contains(out, crd.Spec.Names.Plural+"."+crd.Spec.Group), nil
	})
}

// InstallMonitoringCRDs installs minimal CustomResourceDefinitions for the
// monitoring.coreos.com/v1 ServiceMonitor and PrometheusRule of the
// Prometheus Operator, which accept any spec, so that deploy/servicemonitor,
// deploy/monitoring and deploy/kube-prometheus can be applied without the
// Operator (nothing acts on their objects). It returns once kubectl may
// apply them.
func (c *Cluster) InstallMonitoringCRDs() error {
	ctx, cancel := context.WithTimeout(context.Background(), HangTimeout)
	defer cancel()
	preserve := true
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		lower := strings.ToLower(kind)
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: lower + "s.monitoring.coreos.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "monitoring.coreos.com",
				Names: apiextensionsv1.CustomResourceDefinitionNames{
					Plural: lower + "s", Singular: lower, Kind: kind, ListKind: kind + "List",
				},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"spec": {Type: "object", XPreserveUnknownFields: &preserve},
						},
					}},
				}},
			},
		}
		if err := c.InstallCRDForKubectl(ctx, crd); err != nil {
			return fmt.Errorf("installing the %s CRD: %w", kind, err)
		}
	}
	return nil
}
