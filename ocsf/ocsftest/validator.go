package ocsftest

// A validator of OCSF events against the schema's own JSON definitions
// (testdata/schema, copied from github.com/ocsf/ocsf-schema), resolved as
// the schema does: a class extends its parent up to base_event, a class
// or object $includes profile files whose attributes it gains (marked
// with the profile's name), an object extends its parent object, and an
// attribute's type, array-ness and enum come from the dictionary, the
// class or object adding or overriding requirement and enum values.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// attr is a resolved attribute of a class or object.
type attr struct {
	typ         string // a dictionary type (string_t, ...) or an object name
	array       bool
	requirement string
	enum        map[string]bool
	profile     string // the profile that brought it, "" for the class's own
}

// shape is a resolved class or object.
type shape struct {
	name        string
	uid         int
	category    string
	attrs       map[string]*attr
	profiles    map[string]bool
	atLeastOne  []string
	hasConstrnt bool
}

type Schema struct {
	dir        string
	dict       map[string]map[string]any
	types      map[string]map[string]any
	categories map[string]int
	events     map[string]map[string]any // by name
	objects    map[string]map[string]any // by name
	classes    map[int]*shape            // by class_uid
	resolved   map[string]*shape         // objects, resolved
	base       *shape                    // base_event, resolved
	mu         sync.Mutex
}

func readJSON(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Load reads the schema files in dir (the layout of the ocsf-schema
// repository: dictionary.json, categories.json, events/, objects/,
// profiles/) and resolves every event class they hold.
func Load(dir string) (*Schema, error) {
	schemaDir := dir
	s := &Schema{dir: dir, events: map[string]map[string]any{}, objects: map[string]map[string]any{},
		categories: map[string]int{}, classes: map[int]*shape{}, resolved: map[string]*shape{}}
	d, err := readJSON(filepath.Join(schemaDir, "dictionary.json"))
	if err != nil {
		return nil, err
	}
	s.dict = map[string]map[string]any{}
	for k, v := range d["attributes"].(map[string]any) {
		s.dict[k] = v.(map[string]any)
	}
	s.types = map[string]map[string]any{}
	for k, v := range d["types"].(map[string]any)["attributes"].(map[string]any) {
		s.types[k] = v.(map[string]any)
	}
	c, err := readJSON(filepath.Join(schemaDir, "categories.json"))
	if err != nil {
		return nil, err
	}
	for k, v := range c["attributes"].(map[string]any) {
		s.categories[k] = int(v.(map[string]any)["uid"].(float64))
	}
	for dir, into := range map[string]map[string]map[string]any{"events": s.events, "objects": s.objects} {
		err := filepath.Walk(filepath.Join(schemaDir, dir), func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			m, err := readJSON(p)
			if err != nil {
				return err
			}
			into[m["name"].(string)] = m
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if s.base, err = s.resolve("base_event", s.events, map[string]bool{}); err != nil {
		return nil, err
	}
	for name, raw := range s.events {
		if _, ok := raw["uid"]; !ok {
			continue // an abstract parent (base_event, system, ...)
		}
		sh, err := s.resolve(name, s.events, map[string]bool{})
		if err != nil {
			return nil, err
		}
		cat, ok := s.categories[sh.category]
		if !ok {
			return nil, fmt.Errorf("class %s: unknown category %q", name, sh.category)
		}
		s.classes[cat*1000+sh.uid] = sh
	}
	return s, nil
}

// resolve builds a class or object from its definition, its parents and
// its includes.
func (s *Schema) resolve(name string, defs map[string]map[string]any, seen map[string]bool) (*shape, error) {
	raw, ok := defs[name]
	if !ok {
		return nil, fmt.Errorf("%s: not in the schema files", name)
	}
	if seen[name] {
		return nil, fmt.Errorf("%s: extends itself", name)
	}
	seen[name] = true
	sh := &shape{name: name, attrs: map[string]*attr{}, profiles: map[string]bool{}}
	if parent, ok := raw["extends"].(string); ok {
		p, err := s.resolve(parent, defs, seen)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		sh.category, sh.atLeastOne, sh.hasConstrnt = p.category, p.atLeastOne, p.hasConstrnt
		for k, a := range p.attrs {
			cp := *a
			cp.enum = copyEnum(a.enum)
			sh.attrs[k] = &cp
		}
		for k := range p.profiles {
			sh.profiles[k] = true
		}
	}
	if u, ok := raw["uid"].(float64); ok {
		sh.uid = int(u)
	}
	if c, ok := raw["category"].(string); ok {
		sh.category = c
	}
	for _, p := range anyStrings(raw["profiles"]) {
		sh.profiles[p] = true
	}
	if c, ok := raw["constraints"].(map[string]any); ok {
		sh.hasConstrnt, sh.atLeastOne = true, anyStrings(c["at_least_one"])
	}
	attrs, _ := raw["attributes"].(map[string]any)
	for _, inc := range anyStrings(attrs["$include"]) {
		pr, err := readJSON(filepath.Join(s.dir, inc))
		if err != nil {
			return nil, fmt.Errorf("%s: $include: %w", name, err)
		}
		pname, _ := pr["name"].(string)
		for k, v := range pr["attributes"].(map[string]any) {
			if err := s.merge(sh, k, v.(map[string]any), pname); err != nil {
				return nil, fmt.Errorf("%s (profile %s): %w", name, pname, err)
			}
		}
	}
	for k, v := range attrs {
		if k == "$include" {
			continue
		}
		if err := s.merge(sh, k, v.(map[string]any), ""); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return sh, nil
}

// merge adds or overrides an attribute of sh.
func (s *Schema) merge(sh *shape, k string, def map[string]any, profile string) error {
	a := sh.attrs[k]
	if a == nil {
		d, ok := s.dict[k]
		if !ok {
			return fmt.Errorf("attribute %s: not in the dictionary", k)
		}
		a = &attr{requirement: "optional", profile: profile}
		a.typ, _ = d["type"].(string)
		a.array, _ = d["is_array"].(bool)
		a.enum = enumKeys(d["enum"])
		sh.attrs[k] = a
	}
	if t, ok := def["type"].(string); ok {
		a.typ = t
	}
	if r, ok := def["requirement"].(string); ok {
		a.requirement = r
	}
	for e := range enumKeys(def["enum"]) {
		if a.enum == nil {
			a.enum = map[string]bool{}
		}
		a.enum[e] = true
	}
	if profile == "" && def["profile"] == nil && a.profile != "" && def["requirement"] != nil {
		// The class restates a profile's attribute: it becomes its own.
		a.profile = ""
	}
	return nil
}

func enumKeys(v any) map[string]bool {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func copyEnum(m map[string]bool) map[string]bool {
	if m == nil {
		return nil
	}
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// object returns a resolved object.
func (s *Schema) object(name string) (*shape, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh := s.resolved[name]; sh != nil {
		return sh, nil
	}
	sh, err := s.resolve(name, s.objects, map[string]bool{})
	if err != nil {
		return nil, err
	}
	s.resolved[name] = sh
	return sh, nil
}

// Validate checks one event (a decoded JSON object) and returns every
// problem found: class_uid, category_uid, activity_id and type_uid
// consistent; every attribute the class requires present (a profile's
// only where metadata.profiles names it); no attribute the class, its
// profiles or an object does not define; types; enum values; an
// object's at_least_one constraint.
func (s *Schema) Validate(ev map[string]any) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	num := func(k string) (int64, bool) {
		f, ok := ev[k].(float64)
		return int64(f), ok && f == math.Trunc(f)
	}
	classUID, ok1 := num("class_uid")
	catUID, ok2 := num("category_uid")
	act, ok3 := num("activity_id")
	typeUID, ok4 := num("type_uid")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return []string{"class_uid, category_uid, activity_id and type_uid must be integers"}
	}
	cl := s.classes[int(classUID)]
	if cl == nil {
		return []string{fmt.Sprintf("class_uid %d: no such class in the schema files", classUID)}
	}
	if want := int64(s.categories[cl.category]); catUID != want || classUID/1000 != want {
		bad("category_uid %d: class %s is in category %d", catUID, cl.name, want)
	}
	if typeUID != classUID*100+act {
		bad("type_uid %d: want class_uid*100+activity_id = %d", typeUID, classUID*100+act)
	}
	var profiles map[string]bool
	if md, ok := ev["metadata"].(map[string]any); ok {
		profiles = map[string]bool{}
		for _, p := range anyStrings(md["profiles"]) {
			if !cl.profiles[p] && !s.baseProfile(p) {
				bad("metadata.profiles: %s is not a profile of %s", p, cl.name)
			}
			profiles[p] = true
		}
	}
	s.check(cl, ev, "", profiles, bad)
	return errs
}

// Classes lists the class_uids the schema files define.
func (s *Schema) Classes() []int {
	var out []int
	for uid := range s.classes {
		out = append(out, uid)
	}
	sort.Ints(out)
	return out
}

// baseProfile reports whether a profile is the base event's (every
// class has it).
func (s *Schema) baseProfile(p string) bool { return s.base != nil && s.base.profiles[p] }

// check validates an object's members against a shape.
func (s *Schema) check(sh *shape, obj map[string]any, at string, profiles map[string]bool, bad func(string, ...any)) {
	for k, a := range sh.attrs {
		// A profile's attributes are required only where it applies.
		if a.requirement == "required" && (a.profile == "" || profiles[a.profile]) {
			if _, ok := obj[k]; !ok {
				bad("%s%s: required by %s, missing", at, k, sh.name)
			}
		}
	}
	if len(sh.atLeastOne) > 0 {
		found := false
		for _, k := range sh.atLeastOne {
			if _, ok := obj[k]; ok {
				found = true
			}
		}
		if !found {
			bad("%s: %s needs at least one of %v", strings.TrimSuffix(at, "."), sh.name, sh.atLeastOne)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := sh.attrs[k]
		if a == nil {
			bad("%s%s: not an attribute of %s", at, k, sh.name)
			continue
		}
		if a.profile != "" && profiles != nil && !profiles[a.profile] {
			bad("%s%s: from profile %s, which metadata.profiles does not name", at, k, a.profile)
		}
		v := obj[k]
		if a.array {
			l, ok := v.([]any)
			if !ok {
				bad("%s%s: want an array", at, k)
				continue
			}
			for i, x := range l {
				s.value(a, x, fmt.Sprintf("%s%s[%d]", at, k, i), profiles, bad)
			}
			continue
		}
		s.value(a, v, at+k, profiles, bad)
	}
}

// value validates one value of an attribute's type.
func (s *Schema) value(a *attr, v any, at string, profiles map[string]bool, bad func(string, ...any)) {
	typ := a.typ
	for i := 0; i < 4; i++ { // a type's base type: timestamp_t is a long_t
		t, ok := s.types[typ]
		if !ok {
			break
		}
		base, _ := t["type"].(string)
		if base == "" {
			break
		}
		typ = base
	}
	switch typ {
	case "string_t":
		if _, ok := v.(string); !ok {
			bad("%s: want a string", at)
		}
	case "integer_t", "long_t":
		f, ok := v.(float64)
		switch {
		case !ok || f != math.Trunc(f):
			bad("%s: want an integer", at)
		case typ == "integer_t" && (f > math.MaxInt32 || f < math.MinInt32):
			bad("%s: %v does not fit an integer_t", at, f)
		}
	case "float_t":
		if _, ok := v.(float64); !ok {
			bad("%s: want a number", at)
		}
	case "boolean_t":
		if _, ok := v.(bool); !ok {
			bad("%s: want a boolean", at)
		}
	case "json_t":
	case "object":
		if _, ok := v.(map[string]any); !ok {
			bad("%s: want an object", at)
		}
	default:
		o, ok := v.(map[string]any)
		if !ok {
			bad("%s: want a %s object", at, typ)
			return
		}
		sh, err := s.object(typ)
		if err != nil {
			bad("%s: %v", at, err)
			return
		}
		s.check(sh, o, at+".", profiles, bad)
		return
	}
	// class_uid, category_uid and type_uid carry only the placeholder
	// value of the base event in the source files (the server generates
	// the rest); validate checks them against each other instead.
	if a.enum != nil && !strings.HasSuffix(at, "class_uid") && !strings.HasSuffix(at, "category_uid") {
		if f, ok := v.(float64); ok && !a.enum[fmt.Sprint(int64(f))] {
			bad("%s: %v is not in the enum", at, v)
		}
	}
}
