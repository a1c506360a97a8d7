package vsphere

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The template annotation carries the OVA's sha256: it is how a later run
// knows whether the template it finds was imported from the same bytes
// (reuse) or from another build (error, or replace). The OVF's own annotation
// is kept below it, because vSphere shows only one.
//
// While an import runs, the VM has a temporary name and its annotation also
// says which run imports it, since when and with what timeout: that is how
// another run on the same vCenter tells an import in progress (left alone)
// from the leftover of a run that died (removed once older than its timeout).
const annotationMarker = "Imported by the tkg-e2e harness."

var (
	shaLine     = regexp.MustCompile(`(?m)^ova-sha256: ([0-9a-fA-F]{64})\s*$`)
	runLine     = regexp.MustCompile(`(?m)^ova-import-run: (\S+)\s*$`)
	startedLine = regexp.MustCompile(`(?m)^ova-import-started: (\S+)\s*$`)
	timeoutLine = regexp.MustCompile(`(?m)^ova-import-timeout: (\S+)\s*$`)
)

// importMeta identifies one import while it runs under a temporary name.
type importMeta struct {
	Run     string
	Started time.Time
	Timeout time.Duration
}

// annotation without a sha256 (an import that learns it only at the end of
// its upload) has no ova-sha256 line, so nothing can take the VM for a
// template of any OVA before the line is written.
func annotation(sha256, source, ovfAnnotation string, meta *importMeta) string {
	s := annotationMarker + "\n"
	if sha256 != "" {
		s += fmt.Sprintf("ova-sha256: %s\n", sha256)
	}
	s += fmt.Sprintf("ova: %s\n", sourceBase(source))
	if meta != nil {
		s += fmt.Sprintf("ova-import-run: %s\nova-import-started: %s\nova-import-timeout: %s\n",
			meta.Run, meta.Started.UTC().Format(time.RFC3339), meta.Timeout)
	}
	if ovfAnnotation != "" {
		s += "\n" + ovfAnnotation
	}
	return s
}

// AnnotationSHA256 returns the OVA sha256 recorded in a template annotation
// by this package, or "" when there is none.
func AnnotationSHA256(annotation string) string {
	m := shaLine.FindStringSubmatch(annotation)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// parseImportMeta reads the import lines; zero fields when absent.
func parseImportMeta(annotation string) importMeta {
	var m importMeta
	if s := runLine.FindStringSubmatch(annotation); s != nil {
		m.Run = s[1]
	}
	if s := startedLine.FindStringSubmatch(annotation); s != nil {
		m.Started, _ = time.Parse(time.RFC3339, s[1])
	}
	if s := timeoutLine.FindStringSubmatch(annotation); s != nil {
		m.Timeout, _ = time.ParseDuration(s[1])
	}
	return m
}
