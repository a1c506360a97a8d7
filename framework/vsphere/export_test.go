package vsphere

// SetBeforeRename installs a hook that runs just before an import renames
// its finished template to the final name; the returned func removes it.
func SetBeforeRename(f func(name string)) (restore func()) {
	old := beforeRename
	beforeRename = f
	return func() { beforeRename = old }
}

// RunTag is the form of a run ID in temporary import names.
func RunTag(runID string) string { return runTag(runID) }
