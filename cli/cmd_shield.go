package cli

import "github.com/urfave/cli/v2"

// shieldCommand is the "opx shield" group: Shield's judgement without an
// engine, for policy authors and the CI of policies.
func shieldCommand() *cli.Command {
	return &cli.Command{
		Name:      "shield",
		Usage:     "judge proposals with Shield offline: test a policy before deploying it",
		UsageText: "opx shield COMMAND [options] [arguments]",
		Action:    unknownCommand,
		Subcommands: []*cli.Command{
			shieldEvalCommand(),
		},
	}
}
