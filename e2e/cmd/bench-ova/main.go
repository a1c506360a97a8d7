// Command bench-ova measures the ova stage's import against the way people
// script it today. In one run it starts vcsim (in its own process, so both
// sides talk to the same separate "vCenter"), generates N OVAs, imports them
// with the harness library (concurrently), then imports the same OVAs with N
// sequential `govc import.ova` runs, and prints both times, the CPU each side
// used, and the ratio. With -rounds it does both that many times, taking
// turns at going first, and prints the medians. scripts/bench-ova.sh builds
// and runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tkg-e2e/harness/framework/redact"
	"github.com/tkg-e2e/harness/framework/vsphere"
	"github.com/tkg-e2e/harness/framework/vsphere/ovagen"
)

type config struct {
	count, sizeMiB, concurrency int
	rounds                      int
	govc, dir, format           string
	every                       time.Duration
	sequentialToo               bool
	cpuProfile                  string
	beforeCPUPerGiB             float64
	beforeLabel                 string
}

func main() {
	var c config
	serve := flag.Bool("serve", false, "internal: run vcsim, print how to reach it on stdout, stop when stdin closes")
	flag.IntVar(&c.count, "count", 4, "number of OVAs")
	flag.IntVar(&c.sizeMiB, "size-mib", 200, "size of each OVA's disk data in MiB")
	flag.IntVar(&c.concurrency, "concurrency", 4, "OVAs the library imports at once")
	flag.IntVar(&c.rounds, "rounds", 1, "rounds of both sides, taking turns at going first; the rows and the ratio are the medians")
	flag.StringVar(&c.govc, "govc", "", "path of govc for the sequential baseline (empty: skip the baseline)")
	flag.StringVar(&c.dir, "dir", "", "work directory for the OVAs (default: a temporary directory, removed at the end)")
	flag.StringVar(&c.format, "format", string(ovagen.Raw), "disk format: raw (fast to generate) or stream-optimized (slow: zlib of random data)")
	flag.DurationVar(&c.every, "progress-every", 2*time.Second, "progress line interval of the library import (0: phase lines only)")
	flag.BoolVar(&c.sequentialToo, "sequential-too", false, "also time the library with concurrency 1, to show what concurrency adds")
	flag.Float64Var(&c.beforeCPUPerGiB, "before-cpu-per-gib", 0, "client CPU per GiB of the library before this change, to print the change against (0: not printed)")
	flag.StringVar(&c.beforeLabel, "before-label", "recorded", "where -before-cpu-per-gib comes from")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the library imports (not generation, not govc) to this file")
	flag.Parse()
	var err error
	if *serve {
		err = serveSimulator()
	} else {
		err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-ova:", err)
		os.Exit(1)
	}
}

// endpoint is how the parent reaches the vcsim child. It travels over a pipe,
// never on a command line, because it holds the password.
type endpoint struct {
	Server, Username, Password, CAFile string
}

func serveSimulator() error {
	sim, err := vsphere.StartSimulator()
	if err != nil {
		return err
	}
	defer sim.Close()
	if err := json.NewEncoder(os.Stdout).Encode(endpoint{sim.Server, sim.Username, sim.Password, sim.CAFile}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

type simProcess struct {
	endpoint
	cmd   *exec.Cmd
	stdin io.Closer
}

func startSimProcess() (*simProcess, error) {
	cmd := exec.Command(os.Args[0], "-serve")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &simProcess{cmd: cmd, stdin: in}
	if err := json.NewDecoder(bufio.NewReader(out)).Decode(&p.endpoint); err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("vcsim process did not start: %w", err)
	}
	return p, nil
}

func (p *simProcess) stop() {
	_ = p.stdin.Close()
	_ = p.cmd.Wait()
}

// cpuTime of the vcsim process so far, from /proc/<pid>/stat.
func (p *simProcess) cpuTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are fields 14 and 15.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / 100 // USER_HZ
}

type measure struct {
	wall, client, sim time.Duration
}

func run(c config) error {
	ctx := context.Background()
	if c.dir == "" {
		d, err := os.MkdirTemp("", "bench-ova-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	sim, err := startSimProcess()
	if err != nil {
		return err
	}
	defer sim.stop()
	out := redact.New(sim.Password).Writer(os.Stdout)
	defer out.Flush()
	fmt.Fprintf(out, "vcsim (separate process) at %s\n", sim.Server)

	start := time.Now()
	ovas, err := generate(c)
	if err != nil {
		return err
	}
	var total int64
	for _, o := range ovas {
		total += o.Size
	}
	fmt.Fprintf(out, "generated %d OVAs of %.1f MiB (%s disk, SHA256 manifest) in %.1fs\n", len(ovas), float64(ovas[0].Size)/(1<<20), c.format, time.Since(start).Seconds())

	timed := func(f func() error) (measure, error) {
		c0, s0, t0 := selfCPU(), sim.cpuTime(), time.Now()
		err := f()
		return measure{time.Since(t0), selfCPU() - c0, sim.cpuTime() - s0}, err
	}
	if c.rounds < 1 {
		c.rounds = 1
	}
	var libs, seqs, govs []measure
	for r := range c.rounds {
		tag := ""
		if c.rounds > 1 {
			tag = strconv.Itoa(r + 1)
		}
		library := func() error {
			stopProfile, err := startCPUProfile(c.cpuProfile, r)
			if err != nil {
				return err
			}
			defer stopProfile()
			lib, err := timed(func() error { return importWithLibrary(ctx, c, c.concurrency, "lib"+tag, sim, ovas, out) })
			if err != nil {
				return err
			}
			libs = append(libs, lib)
			if c.sequentialToo {
				seq, err := timed(func() error { return importWithLibrary(ctx, c, 1, "seq"+tag, sim, ovas, out) })
				if err != nil {
					return err
				}
				seqs = append(seqs, seq)
			}
			return nil
		}
		baseline := func() error {
			if c.govc == "" {
				return nil
			}
			var govcCPU time.Duration
			gov, err := timed(func() error {
				c0 := childCPU()
				err := importWithGovc(ctx, c, "govc"+tag, sim, ovas, out)
				govcCPU = childCPU() - c0
				return err
			})
			gov.client = govcCPU
			govs = append(govs, gov)
			return err
		}
		// Taking turns at going first: whatever the first side of a round
		// leaves behind (a warmer cache, a busier simulator) favours neither.
		first, second := library, baseline
		if r%2 == 1 {
			first, second = baseline, library
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
		if c.rounds > 1 && c.govc != "" {
			fmt.Fprintf(out, "round %d (%s first): library %.2fs, govc %.2fs, ratio %.2f\n", r+1, map[bool]string{true: "library", false: "govc"}[r%2 == 0],
				libs[r].wall.Seconds(), govs[r].wall.Seconds(), govs[r].wall.Seconds()/libs[r].wall.Seconds())
		}
	}
	if c.govc == "" {
		fmt.Fprintln(out, "govc baseline skipped (no -govc)")
		return nil
	}
	lib, seq, gov := median(libs), median(seqs), median(govs)

	row := func(label string, m measure) {
		fmt.Fprintf(out, "%-58s %6.2fs %5.0f MiB/s   CPU client %5.2fs + vcsim %5.2fs\n", label, m.wall.Seconds(),
			float64(total)/(1<<20)/m.wall.Seconds(), m.client.Seconds(), m.sim.Seconds())
	}
	of := ""
	if c.rounds > 1 {
		of = fmt.Sprintf(", medians of %d rounds", c.rounds)
	}
	fmt.Fprintf(out, "\n== %d OVAs x %.0f MiB on %d CPUs%s (load average at end: %s) ==\n", len(ovas), float64(ovas[0].Size)/(1<<20), runtime.NumCPU(), of, loadavg())
	row(fmt.Sprintf("library, concurrency %d (verify + identity + template)", c.concurrency), lib)
	if c.sequentialToo {
		row("library, concurrency 1", seq)
	}
	row(fmt.Sprintf("govc import.ova x%d, sequential, no -m (no verification)", len(ovas)), gov)
	gib := float64(total) / (1 << 30)
	fmt.Fprintf(out, "client CPU per GiB: library %.2f s/GiB, govc %.2f s/GiB\n", lib.client.Seconds()/gib, gov.client.Seconds()/gib)
	if c.beforeCPUPerGiB > 0 {
		fmt.Fprintf(out, "client CPU per GiB before (%s): %.2f s/GiB; now %+.0f%% (goal <= -25%%)\n", c.beforeLabel, c.beforeCPUPerGiB,
			100*(lib.client.Seconds()/gib/c.beforeCPUPerGiB-1))
	}
	// The last line, alone and fixed in form, is what scripts compare (goal >= 1.35).
	fmt.Fprintf(out, "ratio: %.2f\n", gov.wall.Seconds()/lib.wall.Seconds())
	return nil
}

// median is the measure whose every field is that field's median over ms
// (the upper one of an even count); zero for none.
func median(ms []measure) measure {
	if len(ms) == 0 {
		return measure{}
	}
	mid := func(f func(measure) time.Duration) time.Duration {
		vs := make([]time.Duration, len(ms))
		for i, m := range ms {
			vs[i] = f(m)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	return measure{wall: mid(func(m measure) time.Duration { return m.wall }),
		client: mid(func(m measure) time.Duration { return m.client }), sim: mid(func(m measure) time.Duration { return m.sim })}
}

// startCPUProfile starts a CPU profile into file ("" does nothing; so does
// any round but the first) and returns what stops it.
func startCPUProfile(file string, round int) (func(), error) {
	if file == "" || round > 0 {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

func generate(c config) ([]*ovagen.Result, error) {
	res := make([]*ovagen.Result, c.count)
	errs := make([]error, c.count)
	var wg sync.WaitGroup
	for i := range c.count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("bench-node-%d", i)
			res[i], errs[i] = ovagen.Write(filepath.Join(c.dir, name+".ova"), ovagen.Options{
				Name: name, Seed: uint64(i), DataSize: int64(c.sizeMiB) << 20, DiskCapacity: 20 << 30, Format: ovagen.DiskFormat(c.format),
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// importWithLibrary times what the ova stage does: connect, then import all
// OVAs as templates with manifest verification.
func importWithLibrary(ctx context.Context, c config, concurrency int, prefix string, sim *simProcess, ovas []*ovagen.Result, out io.Writer) error {
	s, err := vsphere.Connect(ctx, vsphere.SessionInput{Server: sim.Server, Username: sim.Username, Password: sim.Password,
		CAFile: sim.CAFile, ConnectTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	var list []vsphere.OVA
	for _, o := range ovas {
		list = append(list, vsphere.OVA{Source: o.Path, Name: prefix + "-" + o.Name})
	}
	res, err := s.ImportOVAs(ctx, vsphere.ImportInput{
		Placement:   vsphere.Placement{Datacenter: "DC0", Datastore: "LocalDS_0", ResourcePool: "/DC0/host/DC0_C0/Resources", Folder: "/DC0/vm"},
		OVAs:        list,
		Concurrency: concurrency,
		Timeout:     10 * time.Minute,
		Progress:    out, ProgressEvery: c.every, Prefix: "[" + prefix + "]",
	})
	for _, r := range res {
		fmt.Fprintf(out, "[%s] %s: %s, upload %.0f MiB/s, client CPU %.2fs for %.1f MiB read = %.2f s/GiB (shared out by bytes among concurrent imports)\n",
			prefix, r.Name, r.Action, r.UploadRate/(1<<20), r.ClientCPU.Seconds(), float64(r.ReadBytes)/(1<<20), r.CPUPerGiB)
	}
	return err
}

// importWithGovc is the baseline: one govc import.ova per OVA, one after the
// other. Without -m: govc's manifest check runs on the server side, which
// knows only SHA1, and vcsim refuses these SHA256 manifests ("manifest
// checksum type SHA256 mismatch"), so govc verifies nothing here.
func importWithGovc(ctx context.Context, c config, prefix string, sim *simProcess, ovas []*ovagen.Result, out io.Writer) error {
	env := append(os.Environ(), "GOVC_URL="+sim.Server, "GOVC_USERNAME="+sim.Username, "GOVC_PASSWORD="+sim.Password,
		"GOVC_TLS_CA_CERTS="+sim.CAFile)
	for _, o := range ovas {
		t := time.Now()
		cmd := exec.CommandContext(ctx, c.govc, "import.ova", "-dc=DC0", "-ds=LocalDS_0", "-pool=/DC0/host/DC0_C0/Resources",
			"-folder=/DC0/vm", "-name="+prefix+"-"+o.Name, o.Path)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("govc import.ova %s: %v: %s", o.Path, err, b)
		}
		fmt.Fprintf(out, "[%s] %s imported in %.2fs\n", prefix, o.Name, time.Since(t).Seconds())
	}
	return nil
}

func selfCPU() time.Duration  { return rusage(syscall.RUSAGE_SELF) }
func childCPU() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil || len(b) < 14 {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
