package health

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tkg-e2e/harness/framework/assert"
	"github.com/tkg-e2e/harness/framework/kube"
)

// APIServiceListGVK lists kube.APIServiceGVK as unstructured: the check
// needs four fields of them.
var APIServiceListGVK = kube.APIServiceGVK.GroupVersion().WithKind("APIServiceList")

// apiService holds what the check reads of an APIService.
type apiService struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		// Service is nil for an API the kube-apiserver serves itself.
		Service *struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"service"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type, Status, Reason, Message, LastTransitionTime string
		} `json:"conditions"`
	} `json:"status"`
}

// apiServiceRows are one row per APIService that is not Available, or one
// OK row for all. An unavailable aggregated API fails discovery for every
// client, which is why kubectl and namespace deletion break with it.
func apiServiceRows(ctx context.Context, c client.Client, r *Report) ([]assert.Row, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(APIServiceListGVK)
	if err := c.List(ctx, list); err != nil {
		row, err := readError("APIServices", "APIServices (apiregistration.k8s.io/v1)", err)
		return []assert.Row{row}, err
	}
	var bad []assert.Row
	var aggregated []string
	for _, u := range list.Items {
		var a apiService
		if err := fromUnstructured(u.Object, &a); err != nil {
			bad = append(bad, assert.Row{Name: "APIService " + u.GetName(), Verdict: assert.Error, Detail: err.Error()})
			continue
		}
		if s := a.Spec.Service; s != nil {
			aggregated = append(aggregated, fmt.Sprintf("%s (%s/%s)", a.Metadata.Name, s.Namespace, s.Name))
		}
		if ok, why := available(&a); !ok {
			row := assert.Row{Name: "APIService " + a.Metadata.Name, Verdict: assert.NotReady, Detail: why}
			if serviceNotFound(&a) {
				// Nothing creates a Service because an APIService names it:
				// whoever installed the one installs the other.
				row.Stuck = fmt.Sprintf("APIService %s is not available: %s", a.Metadata.Name, why)
			}
			bad = append(bad, row)
		}
	}
	r.APIServices, r.UnavailableAPIServices = len(list.Items), len(bad)
	if len(bad) > 0 {
		sort.Slice(bad, func(i, j int) bool { return bad[i].Name < bad[j].Name })
		return bad, nil
	}
	sort.Strings(aggregated)
	detail := "aggregated: " + assert.Or(strings.Join(aggregated, ", "), "none")
	return []assert.Row{{Name: "APIServices", Verdict: assert.OK,
		Detail: fmt.Sprintf("%d APIServices available; %s", len(list.Items), detail)}}, nil
}

func available(a *apiService) (bool, string) {
	for _, c := range a.Status.Conditions {
		if c.Type != "Available" {
			continue
		}
		if c.Status == "True" {
			return true, ""
		}
		why := fmt.Sprintf("Available=%s (%s: %s)", c.Status, assert.Or(c.Reason, "no reason"), assert.Or(assert.OneLine(c.Message), "no message"))
		if c.LastTransitionTime != "" {
			why += " since " + c.LastTransitionTime
		}
		if s := a.Spec.Service; s != nil {
			why += fmt.Sprintf("; served by Service %s/%s: check its pods and endpoints", s.Namespace, s.Name)
		}
		return false, why
	}
	return false, "no Available condition yet (the kube-apiserver has not checked it)"
}

func serviceNotFound(a *apiService) bool {
	for _, c := range a.Status.Conditions {
		if c.Type == "Available" && c.Status != "True" && c.Reason == "ServiceNotFound" {
			return true
		}
	}
	return false
}

func fromUnstructured(obj map[string]any, into any) error {
	b, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		return fmt.Errorf("cannot read it: %w", err)
	}
	return nil
}
