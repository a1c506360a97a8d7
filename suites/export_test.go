package suites

// What the package's external tests (package suites_test, which may import
// suites/lifecycle) read of its insides.
var (
	Images       = images
	ClusterInput = clusterInput
	// TeardownAtMove is teardownAtMoveOf for the registry's stages named.
	TeardownAtMove = func(env *Env, known bool, names ...string) bool {
		var ss []Stage
		for _, n := range names {
			s, ok := env.Registry.Stage(n)
			if !ok {
				panic("no stage " + n)
			}
			ss = append(ss, s)
		}
		return teardownAtMoveOf(env, ss, known)
	}
)
