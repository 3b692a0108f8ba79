package workload

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DatabaseGroup is the API group of the workload's custom resource.
const DatabaseGroup = "demo.kubectl-informer.io"

// DatabaseResource is the GroupVersionResource of the Database custom resource.
var DatabaseResource = schema.GroupVersionResource{Group: DatabaseGroup, Version: "v1", Resource: "databases"}

// DatabaseCRD returns the CustomResourceDefinition of Database: namespaced,
// short name "db", category "demo", with a structural schema and a status
// subresource.
func DatabaseCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: DatabaseResource.Resource + "." + DatabaseGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: DatabaseGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "databases", Singular: "database", Kind: "Database", ListKind: "DatabaseList",
				ShortNames: []string{"db"}, Categories: []string{"demo"},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Engine", Type: "string", JSONPath: ".spec.engine"},
					{Name: "Phase", Type: "string", JSONPath: ".status.phase"},
				},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Required: []string{"engine"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"engine":   {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"postgres"`)}, {Raw: []byte(`"mysql"`)}, {Raw: []byte(`"redis"`)}}},
							"version":  str,
							"replicas": {Type: "integer", Minimum: ptr(1.0)},
							"storage":  str,
							"backup": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"enabled":  {Type: "boolean"},
								"schedule": str,
							}},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"phase":         str,
							"readyReplicas": {Type: "integer"},
						}},
					},
				}},
			}},
		},
	}
}
