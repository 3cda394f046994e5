// Package usage is how opx's commands read their command line and word
// its failures: the usage error of a bad flag, argument or command
// (Error, Errorf), the full name of a command for "Run '… --help'"
// (HelpName), which flag the person gave explicitly, innermost first
// (FlagGiven), and an error reworded for the command line (Explained).
//
// It may import urfave/cli and the standard library, nothing of opx: the
// commands in package cli and the packages under cli/internal import it,
// never the other way.
//
// # Invariants
//
//   - A usage error maps to exit code 2, an Explained one to whatever
//     the error it wraps maps to: both keep the cause in the chain
//     (Unwrap), and cli.ExitCode, the one place exit codes are mapped,
//     finds them with errors.Is and errors.As.
package usage
