package cli

import (
	"strings"

	"github.com/opx-dev/opx/cli/internal/usage"
	"github.com/urfave/cli/v2"
)

// positionals returns c's positional arguments and applies any flags that
// follow them. urfave/cli/v2 stops parsing flags at the first argument, so
// without this "opx ledger show 12 --json" would treat --json as a second
// argument. A "--" ends the flags; arguments after it are positional even
// when they start with "-" (a note that begins with a dash).
//
// When the first remaining argument starts with "-", urfave (the standard
// flag package) must have stopped at a "--", since it would otherwise have
// parsed it as a flag: then every argument is positional.
//
// If --help appears after the arguments, positionals prints the command's
// help and returns errHelpShown.
func positionals(c *cli.Context) ([]string, error) {
	raw := c.Args().Slice()
	if len(raw) > 0 && isFlag(raw[0]) {
		return raw, nil
	}
	var out []string
	for i := 0; i < len(raw); i++ {
		a := raw[i]
		if a == "--" {
			return append(out, raw[i+1:]...), nil
		}
		if !isFlag(a) {
			out = append(out, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "help" || name == "h" {
			if err := cli.ShowSubcommandHelp(c); err != nil {
				return nil, err
			}
			return nil, errHelpShown
		}
		cur := c.Value(name)
		if cur == nil {
			return nil, usage.Errorf(c, "flag provided but not defined: %s", a)
		}
		if _, isBool := cur.(bool); isBool && !hasVal {
			val, hasVal = "true", true
		}
		if !hasVal {
			if i+1 >= len(raw) {
				return nil, usage.Errorf(c, "flag needs an argument: %s", a)
			}
			i++
			val = raw[i]
		}
		if err := c.Set(name, val); err != nil {
			return nil, usage.Errorf(c, "invalid value %q for flag %s: %v", val, a, err)
		}
	}
	return out, nil
}

// isFlag reports whether a looks like a flag ("-x", "--x", "--x=v");
// "-" alone is an argument (by convention, standard input).
func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-'
}

// wantArgs checks that c got between min and max positional arguments
// (max < 0: no limit) and returns them.
func wantArgs(c *cli.Context, min, max int, what string) ([]string, error) {
	args, err := positionals(c)
	if err != nil {
		return nil, err
	}
	switch {
	case len(args) < min:
		return nil, usage.Errorf(c, "missing %s", what)
	case max >= 0 && len(args) > max:
		return nil, usage.Errorf(c, "unexpected argument %q", args[max])
	}
	return args, nil
}
