package vsphere

import (
	"fmt"
	"regexp"
	"strings"
)

// The template annotation carries the OVA's sha256: it is how a later run
// knows whether the template it finds was imported from the same bytes
// (reuse) or from another build (error, or replace). The OVF's own annotation
// is kept below it, because vSphere shows only one.
const annotationMarker = "Imported by the tkg-e2e harness."

var shaLine = regexp.MustCompile(`(?m)^ova-sha256: ([0-9a-fA-F]{64})\s*$`)

func annotation(sha256, source, ovfAnnotation string) string {
	s := fmt.Sprintf("%s\nova-sha256: %s\nova: %s\n", annotationMarker, sha256, sourceBase(source))
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
