package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// logTimeout bounds one log request: the report is already late when logs
// are fetched, and a node that does not answer must not hold it back.
const logTimeout = 10 * time.Second

// addLogs attaches the tail of the failing containers' logs to the not-ready
// pods of a report, of rows and unlisted workloads alike. A crashlooping
// container's current run is usually empty or a few lines old, so the
// previous (crashed) run is read when there is one.
func addLogs(ctx context.Context, p *probe, r *Report) {
	lines := p.check.LogLines
	if lines <= 0 {
		lines = 20
	}
	red, cs := p.opts.Redactor, p.target.Cluster.Clientset
	maxPods := p.check.MaxLogPods
	if maxPods <= 0 {
		maxPods = 3
	}
	for _, res := range r.notReady() {
		fetched := 0
		for j := range res.Pods {
			ps := &res.Pods[j]
			if ps.Ready || len(ps.Problems) == 0 || fetched >= maxPods {
				continue
			}
			fetched++
			if cs == nil {
				ps.Logs = append(ps.Logs, ContainerLog{Container: "*", Err: "not fetched (no clientset given)"})
				continue
			}
			ps.Logs = podLogs(ctx, cs, ps.Namespace, ps.Name, lines)
			for k := range ps.Logs {
				ps.Logs[k].Lines = red.String(ps.Logs[k].Lines)
				ps.Logs[k].Err = red.String(ps.Logs[k].Err)
			}
		}
	}
}

func podLogs(ctx context.Context, cs kubernetes.Interface, ns, name string, lines int64) []ContainerLog {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return []ContainerLog{{Container: "*", Err: err.Error()}}
	}
	var out []ContainerLog
	statuses := slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
	for _, st := range statuses {
		if st.Ready || (st.State.Terminated != nil && st.State.Terminated.ExitCode == 0) {
			continue
		}
		if st.State.Running == nil && st.RestartCount == 0 && st.State.Terminated == nil {
			// Never started (image pull, config error): there is no log, and the
			// waiting reason in the report already says why.
			continue
		}
		// Which run holds the crash: while the container waits in back-off it is
		// the previous run; once the kubelet has started it again (running or
		// just terminated) the current one, and the kubelet keeps only one dead
		// container, so "previous" of a terminated container is often gone.
		// The other run is the fallback.
		first := st.RestartCount > 0 && st.State.Waiting != nil
		l := fetchLog(ctx, cs, ns, name, st.Name, lines, first)
		if (l.Err != "" || l.Lines == "") && st.RestartCount > 0 {
			if alt := fetchLog(ctx, cs, ns, name, st.Name, lines, !first); alt.Err == "" && alt.Lines != "" {
				l = alt
			}
		}
		if l.Err == "" && l.Lines == "" {
			l.Lines = "(empty)"
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		out = append(out, ContainerLog{Container: "*", Err: fmt.Sprintf("no container of %s/%s has started, so there is no log", ns, name)})
	}
	return out
}

func fetchLog(ctx context.Context, cs kubernetes.Interface, ns, pod, container string, lines int64, previous bool) ContainerLog {
	l := ContainerLog{Container: container, Previous: previous}
	raw, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, TailLines: &lines, Previous: previous,
	}).DoRaw(ctx)
	text := strings.TrimSpace(string(raw))
	switch {
	case err != nil:
		l.Err = err.Error()
	case strings.HasPrefix(text, "unable to retrieve container logs"):
		// The kubelet answers 200 with this text when the container is gone
		// (garbage-collected dead container).
		l.Err = text
	case text != "":
		l.Lines = string(raw)
	}
	return l
}
