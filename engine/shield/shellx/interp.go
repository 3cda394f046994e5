package shellx

// isInterpreter names the language of an interpreter program ("" if it is
// none).
func isInterpreter(name string) string { return "" }

func (p *parser) interpreter(lang string, args []Word, c *ctx, in input) {}
