package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/ledger"
	"github.com/urfave/cli/v2"
)

// Version is opx's version, recorded in engine.started and printed by
// opx version and opx --version.
const Version = "0.1.0-dev"

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print opx's version, the ledger format it writes, and how it was built",
		UsageText: "opx version [--json]",
		Description: "The same version is recorded in every engine.started entry, so a ledger says which opx wrote it.\n\n" +
			exitCodesHelp(""),
		HideHelpCommand: true,
		Flags:           []cli.Flag{ui.JSONFlag()},
		Action:          runVersion,
	}
}

// versionInfo is the --json output of opx version.
type versionInfo struct {
	Version  string `json:"version"`
	Format   string `json:"ledger_format"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

func runVersion(c *cli.Context) error {
	if _, err := wantArgs(c, 0, 0, ""); err != nil {
		return err
	}
	return printVersion(c, c.Bool("json"))
}

// printVersion writes opx's version for opx version and opx --version.
func printVersion(c *cli.Context, asJSON bool) error {
	v := versionInfo{Version: Version, Format: ledger.Format, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if asJSON {
		return ui.WriteJSON(c, v)
	}
	fmt.Fprintf(c.App.Writer, "opx %s (ledger format %s, %s, %s", v.Version, v.Format, v.Go, v.Platform)
	if v.Revision != "" {
		dirty := ""
		if v.Modified {
			dirty = ", modified"
		}
		fmt.Fprintf(c.App.Writer, ", revision %.12s%s", v.Revision, dirty)
	}
	fmt.Fprintln(c.App.Writer, ")")
	return nil
}
