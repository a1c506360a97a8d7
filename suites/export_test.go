package suites

// What the package's external tests (package suites_test, which may import
// suites/lifecycle) read of its insides.
var (
	Images       = images
	ClusterInput = clusterInput
)
