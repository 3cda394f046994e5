package event

// FastDecode and DecodeJSON expose the two halves of Check to the
// differential tests of package event_test.
var (
	FastDecode = fastDecode
	DecodeJSON = decodeJSON
	Reference  = func(typ string, data []byte) error { _, err := decode(typ, data); return err }
)
