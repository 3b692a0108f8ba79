package framework

import (
	"context"
	"fmt"
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
