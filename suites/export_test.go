package suites

// What the package's external tests (package suites_test, which may import
// suites/lifecycle) read of its insides.
var (
	Images       = images
	ClusterInput = clusterInput
	// TeardownAtMove is teardownAtMoveOf for the registry's stages named.
	TeardownAtMove = func(env *Env, known bool, names ...string) bool {
		return teardownAtMoveOf(env, stagesNamed(env, names), known)
	}
	// MadeBeforeUpgrade is madeBeforeUpgrade for the registry's stages named.
	MadeBeforeUpgrade = func(env *Env, id string, known bool, names ...string) error {
		return madeBeforeUpgrade(env, id, stagesNamed(env, names), known)
	}
)

func stagesNamed(env *Env, names []string) []Stage {
	ss, err := env.Registry.StagesNamed(names...)
	if err != nil {
		panic(err)
	}
	return ss
}
