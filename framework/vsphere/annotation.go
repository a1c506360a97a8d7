package vsphere

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The template annotation carries the OVA's identity (see identity.go): its
// whole-file sha256 when the import knew it, and its manifest's sha256 when
// the manifest pins every file. It is how a later run knows whether the
// template it finds was imported from the same OVA (reuse) or from another
// build (error, or replace). The OVF's own annotation is kept below it,
// because vSphere shows only one.
//
// While an import runs, the VM has a temporary name and its annotation also
// says which run imports it, since when and with what timeout: that is how
// another run on the same vCenter tells an import in progress (left alone)
// from the leftover of a run that died (removed once older than its timeout).
const annotationMarker = "Imported by the tkg-e2e harness."

var (
	shaLine      = regexp.MustCompile(`(?m)^ova-sha256: ([0-9a-fA-F]{64})\s*$`)
	manifestLine = regexp.MustCompile(`(?m)^ova-manifest-sha256: ([0-9a-fA-F]{64})\s*$`)
	runLine      = regexp.MustCompile(`(?m)^ova-import-run: (\S+)\s*$`)
	startedLine  = regexp.MustCompile(`(?m)^ova-import-started: (\S+)\s*$`)
	timeoutLine  = regexp.MustCompile(`(?m)^ova-import-timeout: (\S+)\s*$`)
)

// importMeta identifies one import while it runs under a temporary name.
type importMeta struct {
	Run     string
	Started time.Time
	Timeout time.Duration
}

// annotation has a line for each identity in id. An import writes an
// identity only once the bytes it uploads are known to match it (a
// download's sha256 from the start, as the download hashed those bytes; the
// others at the end of the upload that read them), so nothing can take the
// VM for a template of any OVA before.
func annotation(id identity, source, ovfAnnotation string, meta *importMeta) string {
	s := annotationMarker + "\n"
	if id.SHA256 != "" {
		s += fmt.Sprintf("ova-sha256: %s\n", id.SHA256)
	}
	if id.Manifest != "" {
		s += fmt.Sprintf("ova-manifest-sha256: %s\n", id.Manifest)
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

// AnnotationSHA256 returns the whole-OVA sha256 recorded in a template
// annotation by this package, or "" when there is none.
func AnnotationSHA256(annotation string) string { return hexLine(shaLine, annotation) }

// AnnotationManifestSHA256 returns the sha256 of the OVA's manifest recorded
// in a template annotation by this package, or "" when there is none.
func AnnotationManifestSHA256(annotation string) string { return hexLine(manifestLine, annotation) }

func annotationIdentity(annotation string) identity {
	return identity{SHA256: AnnotationSHA256(annotation), Manifest: AnnotationManifestSHA256(annotation)}
}

func hexLine(re *regexp.Regexp, annotation string) string {
	m := re.FindStringSubmatch(annotation)
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
