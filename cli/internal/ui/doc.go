// Package ui is how opx's commands speak to a person or a script: the
// --json flag and its one JSON object on stdout (JSONFlag, WriteJSON),
// colour (Green, Red, Paint), short forms (Clip, Plural) and the progress
// bar on stderr of work that takes more than a second (Progress).
//
// It may import urfave/cli and the standard library, nothing of opx: the
// commands in package cli import it, never the other way.
//
// # Invariants
//
//   - Colour only on a terminal, and never when NO_COLOR is set
//     (https://no-color.org); a pipe or a file gets plain text.
//   - The progress bar draws nothing for its first second and nothing
//     when stderr is not a terminal, so scripts and tests see no bar;
//     Finish erases it before the command's own output.
//   - Everything goes to the cli.Context's Writer or ErrWriter, never
//     os.Stdout, so tests capture it.
package ui
