package cluster

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
)

// eventsItem writes all events of the cluster as one table sorted by time:
// read top to bottom it is the story of the run as the cluster saw it, which
// per-object YAML cannot give.
func (c *collection) eventsItem(cl *kube.Cluster) artifacts.Item {
	rel := path.Join(c.folder, "events.txt")
	return artifacts.Item{Name: "events", Run: func(ctx context.Context) error {
		list, err := cl.Clientset.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		evs := list.Items
		sort.SliceStable(evs, func(i, j int) bool { return eventTime(&evs[i]).Before(eventTime(&evs[j])) })
		f, err := c.w.CreateTail(rel)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "# %d events, oldest first. TIME TYPE REASON OBJECT (COUNT) SOURCE: MESSAGE\n", len(evs))
		for i := range evs {
			e := &evs[i]
			obj := e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name
			if e.InvolvedObject.Namespace != "" {
				obj = e.InvolvedObject.Namespace + "/" + obj
			}
			count := ""
			if e.Count > 1 {
				count = fmt.Sprintf(" (x%d)", e.Count)
			} else if e.Series != nil && e.Series.Count > 1 {
				count = fmt.Sprintf(" (x%d)", e.Series.Count)
			}
			src := e.Source.Component
			if src == "" {
				src = e.ReportingController
			}
			fmt.Fprintf(f, "%s %-7s %s %s%s %s: %s\n", eventTime(e).UTC().Format(time.RFC3339), e.Type, e.Reason, obj, count, src,
				strings.Join(strings.Fields(e.Message), " "))
		}
		return f.Close()
	}}
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
