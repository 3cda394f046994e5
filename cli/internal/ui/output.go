package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// JSONFlag is the --json flag of every command that has one.
func JSONFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout instead of text"}
}

// WriteJSON prints v as one JSON object (and a newline) on c's Writer.
func WriteJSON(c *cli.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	_, err = c.App.Writer.Write(append(b, '\n'))
	return err
}

// colourOK reports whether w may get ANSI colour: only a terminal, and
// never when NO_COLOR is set to anything non-empty (https://no-color.org).
func colourOK(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

// Paint wraps s in the ANSI colour code when w may get colour.
func Paint(w io.Writer, code, s string) string {
	if !colourOK(w) {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Green paints s green (success) when w may get colour.
func Green(w io.Writer, s string) string { return Paint(w, "32", s) }

// Red paints s red (failure) when w may get colour.
func Red(w io.Writer, s string) string { return Paint(w, "31", s) }

// Clip shortens s to at most n runes, marking a cut with "...".
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-3]) + "..."
}

// Plural returns "1 entry" or "3 entries" style counts.
func Plural(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
