package vsphere

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// An OVA has up to two identities, and a template's annotation records the
// ones its import knew, so that a later run can tell whether the template of
// the name it finds came from the same OVA:
//
//   - the whole file's sha256 (ova-sha256), what a release's checksum file
//     lists; learning it means hashing every byte of the OVA;
//   - the sha256 of the manifest file (ova-manifest-sha256), when the
//     manifest pins every other file of the OVA with SHA256 or SHA512. Every
//     file is verified against the manifest while it uploads, so two OVAs
//     with the same manifest hold the same descriptor and disks: as strong
//     as the whole-file hash, and it costs hashing a few hundred bytes
//     instead of a second hash of every disk byte next to its manifest digest.
//
// The whole-file sha256 is computed only when it is the only identity (no
// manifest, a SHA1 manifest, or one that leaves a file out), when the config
// demands one, or for free (a download hashes what it fetches).
type identity struct {
	SHA256   string
	Manifest string
}

func (id identity) known() bool { return id.SHA256 != "" || id.Manifest != "" }

// String is how logs and errors name an identity.
func (id identity) String() string {
	var parts []string
	if id.SHA256 != "" {
		parts = append(parts, "sha256 "+id.SHA256)
	}
	if id.Manifest != "" {
		parts = append(parts, "manifest sha256 "+id.Manifest)
	}
	if len(parts) == 0 {
		return "no OVA identity"
	}
	return strings.Join(parts, ", ")
}

// Which identity a comparison used.
const (
	onSHA256   = "sha256"
	onManifest = "manifest sha256"
)

func (id identity) on(basis string) string {
	if basis == onManifest {
		return id.Manifest
	}
	return id.SHA256
}

// compare tells whether two identities name the same OVA, on the first kind
// both sides know: the whole-file sha256, which the config's sha256 is about
// when it gives one, then the manifest's. ok is false when they share none.
func (id identity) compare(other identity) (same bool, basis string, ok bool) {
	switch {
	case id.SHA256 != "" && other.SHA256 != "":
		return id.SHA256 == other.SHA256, onSHA256, true
	case id.Manifest != "" && other.Manifest != "":
		return id.Manifest == other.Manifest, onManifest, true
	}
	return false, "", false
}

// manifestIdentity is the sha256 of the manifest's bytes mf when its
// entries pin every file of the archive but itself and a signature (.cert)
// with SHA256 or SHA512; otherwise "" and why not, for the log.
func (i *OVAInfo) manifestIdentity(mf []byte) (string, string) {
	for _, f := range i.Files {
		if f == i.ManifestName || strings.EqualFold(path.Ext(f), ".cert") {
			continue
		}
		sum, ok := i.manifest[f]
		if !ok {
			return "", fmt.Sprintf("the manifest %s does not list %s", i.ManifestName, f)
		}
		if alg := strings.ToUpper(sum.Algorithm); alg != "SHA256" && alg != "SHA512" {
			return "", fmt.Sprintf("the manifest %s pins %s with %s", i.ManifestName, f, alg)
		}
	}
	s := sha256.Sum256(mf)
	return hex.EncodeToString(s[:]), ""
}

// identity is what this import knows of its OVA so far: the manifest's from
// the inspection, the whole file's once something hashed it.
func (o *ovaImport) identity(src *localOVA, info *OVAInfo) identity {
	return identity{SHA256: src.sha256, Manifest: info.ManifestSHA256}
}

// hashesWhole tells whether the import computes the whole-file sha256 (on
// the upload's read, or in the hash pass before a reuse decision).
func (o *ovaImport) hashesWhole(info *OVAInfo) bool {
	return info.ManifestSHA256 == "" || o.ova.SHA256 != ""
}

// describeIdentity is the log line that says what identifies the OVA.
func (o *ovaImport) describeIdentity(src *localOVA, info *OVAInfo) string {
	switch {
	case src.sha256 != "" && info.ManifestSHA256 != "":
		return fmt.Sprintf("identity: sha256 %s (known from the download), and manifest sha256 %s (every file verified against it)", src.sha256, info.ManifestSHA256)
	case info.ManifestSHA256 != "" && o.ova.SHA256 != "":
		return fmt.Sprintf("identity: the whole file's sha256, which the config gives, and manifest sha256 %s (every file verified against it)", info.ManifestSHA256)
	case info.ManifestSHA256 != "":
		return fmt.Sprintf("identity: manifest sha256 %s (every file verified against it); the whole file is not hashed", info.ManifestSHA256)
	case src.sha256 != "":
		return fmt.Sprintf("identity: sha256 %s (known from the download; %s)", src.sha256, info.identityNote)
	}
	return fmt.Sprintf("identity: the whole file's sha256, learnt on its one read (%s)", info.identityNote)
}

// sameOVA tells whether a template whose annotation carries tpl was imported
// from this OVA, and on which identity. The OVA is hashed only when the two
// share no identity and the template has a whole-file sha256 to compare
// with: a template imported by an older harness, or from an OVA without a
// manifest identity.
func (o *ovaImport) sameOVA(ctx context.Context, tpl identity, src *localOVA, info *OVAInfo, res *Result) (bool, string, error) {
	if same, basis, ok := o.identity(src, info).compare(tpl); ok || tpl.SHA256 == "" {
		return same, basis, nil
	}
	if _, err := o.learnSHA256(ctx, src, res); err != nil {
		return false, "", err
	}
	same, basis, _ := o.identity(src, info).compare(tpl)
	return same, basis, nil
}

// otherOVA explains why a template of the name is not this OVA's; what
// follows in the caller's message says what to do.
func otherOVA(tplPath string, tpl, ours identity, basis, source string) string {
	switch {
	case basis != "":
		return fmt.Sprintf("template %s already exists with %s %s, but %s has %s %s: it was imported from another OVA",
			tplPath, basis, tpl.on(basis), source, basis, ours.on(basis))
	case !tpl.known():
		return fmt.Sprintf("template %s already exists with no OVA identity in its annotation (neither ova-sha256 nor ova-manifest-sha256): "+
			"the harness did not import it, so it cannot be taken for %s's", tplPath, source)
	}
	return fmt.Sprintf("template %s already exists with %s, but %s has %s: they share no identity to compare, so it is taken for another OVA's",
		tplPath, tpl, source, ours)
}
