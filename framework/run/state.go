// Package run holds the state of one harness run: which stages ran and how
// they ended, and every resource the run created. It is written to
// <artifacts>/state.json after every change, so an interrupted or kept run
// leaves a file that says what exists and how to delete it, and a later run
// with RESUME=1 can re-attach to it.
package run

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// StateFile is the name of the state file inside a run's artifacts folder.
const StateFile = "state.json"

// Stage statuses.
const (
	StatusRunning = "running"
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
	// StatusReused marks a stage that passed in an earlier run and was re-attached with RESUME=1.
	StatusReused = "reused"
	// StatusStopped marks a stage that stopped on purpose at a known limit
	// of a rehearsal (a stand-in vCenter whose VMs boot nothing): neither
	// passed nor failed; the stages after it do not run.
	StatusStopped = "stopped"
)

// StageRecord is what the state file says about one stage.
type StageRecord struct {
	Status   string        `json:"status"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"durationNs"`
	Seconds  float64       `json:"seconds"`
	Message  string        `json:"message,omitempty"`
	// KeptSeconds is how long the stage took in the kept run it was reused
	// from; Seconds is then the re-attach alone.
	KeptSeconds float64 `json:"keptSeconds,omitempty"`
	// Pending, on a passed stage, is the check it left running beside the
	// stages after it (suites' tails): the record ends, with that check's
	// verdict and time, when the check does. A kept run's record still
	// pending when loaded was cut short, and loads as failed.
	Pending string `json:"pending,omitempty"`
	// Steps are timed steps of the stage that someone else timed (the
	// tanzu CLI's phases, from its transcript), for timings.json.
	Steps []StepTiming `json:"steps,omitempty"`
	// Clusters are the stage's results per cluster, when it acted on
	// several (every workload cluster of a run that has more than one).
	Clusters []ClusterResult `json:"clusters,omitempty"`
}

// ClusterResult is one cluster's part of a stage that acts on several.
type ClusterResult struct {
	// ID is the cluster's ID in the run (workload, workload-2, ...).
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Seconds float64 `json:"seconds"`
	Message string  `json:"message,omitempty"`
}

// StepTiming is one timed step of a stage in timings.json.
type StepTiming struct {
	Name    string    `json:"name"`
	Started time.Time `json:"started,omitzero"`
	Seconds float64   `json:"seconds"`
}

// Resource is one thing the run created outside its own process.
type Resource struct {
	// Kind: kind-cluster, capi-cluster, vsphere-template, docker-container, ...
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Namespace for namespaced objects.
	Namespace string `json:"namespace,omitempty"`
	// Role of a cluster: bootstrap, management, workload.
	Role string `json:"role,omitempty"`
	// Cluster is the cluster's ID in the run when its role does not name
	// it: a second workload cluster is "workload-2" (config
	// clusters.workloads). Empty when the role is the ID.
	Cluster string `json:"cluster,omitempty"`
	// Kubeconfig of a cluster: a path outside the artifacts folder (it holds client keys).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// CreatedBy is the stage that created it.
	CreatedBy string `json:"createdBy,omitempty"`
	// State: creating, ready, deleted, moved.
	State string `json:"state"`
	// DeleteHint is the command a person runs to delete it by hand.
	DeleteHint string `json:"deleteHint,omitempty"`
	// Attributes hold kind-specific facts (template sha256, provider, ...).
	Attributes map[string]string `json:"attributes,omitempty"`
	// Deleted says how cleanup deleted it, for checks that read the state
	// instead of the console's wording.
	Deleted *Deletion `json:"deleted,omitempty"`
}

// IDUnlessRole is a cluster's ID as the run records it (Resource.Cluster,
// and the suites' Cluster.ID): empty when its role names it, so the first
// cluster of a role keeps the record older runs wrote, and resumes them.
func IDUnlessRole(id, role string) string {
	if id == role {
		return ""
	}
	return id
}

// ClusterID is the cluster's ID in the run: Cluster, or else its Role.
func (r Resource) ClusterID() string {
	if r.Cluster != "" {
		return r.Cluster
	}
	return r.Role
}

// Deletion is how and in how long cleanup deleted a resource.
type Deletion struct {
	// How: the deleter's words, e.g. "deleted through its management cluster".
	How     string  `json:"how"`
	Seconds float64 `json:"seconds"`
}

// Key identifies a resource.
func (r Resource) Key() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// SetAttribute sets one of the resource's Attributes (a resource read from
// a state file may have none).
func (r *Resource) SetAttribute(name, value string) {
	if r.Attributes == nil {
		r.Attributes = map[string]string{}
	}
	r.Attributes[name] = value
}

// State is the persisted state of a run. Use its methods; they save after every change.
type State struct {
	mu   sync.Mutex
	path string
	lock *runLock
	// redact masks the file's text before it is written (SetRedactor).
	redact func(string) string

	// Owner is who started the run (user, host), recorded at creation.
	Owner *Owner `json:"owner,omitempty"`
	// Short is the run's short ID (see ShortID).
	Short string `json:"shortID,omitempty"`

	RunID      string                  `json:"runID"`
	Profile    string                  `json:"profile"`
	ConfigFile string                  `json:"configFile"`
	Started    time.Time               `json:"started"`
	Updated    time.Time               `json:"updated"`
	Stages     map[string]*StageRecord `json:"stages"`
	Resources  []Resource              `json:"resources"`
	// Cleanup says what happened to the resources at the end: "done", "skipped (SKIP_CLEANUP=1)", "failed: ...".
	Cleanup string `json:"cleanup,omitempty"`
	// Lease is the Boskos testbed the run holds or held (profile lease:).
	Lease *Lease `json:"lease,omitempty"`
}

// New creates the state of a fresh run in dir and writes it. It takes the
// run folder's lock (see LockFile), records the owner, and refuses a folder
// whose state file still lists resources that may exist.
func New(dir, runID, profile, configFile string) (*State, error) {
	lock, err := acquireLock(dir, runID)
	if err != nil {
		return nil, err
	}
	if err := checkReusable(dir); err != nil {
		_ = lock.release()
		return nil, err
	}
	owner := CurrentOwner()
	s := &State{path: filepath.Join(dir, StateFile), lock: lock, RunID: runID, Owner: &owner, Short: shortIDFor(runID),
		Profile: profile, ConfigFile: configFile, Started: time.Now().UTC(), Stages: map[string]*StageRecord{}}
	if err := s.save(); err != nil {
		_ = lock.release()
		return nil, err
	}
	return s, nil
}

// Load reads the state file of a kept run from dir and takes the run
// folder's lock. Resume also checks the run's owner.
func Load(dir string) (*State, error) {
	p := filepath.Join(dir, StateFile)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("cannot resume: %w (RESUME=1 needs ARTIFACTS=<folder of a kept run> holding %s)", err, StateFile)
	}
	// Lock first, then read: the state read is then the last the previous holder wrote.
	lock, err := acquireLock(dir, "")
	if err != nil {
		return nil, err
	}
	s, err := readState(p)
	if err != nil {
		_ = lock.release()
		return nil, err
	}
	s.lock = lock
	if s.Stages == nil {
		s.Stages = map[string]*StageRecord{}
	}
	for _, rec := range s.Stages {
		if rec.Pending != "" {
			rec.Status = StatusFailed
			rec.Message = "the run ended while this stage's " + rec.Pending + " was still running: its result is unknown"
			rec.Pending = ""
		}
	}
	return s, nil
}

// SetRedactor makes every later write mask the file's text with redact (a
// redact.Redactor's String), so a stage message that quotes an error never
// stores a secret. It rewrites the file at once.
func (s *State) SetRedactor(redact func(string) string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redact = redact
	return s.saveLocked()
}

// Path of the state file.
func (s *State) Path() string { return s.path }

// Dir is the run's artifacts folder.
func (s *State) Dir() string { return filepath.Dir(s.path) }

// StartStage records that a stage began.
func (s *State) StartStage(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Stages[name] = &StageRecord{Status: StatusRunning, Started: time.Now().UTC()}
	return s.saveLocked()
}

// ReuseStage starts the re-attach of a stage that passed in the kept run: the
// stage's time from here on is the re-attach's, and the kept run's duration
// is kept apart (KeptSeconds), so timings and JUnit do not report another
// run's work as this one's.
func (s *State) ReuseStage(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := &StageRecord{Status: StatusRunning, Started: time.Now().UTC()}
	if old, ok := s.Stages[name]; ok {
		rec.KeptSeconds = old.Seconds
		if old.KeptSeconds > 0 {
			rec.KeptSeconds = old.KeptSeconds
		}
	}
	s.Stages[name] = rec
	return s.saveLocked()
}

// EndStage records how a stage ended.
func (s *State) EndStage(name, status, message string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.Stages[name]
	if !ok {
		rec = &StageRecord{Started: time.Now().UTC()}
		s.Stages[name] = rec
	}
	rec.Status = status
	rec.Message = message
	rec.Pending = ""
	rec.Duration = time.Since(rec.Started)
	rec.Seconds = rec.Duration.Round(time.Millisecond).Seconds()
	return s.saveLocked()
}

// EndStagePending records that a stage's own steps passed while pending (a
// check it started) goes on; EndStage ends the record later.
func (s *State) EndStagePending(name, pending string) error {
	if err := s.EndStage(name, StatusPassed, "its own steps passed; still running: "+pending); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Stages[name].Pending = pending
	return s.saveLocked()
}

// Stage returns a copy of a stage's record.
func (s *State) Stage(name string) (StageRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.Stages[name]
	if !ok {
		return StageRecord{}, false
	}
	return *rec, true
}

// Passed reports whether a stage passed in this run or an earlier one it resumes.
func (s *State) Passed(name string) bool {
	rec, ok := s.Stage(name)
	return ok && (rec.Status == StatusPassed || rec.Status == StatusReused)
}

// PutResource adds or replaces (by Key) a resource and saves.
func (s *State) PutResource(r Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.Resources {
		if s.Resources[i].Key() == r.Key() {
			s.Resources[i] = r
			return s.saveLocked()
		}
	}
	s.Resources = append(s.Resources, r)
	return s.saveLocked()
}

// SetResourceState changes the State of a resource by Key.
func (s *State) SetResourceState(key, state string) error {
	return s.UpdateResource(key, func(r *Resource) { r.State = state })
}

// UpdateResource applies change to the resource with key and saves, in one
// step under the lock: several fields (attributes added and removed) change
// together, and change works on the record itself, not on a copy whose
// Attributes map the record shares.
func (s *State) UpdateResource(key string, change func(*Resource)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.Resources {
		if s.Resources[i].Key() == key {
			change(&s.Resources[i])
			return s.saveLocked()
		}
	}
	return fmt.Errorf("state: no resource %s", key)
}

// SetResourceAttribute sets one of a resource's Attributes by Key.
func (s *State) SetResourceAttribute(key, name, value string) error {
	return s.UpdateResource(key, func(r *Resource) { r.SetAttribute(name, value) })
}

// MarkDeleted sets a resource's State to deleted and records how and in how
// long.
func (s *State) MarkDeleted(key, how string, took time.Duration) error {
	return s.UpdateResource(key, func(r *Resource) {
		r.State = "deleted"
		r.Deleted = &Deletion{How: how, Seconds: math.Round(took.Seconds()*10) / 10}
	})
}

// Resource finds a resource by kind and cluster ID (a cluster's role, or
// its Cluster: "workload-2") or name.
func (s *State) Resource(kind, roleOrName string) (Resource, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.Resources {
		if r.Kind == kind && (r.ClusterID() == roleOrName || r.Name == roleOrName) {
			return r, true
		}
	}
	return Resource{}, false
}

// Live returns the resources not yet deleted, newest first (the order to delete them in).
func (s *State) Live() []Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Resource
	for i := len(s.Resources) - 1; i >= 0; i-- {
		if r := s.Resources[i]; live(r) {
			out = append(out, r)
		}
	}
	return out
}

// SetCleanup records the outcome of cleanup.
func (s *State) SetCleanup(msg string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Cleanup = msg
	return s.saveLocked()
}

// SetStageSteps records the timed steps of a running stage (replacing any
// it had); a stage not started is an error.
func (s *State) SetStageSteps(name string, steps []StepTiming) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.Stages[name]
	if !ok {
		return fmt.Errorf("run state: steps of stage %s, which has not started", name)
	}
	rec.Steps = append([]StepTiming(nil), steps...)
	return s.saveLocked()
}

// SetStageCluster records one cluster's result of a running stage (the
// result of that cluster ID replaces an earlier one).
func (s *State) SetStageCluster(name string, r ClusterResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.Stages[name]
	if !ok {
		return fmt.Errorf("run state: a cluster result of stage %s, which has not started", name)
	}
	r.Seconds = math.Round(r.Seconds*10) / 10
	for i := range rec.Clusters {
		if rec.Clusters[i].ID == r.ID {
			rec.Clusters[i] = r
			return s.saveLocked()
		}
	}
	rec.Clusters = append(rec.Clusters, r)
	return s.saveLocked()
}

// StageSteps returns the recorded steps by stage; nil when no stage has any.
func (s *State) StageSteps() map[string][]StepTiming {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string][]StepTiming
	for name, rec := range s.Stages {
		if len(rec.Steps) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]StepTiming{}
		}
		out[name] = append([]StepTiming(nil), rec.Steps...)
	}
	return out
}

// Timings returns each stage's duration in seconds, in start order.
func (s *State) Timings() []StageTiming {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StageTiming, 0, len(s.Stages))
	for name, rec := range s.Stages {
		out = append(out, StageTiming{Stage: name, Status: rec.Status, Started: rec.Started, Seconds: rec.Seconds})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// StageTiming is one row of timings.json, and the Ginkgo report entry each
// stage adds (JUnit carries it).
type StageTiming struct {
	Stage   string    `json:"stage"`
	Status  string    `json:"status"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
}

func (s *State) save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

// saveLocked writes atomically (temp file + rename), so a run killed mid-write
// never leaves a truncated state file behind.
func (s *State) saveLocked() error {
	s.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if s.redact != nil {
		b = []byte(s.redact(string(b)))
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	// The state file names every resource and quotes errors: private.
	return writeFileAtomic(s.path, append(b, '\n'), 0o600)
}

func (t StageTiming) String() string {
	return fmt.Sprintf("%s %s in %.1fs", t.Stage, t.Status, t.Seconds)
}
