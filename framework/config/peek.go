package config

import (
	"os"

	"go.yaml.in/yaml/v3"
)

// PeekProfile returns the profile key of a config and its overrides (the
// last one that sets it wins) without loading or validating anything, for
// code that must know the profile before the config is loaded (the Ginkgo
// tree: which stages need which on this profile). "" when unreadable: the
// real load reports why.
func PeekProfile(path string, overrides []string) string {
	profile := ""
	for _, p := range append([]string{path}, overrides...) {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var doc struct {
			Profile string `yaml:"profile"`
		}
		if yaml.Unmarshal(b, &doc) == nil && doc.Profile != "" {
			profile = doc.Profile
		}
	}
	return profile
}

// PeekDriver returns the driver key of a config and its overrides (the last
// one that sets it wins; clusterctl when none does) without loading
// anything, for the Ginkgo tree, which is built before the config is loaded
// and declares each stage's spec for the run's driver. The key is read as
// written: NewEnv checks the loaded config agrees.
func PeekDriver(path string, overrides []string) string {
	driver := DriverClusterctl
	for _, p := range append([]string{path}, overrides...) {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var doc struct {
			Driver string `yaml:"driver"`
		}
		if yaml.Unmarshal(b, &doc) == nil && doc.Driver != "" {
			driver = doc.Driver
		}
	}
	return driver
}
