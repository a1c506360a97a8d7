package tanzucli

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tkg-e2e/harness/framework/tanzu"
	"github.com/tkg-e2e/harness/suites"
)

// This file is the bootstrap stage with the tanzu driver: the CLI answers (`tanzu version`).

func tanzuBootstrapBinding(ctx context.Context, env func() *suites.Env) {
	TanzuBootstrapSpec(ctx, func() TanzuBootstrapSpecInput {
		e := env()
		cli, _ := CLIOf(e)
		return TanzuBootstrapSpecInput{Env: e, CLI: cli, Timeout: e.Interval("bootstrap", "tanzu-version").Timeout}
	})
}

// TanzuBootstrapSpecInput is the input of TanzuBootstrapSpec.
type TanzuBootstrapSpecInput struct {
	Env     *suites.Env
	CLI     *CLI
	Timeout time.Duration
}

func (in TanzuBootstrapSpecInput) StageOf() (*suites.Env, string) { return in.Env, "bootstrap" }

func (in TanzuBootstrapSpecInput) Validate() error {
	return suites.InputErrors(in.Env, suites.Unless(in.CLI != nil, "CLI is required: the profile's driver must be tanzu (tanzucli.CLIOf)"),
		suites.Unless(in.Timeout > 0, "Timeout must be positive (interval bootstrap/tanzu-version)"))
}

// TanzuBootstrapSpec checks, before anything is created, that the tanzu
// CLI runs; with the tanzu driver the kind bootstrap cluster is part of
// `tanzu management-cluster create`.
func TanzuBootstrapSpec(_ context.Context, inputGetter func() TanzuBootstrapSpecInput) {
	suites.DeclareStage("checks that the tanzu CLI runs; kind is created by tanzu management-cluster create", inputGetter,
		func(input TanzuBootstrapSpecInput) suites.StageFuncs {
			return suites.StageFuncs{Run: func(ctx context.Context) error {
				res, err := input.CLI.Run(ctx, "version", tanzu.VersionArgs(), input.Timeout, tanzu.Hooks{}, "[bootstrap]")
				if err != nil {
					return fmt.Errorf("the tanzu CLI %s does not run: %w", input.CLI.CLI, err)
				}
				AddReportEntry("tanzu CLI", fmt.Sprintf("%s (%s)", input.CLI.CLI, res.Command))
				input.Env.Printf("[bootstrap] the tanzu CLI runs; the kind bootstrap cluster is created by `tanzu management-cluster create` in the management stage")
				return nil
			}}
		})
}
