package kube

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tkg-e2e/harness/framework/wait"
)

// NodesInput is the input of WaitNodesReady.
type NodesInput struct {
	Cluster *Cluster
	// Count is how many nodes must exist and be Ready (0: at least one, all Ready).
	Count    int
	What     string
	Timeout  time.Duration
	Interval time.Duration
	Progress io.Writer
	Prefix   string
}

// WaitNodesReady waits until Count nodes exist and all nodes are Ready. The
// state names the nodes that are not, with the kubelet's reason (a CAPD node
// without CNI says "container runtime network not ready").
func WaitNodesReady(ctx context.Context, in NodesInput) error {
	if in.Cluster == nil || in.What == "" || in.Timeout <= 0 {
		return fmt.Errorf("kube.WaitNodesReady: invalid input: Cluster, What and Timeout (> 0) are required")
	}
	return wait.For(ctx, wait.Options{What: in.What, Timeout: in.Timeout, Interval: in.Interval,
		Progress: in.Progress, Prefix: in.Prefix},
		func(ctx context.Context) (bool, string, error) {
			nodes := corev1.NodeList{}
			if err := in.Cluster.Client.List(ctx, &nodes); err != nil {
				return false, "", err
			}
			ready, notReady := NodesSummary(nodes.Items)
			want := max(in.Count, 1)
			state := fmt.Sprintf("%d/%d nodes Ready", len(ready), max(want, len(nodes.Items)))
			if len(notReady) > 0 {
				state += ": " + strings.Join(notReady, ", ")
			}
			if len(nodes.Items) < want {
				state += fmt.Sprintf(" (%d of %d nodes registered)", len(nodes.Items), want)
			}
			return len(notReady) == 0 && len(nodes.Items) >= want, state, nil
		})
}

// NodesSummary splits nodes into Ready names and "name NotReady (reason)" lines.
func NodesSummary(nodes []corev1.Node) (ready, notReady []string) {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		ok, why := NodeReady(&n)
		if ok {
			ready = append(ready, n.Name)
		} else {
			notReady = append(notReady, n.Name+" "+why)
		}
	}
	return ready, notReady
}

// NodeReady reports a node's Ready condition and, if not Ready, why.
func NodeReady(n *corev1.Node) (bool, string) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return true, ""
			}
			return false, fmt.Sprintf("NotReady (%s: %s)", c.Reason, truncate(c.Message, 100))
		}
	}
	return false, "NotReady (no Ready condition yet)"
}
