package shield

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
)

// Obfuscated code written (rules 11, issue 27 pass 8). Code that hides
// what it runs or where it connects in an encoded literal reads as
// harmless to a reviewer: eval(gzinflate(base64_decode('…'))),
// Assembly.Load(Convert.FromBase64String(Blob)), String.fromCharCode(104,
// 116, …) handed to fetch, a URL spelled as bytes or base64 in a mobile
// client, a YAML task piping b64decode into a shell. Whatever the
// language and decoder, the shape is the same: a literal that decodes to
// a URL, to code or a command, or to an executable. writtenObfuscation
// decodes the literals a written text holds (base64, hex strings, byte
// and char-code arrays, rot13, gzip and raw deflate inside base64) and
// judges what they decode to.

// Bounds: the literals decoded per text, the bytes of each, the bytes
// inflated from a compressed one.
const (
	maxLiterals     = 24
	maxLiteralBytes = 16 << 10
	maxInflated     = 64 << 10
)

var (
	// b64Lit is a base64 literal in quotes (16 characters or more).
	b64Lit = mustRx(`["'\x60]([A-Za-z0-9+/_-]{16,}={0,2})["'\x60]`)
	// hexLit is a hex string literal in quotes (an even count, 16 or more).
	hexLit = mustRx(`["'\x60]((?:[0-9a-fA-F]{2}){8,})["'\x60]`)
	// byteList is a list of 8 or more numbers (0x68, 104) in brackets or
	// parentheses: a byte array or a char-code call's arguments.
	byteList = mustRx(`[\[({]\s*((?:(?:0x[0-9a-fA-F]{1,2}|\d{1,3})\s*,\s*){7,}(?:0x[0-9a-fA-F]{1,2}|\d{1,3}))\s*,?\s*[\])}]`)
	// rot13Lit is a rot13 call's literal argument.
	rot13Lit = mustRx(`(?i)(?:str_rot13|rot13|codecs\.decode)\s*\(\s*["']([^"'\n]{3,200})["']`)
	// decodedBad is what a decoded literal must not say: a URL, a shell
	// download-and-run, a code runner.
	decodedBad = mustRx(`(?i)\b(?:https?|ftp|wss?)://[\w.-]+|\b(?:curl|wget|nc|bash|sh|powershell|iex)\b[^\n]{0,80}(?:\||-c\b|-e\b|https?:)|\b(?:eval|exec|system|passthru|shell_exec|popen|proc_open|assert|create_function|Runtime\.getRuntime|child_process|subprocess|os\.system)\s*\(`)
	// dangerousNames are what a rot13'd or decoded bare word may not be:
	// functions that run code or commands.
	dangerousNames = map[string]bool{"system": true, "exec": true, "passthru": true, "shell_exec": true, "popen": true, "proc_open": true, "eval": true,
		"assert": true, "create_function": true, "pcntl_exec": true, "base64_decode": true, "gzinflate": true, "file_get_contents": true, "curl_exec": true}
)

// writtenObfuscation is `encoded-payload:written` (escalate; rules 11): a
// text written or carried (a file's content, an edit's new text, a
// command's data) holding an encoded literal that decodes to a URL, to
// code or a command, or to an executable. Tests are spared.
func (s *Shield) writtenObfuscation(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		if p, ok := strings.CutPrefix(t.Source, "content:"); ok && testSource(p) {
			continue
		}
		if t.Source == "url" || t.Source == "headers" {
			continue
		}
		if what := obfuscated(clipRaw(t.Body, maxAppsecText)); what != "" {
			j.escalate("encoded-payload:written", "%s hides %s: a reviewer reads a literal, the program runs or reaches what it decodes to", textWhere(t.Source), what)
			return
		}
	}
}

// obfuscated says what an encoded literal in text decodes to, or "".
func obfuscated(text string) string {
	n := 0
	for _, m := range quotedRuns(text, maxLiterals, b64Char, 16, false) { // b64Lit
		n++
		if why := judgeDecoded("base64", decodeB64(m[1])); why != "" {
			return why
		}
	}
	for _, m := range quotedRuns(text, maxLiterals-n, hexChar, 16, true) { // hexLit
		n++
		b, err := hex.DecodeString(clip(m[1], maxLiteralBytes))
		if err == nil {
			if why := judgeDecoded("hex", b); why != "" {
				return why
			}
		}
	}
	var lists [][]string
	if strings.Count(text, ",") >= 7 {
		lists = byteList.FindAllStringSubmatch(text, maxLiterals)
	}
	for _, m := range lists {
		if why := judgeDecoded("a byte or char-code list", parseByteList(m[1])); why != "" {
			return why
		}
	}
	if !strings.Contains(text, "rot13") && !strings.Contains(text, "codecs.decode") {
		return ""
	}
	for _, m := range rot13Lit.FindAllStringSubmatch(text, maxLiterals) {
		d := rot13(m[1])
		if dangerousNames[strings.ToLower(d)] {
			return "a function that runs code behind rot13 (" + m[1] + " is " + d + ")"
		}
		if why := judgeDecoded("rot13", []byte(d)); why != "" {
			return why
		}
	}
	return ""
}

// quotedRuns is b64Lit's or hexLit's FindAllStringSubmatch(text, n),
// read by a scanner (both ran over every written text): a quote (", '
// or `), a run of at least min characters of the class (for hex, an
// even count), base64's up to two "=", and a quote; leftmost first, not
// overlapping. Each expression has one way to match at a quote (the run
// is the longest, and what follows it is a quote or nothing matches), so
// the scan gives the same matches (TestQuotedRuns).
func quotedRuns(text string, n int, class func(byte) bool, minRun int, even bool) [][]string {
	if n == 0 {
		return nil
	}
	var out [][]string
	for i := 0; i < len(text); i++ {
		if !quoteChar(text[i]) {
			continue
		}
		j := i + 1
		for j < len(text) && class(text[j]) {
			j++
		}
		run := j - i - 1
		if run < minRun || even && run%2 != 0 {
			continue
		}
		if !even {
			for e := 0; e < 2 && j < len(text) && text[j] == '='; e++ {
				j++
			}
		}
		if j >= len(text) || !quoteChar(text[j]) {
			continue
		}
		out = append(out, []string{text[i : j+1], text[i+1 : j]})
		if len(out) == n {
			break
		}
		i = j // the next match begins after this one's closing quote
	}
	return out
}

func quoteChar(c byte) bool { return c == '"' || c == '\'' || c == '`' }

func b64Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

func hexChar(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// decodeB64 decodes a base64 literal (standard or URL alphabet, padded or
// not); nil when it is not base64.
func decodeB64(lit string) []byte {
	lit = clip(lit, maxLiteralBytes)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(lit); err == nil {
			return b
		}
	}
	return nil
}

// judgeDecoded says what decoded bytes are when they are a URL, code, a
// command or an executable (inflating gzip or raw deflate first), or "".
func judgeDecoded(how string, b []byte) string {
	if len(b) < 4 {
		return ""
	}
	switch {
	case bytes.HasPrefix(b, []byte("MZ")) && len(b) >= 64:
		return "a Windows executable (" + how + " decodes to MZ…)"
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "an ELF executable (" + how + " decodes to \\x7fELF…)"
	case bytes.HasPrefix(b, []byte("\xca\xfe\xba\xbe")) || bytes.HasPrefix(b, []byte("dex\n")):
		return "compiled code (" + how + " decodes to a class or dex file)"
	}
	if inflated := inflate(b); inflated != nil {
		if why := judgeText(how+" then inflated", inflated); why != "" {
			return why
		}
	}
	return judgeText(how, b)
}

// judgeText judges decoded bytes that read as text.
func judgeText(how string, b []byte) string {
	if !mostlyPrintable(b) {
		return ""
	}
	d := string(b)
	if m := decodedBad.FindString(d); m != "" {
		return "what " + how + " decodes to: " + quote(clip(d, 80))
	}
	if dangerousNames[strings.ToLower(strings.TrimSpace(d))] {
		return "a function that runs code behind " + how + " (" + d + ")"
	}
	if strings.HasPrefix(strings.TrimSpace(d), "<?php") {
		return "PHP code (" + how + " decodes to " + quote(clip(d, 60)) + ")"
	}
	return ""
}

// inflate returns b gunzipped or raw-inflated (bounded), or nil.
func inflate(b []byte) []byte {
	var r io.Reader
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil
		}
		r = z
	} else {
		r = flate.NewReader(bytes.NewReader(b))
	}
	out, err := io.ReadAll(io.LimitReader(r, maxInflated))
	if (err != nil && len(out) == 0) || len(out) < 4 {
		return nil
	}
	return out
}

// mostlyPrintable reports whether b reads as text: printable ASCII, tabs
// and newlines for at least 90 % of it.
func mostlyPrintable(b []byte) bool {
	good := 0
	for _, c := range b {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			good++
		}
	}
	return good*10 >= len(b)*9
}

// parseByteList parses "0x68, 0x74" or "104, 116" into bytes (values
// over 255 end it).
func parseByteList(list string) []byte {
	var out []byte
	for _, x := range strings.Split(list, ",") {
		x = strings.TrimSpace(x)
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(x), "0x"), map[bool]int{true: 16, false: 10}[strings.HasPrefix(strings.ToLower(x), "0x")], 16)
		if err != nil || v > 255 {
			return out
		}
		out = append(out, byte(v))
		if len(out) >= maxLiteralBytes {
			break
		}
	}
	return out
}

// rot13 rotates letters by 13.
func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}
