package cluster

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tkg-e2e/harness/framework/artifacts"
	"github.com/tkg-e2e/harness/framework/kube"
)

// podLogPath is where a container's log goes, relative to the artifacts root.
func (c *collection) podLogPath(ns, pod, container string, previous bool) string {
	name := artifacts.SafeName(container)
	if previous {
		name += ".previous"
	}
	return path.Join(c.folder, "pods", artifacts.SafeName(ns), artifacts.SafeName(pod), name+".log")
}

// podLogItems returns one item per log of every started container: the
// current one, and the previous one when the container restarted (a crash
// loop's cause is in the log of the run that crashed). Containers that never
// started have no log; they are listed as not collected with their waiting
// reason, so their absence is explained.
func (c *collection) podLogItems(cl *kube.Cluster, pods []corev1.Pod) []artifacts.Item {
	var items []artifacts.Item
	for i := range pods {
		p := &pods[i]
		keepTail := podNotReady(p)
		statuses := map[string]corev1.ContainerStatus{}
		for _, s := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			statuses[s.Name] = s
		}
		for _, ctr := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			s, ok := statuses[ctr.Name]
			started := ok && (s.State.Running != nil || s.State.Terminated != nil || s.RestartCount > 0)
			id := p.Namespace + "/" + p.Name + "/" + ctr.Name
			if !started {
				reason := "no status yet"
				if ok && s.State.Waiting != nil {
					reason = "waiting: " + s.State.Waiting.Reason
				}
				c.r.Skip("logs "+id, "container never started ("+reason+")")
				continue
			}
			items = append(items, c.podLogItem(cl, p.Namespace, p.Name, ctr.Name, false, keepTail))
			if s.LastTerminationState.Terminated != nil {
				items = append(items, c.podLogItem(cl, p.Namespace, p.Name, ctr.Name, true, keepTail))
			}
		}
	}
	return items
}

func (c *collection) podLogItem(cl *kube.Cluster, ns, pod, container string, previous, keepTail bool) artifacts.Item {
	rel := c.podLogPath(ns, pod, container, previous)
	name := "logs " + ns + "/" + pod + "/" + container
	if previous {
		name += " (previous)"
	}
	return artifacts.Item{Name: name, Run: func(ctx context.Context) error {
		req := cl.Clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous, Timestamps: true})
		rc, err := req.Stream(ctx)
		if err != nil {
			return logGone(err, previous)
		}
		defer rc.Close()
		f, err := c.w.CreateTail(rel)
		if err != nil {
			return err
		}
		var dst io.Writer = f
		var tail *tailBuffer
		if keepTail {
			tail = &tailBuffer{max: 16 << 10}
			dst = io.MultiWriter(f, tail)
		}
		_, cerr := io.Copy(dst, rc)
		if err := f.Close(); cerr == nil {
			cerr = err
		}
		if tail != nil {
			c.tails.Store(rel, c.w.Redact(tail.lines(c.in.LogTailLines)))
		}
		if cerr != nil {
			return fmt.Errorf("reading log: %w", cerr)
		}
		return nil
	}}
}

// logGone tells a log that went away since the pods were listed from one
// that could not be read: the pod deleted (its namespace cleaned up while
// the collection ran), or, for a previous log, the kubelet's "previous
// terminated container ... not found" once that run was replaced or the
// pod restarted again. Seen on a real cluster while a crash-looping pod's
// namespace was deleted beside the collection.
func logGone(err error, previous bool) error {
	switch {
	case apierrors.IsNotFound(err):
		return &artifacts.GoneError{Why: "the pod was deleted (" + err.Error() + ")"}
	case previous && strings.Contains(err.Error(), "previous terminated container") && strings.Contains(err.Error(), "not found"):
		return &artifacts.GoneError{Why: "the container's previous run is no longer kept (" + err.Error() + ")"}
	}
	return err
}

// tailBuffer keeps the last bytes written, for the log tails in SUMMARY.md.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lines(n int) string {
	lines := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(t.buf) > t.max && len(lines) > 1 {
		lines = lines[1:] // partial first line
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
