package shellx

// scope holds the variables a line assigns, as far as they are known.
//
// A variable is known when it was last assigned a literal value on a path
// every run takes (sequential statements). An assignment made in a branch
// (if, while, case, ||, &&, a subshell, a pipeline, a function body) is
// seen inside the branch, and after it the variable is unknown: the branch
// may or may not have run. A variable never assigned is unknown (it comes
// from the environment), except HOME, which is "~".
type scope struct {
	vars map[string]value
	// exported are the names marked for export (export X, declare -x).
	exported map[string]bool
	// log lists the names assigned, in order, so branches can forget
	// what they assigned.
	log []string
	// aliased: a name reference was declared (declare -n), through
	// which any assignment may set any variable: none is known again.
	aliased bool
}

// value is a variable's value; known false means it cannot be known.
type value struct {
	text  string
	known bool
	// glob: the value is a pattern (a for loop over a glob): the
	// variable names the paths it matches.
	glob bool
}

// maxExported caps the exported variables a new process is given; past
// it, none are (they are unknown there).
const maxExported = 256

// maxAssigns caps the assignments a scope logs.
const maxAssigns = 1 << 16

func newScope() *scope { return &scope{} }

func (s *scope) get(name string) value {
	if v, ok := s.vars[name]; ok {
		return v
	}
	if name == "HOME" {
		return value{text: "~", known: true}
	}
	return value{}
}

func (s *scope) set(name string, v value) {
	if len(v.text) > maxWordBytes || len(s.log) >= maxAssigns || s.aliased {
		// Too long to carry, or too many to forget reliably: unknown.
		v = value{}
	}
	if s.vars == nil {
		s.vars = map[string]value{}
	}
	s.vars[name] = v
	if len(s.log) < maxAssigns {
		s.log = append(s.log, name)
	}
}

// branch runs fn, then forgets every variable fn assigned.
func (s *scope) branch(fn func()) {
	mark := len(s.log)
	fn()
	if mark > len(s.log) {
		mark = len(s.log)
	}
	for _, name := range s.log[mark:] {
		s.vars[name] = value{}
	}
}

// forget makes every variable unknown, HOME included (after source of a
// file: it may set any of them).
func (s *scope) forget() {
	for name := range s.vars {
		s.vars[name] = value{}
	}
	if s.vars == nil {
		s.vars = map[string]value{}
	}
	s.vars["HOME"] = value{}
}

// export marks name for export: a process the line starts sees it.
func (s *scope) export(name string) {
	if s.exported == nil {
		s.exported = map[string]bool{}
	}
	s.exported[name] = true
}

// child is the scope of a new process started from s: its exported
// variables (HOME always) and env, the command's NAME=value prefixes.
func (s *scope) child(env []Assign) *scope {
	c := newScope()
	if len(s.exported) > maxExported {
		// Too many to copy into every process: unknown there.
		return c
	}
	for name := range s.exported {
		if v, ok := s.vars[name]; ok {
			c.put(name, v)
			c.export(name)
		}
	}
	if v, ok := s.vars["HOME"]; ok {
		c.put("HOME", v)
	}
	for _, a := range env {
		c.put(a.Name, value{text: a.Value.Text, known: !a.Value.Dynamic})
		c.export(a.Name)
	}
	return c
}

// put sets a variable without logging it (a new scope's starting values).
func (s *scope) put(name string, v value) {
	if s.vars == nil {
		s.vars = map[string]value{}
	}
	s.vars[name] = v
}
