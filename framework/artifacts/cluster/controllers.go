package cluster

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tkg-e2e/harness/framework/artifacts"
)

// writeControllers lists the pods of the controllers that run a lifecycle
// (Cluster API and its providers, cert-manager, kapp-controller) with where
// their logs are: the first place to look when a Cluster does not progress.
func (c *collection) writeControllers(pods []corev1.Pod) error {
	var b strings.Builder
	b.WriteString("# Controller pods and their logs (relative to the artifacts root)\n")
	n := 0
	for i := range pods {
		p := &pods[i]
		if !artifacts.IsControllerNamespace(p.Namespace) {
			continue
		}
		n++
		restarts := int32(0)
		for _, s := range p.Status.ContainerStatuses {
			restarts += s.RestartCount
		}
		fmt.Fprintf(&b, "%s/%s phase=%s ready=%t restarts=%d node=%s\n", p.Namespace, p.Name, p.Status.Phase, !podNotReady(p), restarts, p.Spec.NodeName)
		for _, ctr := range p.Spec.Containers {
			fmt.Fprintf(&b, "    %s\n", c.podLogPath(p.Namespace, p.Name, ctr.Name, false))
		}
	}
	if n == 0 {
		b.WriteString("(no controller pods: Cluster API is not installed in this cluster)\n")
	}
	return c.w.WriteFile(path.Join(c.folder, "controllers.txt"), []byte(b.String()))
}
