package shield

// CommandFacts reads a shell command line (shellx.Parse) and returns what
// it does: the paths every simple command in it reads, writes and
// deletes, the requests it makes, the programs it runs, the literals its
// interpreter payloads carry, and what cannot be known. Paths are resolved
// as ResolvePath does, relative to the workspace (the directory commands
// start in).
func (s *Shield) CommandFacts(line string) Facts {
	return Facts{Unknown: []string{"command parsing is not implemented yet"}}
}
