package suites

import (
	"flag"
	"strings"
)

// ProfileFlags are the flags every suite entry point takes from the
// Makefile: CONFIG, CONFIG_OVERRIDES and ARTIFACTS.
type ProfileFlags struct {
	config, overrides, artifacts *string
}

// RegisterProfileFlags registers -e2e.config (defaulting to profile, as seen
// from the suite's folder), -e2e.config-overrides and -e2e.artifacts-folder.
func RegisterProfileFlags(profile, profileHelp, artifactsHelp string) *ProfileFlags {
	return &ProfileFlags{
		config:    flag.String("e2e.config", profile, profileHelp),
		overrides: flag.String("e2e.config-overrides", "", "comma-separated override files merged over the profile"),
		artifacts: flag.String("e2e.artifacts-folder", "", artifactsHelp),
	}
}

// ConfigPath is the profile file.
func (f *ProfileFlags) ConfigPath() string { return *f.config }

// Overrides are the override files, in merge order.
func (f *ProfileFlags) Overrides() []string {
	if *f.overrides == "" {
		return nil
	}
	return strings.Split(*f.overrides, ",")
}

// ArtifactFolder is the folder given, or def when none was.
func (f *ProfileFlags) ArtifactFolder(def func() string) string {
	if *f.artifacts != "" {
		return *f.artifacts
	}
	return def()
}
