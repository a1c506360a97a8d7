package tanzu

import (
	"slices"
	"testing"
	"time"
)

// feed gives the parser lines one second apart from t0 and returns the
// phases, ended one second after the last line.
func feed(p *Parser, t0 time.Time, lines ...string) []Phase {
	for i, l := range lines {
		p.Line(t0.Add(time.Duration(i+1)*time.Second), l)
	}
	return p.Finish(t0.Add(time.Duration(len(lines)+1) * time.Second))
}

func TestParserUsesArrivalTimeNotStamps(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewParser(t0, "", Hooks{})
	// The stamps say four minutes apart; the lines arrived one second apart.
	ps := feed(p, t0,
		"[2023-01-10T19:50:48.605Z] Start creating management cluster...",
		"[2023-01-10T19:54:33.277Z] Saving management cluster kubeconfig into /home/kubo/.kube/config")
	if got := phaseNames(ps); !slices.Equal(got, []string{PhasePrepare, PhaseManagementCreate, PhaseManagementSetup}) {
		t.Fatalf("phases %v", got)
	}
	if ps[1].Duration != time.Second || ps[1].Stamp != "2023-01-10T19:50:48.605Z" {
		t.Errorf("management-create lasted %s (stamp %q), want 1s by arrival", ps[1].Duration, ps[1].Stamp)
	}
}

func TestParserSameMessageBootstrapThenManagement(t *testing.T) {
	t0 := time.Now()
	var mgmt []string
	p := NewParser(t0, "/run/dir", Hooks{OnManagementKubeconfig: func(s string) { mgmt = append(mgmt, s) }})
	ps := feed(p, t0,
		"Waiting for provider cluster-api",
		"Waiting for provider bootstrap-kubeadm", // same phase: no new one
		"  Added installed package 'tkg-pkg'waiting for package: tkg-pkg",
		"Saving management cluster kubeconfig into rel/config", // relative: the CLI's working directory
		"[2023-01-10T20:07:00.515Z] Waiting for provider cluster-api",
		"[2023-01-10T20:09:27.780Z]  Added installed package 'tkg-pkg'waiting for package: tkg-pkg",
		"Saving management cluster kubeconfig into /other", // announced once
	)
	want := []string{PhasePrepare, PhaseBootstrapProviders, PhaseBootstrapPackages, PhaseManagementSetup, PhaseManagementProviders, PhaseManagementPackages}
	if got := phaseNames(ps); !slices.Equal(got, want) {
		t.Errorf("phases\n got %v\nwant %v", got, want)
	}
	if !slices.Equal(mgmt, []string{"/run/dir/rel/config"}) || p.ManagementKubeconfig != "/run/dir/rel/config" {
		t.Errorf("management kubeconfig hook %v, field %q", mgmt, p.ManagementKubeconfig)
	}
}

func TestParserIgnoresLinesAfterFinish(t *testing.T) {
	t0 := time.Now()
	calls := 0
	p := NewParser(t0, "", Hooks{OnPhase: func(Phase) { calls++ }})
	ps := p.Finish(t0.Add(time.Second))
	p.Line(t0.Add(2*time.Second), "Start creating management cluster...")
	if len(ps) != 1 || calls != 1 || p.Current() != PhasePrepare || len(p.Finish(t0.Add(3*time.Second))) != 1 || calls != 1 {
		t.Errorf("after Finish: %d phases, %d OnPhase calls, current %q", len(ps), calls, p.Current())
	}
}

func TestParserWorkloadMarkers(t *testing.T) {
	t0 := time.Now()
	p := NewParser(t0, "", Hooks{})
	ps := feed(p, t0,
		"Creating workload cluster 'wl-1'...", // capitalised, as some versions print it
		"waiting for cluster to be initialized...",
		"waiting for cluster nodes to be available...",
		"waiting for addons core packages installation...",
		"Workload cluster 'wl-1' created")
	want := []string{PhasePrepare, PhaseWorkloadCreate, PhaseWorkloadControlPlane, PhaseWorkloadNodes, PhaseWorkloadPackages, PhaseFinish}
	if got := phaseNames(ps); !slices.Equal(got, want) || p.ClusterName != "wl-1" || !p.Completed {
		t.Errorf("phases %v cluster %q completed %v", got, p.ClusterName, p.Completed)
	}
}
