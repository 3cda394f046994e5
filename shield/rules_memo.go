package shield

import (
	"reflect"
	"sync"
)

// The tier 1 verdict of an action, kept from Sensitive for Evaluate.
// For a change in the workspace, Sensitive runs the rules to know whether
// they ask about it (askedChange, flow:commit-carries); the engine then
// evaluates the same action (observed, recorded, then judged). One pass
// serves both: Sensitive's judgement watches askedChange's keep
// (judgement.watch) and its full verdict is kept here, keyed by the
// action itself; Evaluate takes it when it judges an action equal in
// every field (reflect.DeepEqual: the same taint, links and toolchain
// included), and runs the rules otherwise. Tier 1 is a pure function of
// the action and the Shield's configuration, so the verdict is the one
// Evaluate would compute.

// tier1MemoSize bounds the verdicts kept (sessions judged at once).
const tier1MemoSize = 4

// tier1Memo is a small ring of actions and their tier 1 verdicts.
type tier1Memo struct {
	mu   sync.Mutex
	next int
	ents [tier1MemoSize]tier1Entry
}

type tier1Entry struct {
	ok  bool
	a   Action // a deep copy: the caller's slices are not kept
	v   Verdict
	set bool
}

// put keeps a's tier 1 verdict.
func (m *tier1Memo) put(a *Action, v Verdict, set bool) {
	c, ok := cloneAction(a)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ents[m.next] = tier1Entry{ok: true, a: c, v: v, set: set}
	m.next = (m.next + 1) % tier1MemoSize
}

// take returns the tier 1 verdict kept for an action equal to a, and
// forgets it (an action is evaluated once).
func (m *tier1Memo) take(a *Action) (Verdict, bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.ents {
		e := &m.ents[i]
		if e.ok && reflect.DeepEqual(&e.a, a) {
			v, set := e.v, e.set
			*e = tier1Entry{}
			return v, set, true
		}
	}
	return Verdict{}, false, false
}

// cloneAction is a deep copy of a: every slice and map copied, so that
// a caller changing its own afterwards changes nothing kept. False if
// a holds what it does not copy (a pointer, an interface: Action has
// none today), and then nothing is kept.
func cloneAction(a *Action) (Action, bool) {
	var c Action
	ok := deepCopy(reflect.ValueOf(&c).Elem(), reflect.ValueOf(a).Elem())
	return c, ok
}

// deepCopy copies src into dst (settable, of src's type): structs field
// by field, slices and maps into new ones (nil stays nil), strings,
// numbers and booleans as values; false for any other kind.
func deepCopy(dst, src reflect.Value) bool {
	switch src.Kind() {
	case reflect.Struct:
		for i := 0; i < src.NumField(); i++ {
			if !deepCopy(dst.Field(i), src.Field(i)) {
				return false
			}
		}
	case reflect.Slice:
		if src.IsNil() {
			return true
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			if !deepCopy(s.Index(i), src.Index(i)) {
				return false
			}
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return true
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			v := reflect.New(src.Type().Elem()).Elem()
			if !deepCopy(v, it.Value()) {
				return false
			}
			m.SetMapIndex(it.Key(), v)
		}
		dst.Set(m)
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		dst.Set(src)
	default:
		return false
	}
	return true
}

// sinkMemo is sinkAdded's last question and answer (a pure function of
// the texts and the Shield's policy).
type sinkMemo struct {
	mu              sync.Mutex
	ok              bool
	added, old, why string
}

func (m *sinkMemo) get(added, old string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ok && m.added == added && m.old == old {
		return m.why, true
	}
	return "", false
}

func (m *sinkMemo) put(added, old, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ok, m.added, m.old, m.why = true, added, old, why
}
