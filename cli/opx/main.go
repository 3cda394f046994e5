package main

import (
	"os"

	"github.com/opx-dev/opx/cli"
)

func main() {
	os.Exit(cli.ExitCode(cli.NewApp().Run(os.Args)))
}
