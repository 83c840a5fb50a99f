package loader

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastYAMLToJSON converts the block YAML that `kubectl get -o yaml` and
// most hand-written manifests use straight to JSON, an order of magnitude
// faster than the generic conversion (which builds a tree of interfaces
// and marshals it). It declines — returns false — for anything whose
// meaning it does not know for certain under YAML 1.1 as sigs.k8s.io/yaml
// reads it: anchors, aliases, tags, comments, flow collections other than
// {} and [], folded or kept block scalars, multi-line plain scalars,
// escapes in double quotes, scalars that could be numbers, booleans,
// timestamps or nulls in another spelling, and duplicate keys. The caller
// then converts the document the generic way, which gives the same
// answer or words the error. FuzzFastYAML holds it to that.
func fastYAMLToJSON(doc []byte) ([]byte, bool) {
	return fastYAMLToJSONWith(doc, nil)
}

// yamlScratch is memory fastYAMLToJSONWith reuses from one document to
// the next: a converting goroutine holds one.
type yamlScratch struct {
	// blocks, when set, remembers converted blocks (yamlBlocks).
	blocks *yamlBlocks
	lines  []yamlLine
	// out is a JSON buffer handed back with recycle once the document
	// converted into it is no longer needed.
	out []byte
}

// recycle hands back the JSON fastYAMLToJSONWith returned, for the next
// document (nothing may hold it any longer).
func (s *yamlScratch) recycle(out []byte) {
	if s != nil && cap(out) > cap(s.out) {
		s.out = out[:0]
	}
}

// fastYAMLToJSONWith is fastYAMLToJSON cutting the lines into scratch's
// (nil allocates them).
func fastYAMLToJSONWith(doc []byte, scratch *yamlScratch) ([]byte, bool) {
	if len(doc) > 0 && doc[len(doc)-1] != '\n' {
		// A literal block scalar's final line break is the input's.
		return nil, false
	}
	var buf []yamlLine
	if scratch != nil {
		buf = scratch.lines[:0]
	}
	p := yamlParser{lines: splitYAMLLines(doc, buf)}
	if scratch != nil {
		p.blocks = scratch.blocks
	}
	if scratch != nil && p.lines != nil {
		scratch.lines = p.lines
	}
	if p.lines == nil {
		return nil, false
	}
	p.skipBlank()
	if p.i == len(p.lines) {
		return []byte("null"), true
	}
	if size := len(doc) + len(doc)/4; scratch != nil && cap(scratch.out) >= size {
		p.out, scratch.out = scratch.out[:0], nil
	} else {
		p.out = make([]byte, 0, size)
	}
	if !p.node(p.lines[p.i].indent) {
		return nil, false
	}
	p.skipBlank()
	if p.i != len(p.lines) {
		return nil, false
	}
	return p.out, true
}

// yamlLine is a line of a document: its indentation and what follows.
type yamlLine struct {
	indent  int
	content []byte // without indentation and trailing space
	raw     []byte // without the line break
}

// splitYAMLLines cuts doc into lines, or returns nil for what the parser
// does not read (tabs in indentation, line breaks other than \n and \r\n,
// invalid UTF-8, directives and document markers).
func splitYAMLLines(doc []byte, lines []yamlLine) []yamlLine {
	if !utf8.Valid(doc) || !printable(doc) {
		return nil
	}
	if lines == nil {
		lines = make([]yamlLine, 0, bytes.Count(doc, []byte("\n"))+1)
	}
	for len(doc) > 0 {
		raw := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			raw, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if bytes.IndexByte(raw, '\r') >= 0 {
			return nil
		}
		indent := 0
		for indent < len(raw) && raw[indent] == ' ' {
			indent++
		}
		content := bytes.TrimRight(raw[indent:], " ")
		if len(content) > 0 && content[0] == '\t' || bytes.HasPrefix(raw, []byte("---")) || bytes.HasPrefix(raw, []byte("...")) || bytes.HasPrefix(raw, []byte("%")) {
			return nil
		}
		lines = append(lines, yamlLine{indent: indent, content: content, raw: raw})
	}
	return lines
}

type yamlParser struct {
	lines []yamlLine
	i     int
	out   []byte
	// depth is how many mappings the line p.i is in; blocks, when set,
	// converts the nested blocks of the keys at depth 2 once.
	depth  int
	blocks *yamlBlocks
}

// The items of a List of pods repeat most of their blocks — a workload's
// labels, owner references, containers and tolerations are written alike
// in each of its pods. yamlBlocks remembers, for one converting
// goroutine, the JSON of the nested blocks of the keys at depth 2 (the
// keys of an item's metadata, spec and status) by their lines: a block
// converts to the same JSON wherever it is, and it ends at the same line
// (the first line not indented more, nor a sequence entry at the key's
// indentation). Blocks that did not convert are not remembered.

// Bounds of yamlBlocks: how many blocks, and how long each.
const (
	maxYAMLBlocks    = 4096
	maxYAMLBlockSize = 64 << 10
)

// yamlBlocks is the JSON of converted blocks, by their indentation and
// lines.
type yamlBlocks struct {
	json map[string][]byte
	key  []byte
	// lookups and hits count the blocks looked up: blocks that are rarely
	// alike are no longer looked up (off).
	lookups, hits int
	off           bool
}

// yamlBlocksTrial is how many blocks are looked up before the lookups stop
// if fewer than one in eight was found.
const yamlBlocksTrial = 2048

func newYAMLBlocks() *yamlBlocks { return &yamlBlocks{json: map[string][]byte{}} }

// block converts the nested block of a key at indent (whose line was the
// one before p.i) through p.blocks. done is false when there is no such
// block, for value to read what follows; ok is whether it converted.
func (p *yamlParser) block(indent int, inMapping bool) (done, ok bool) {
	end := p.i
	for j := p.i; j < len(p.lines); j++ {
		l := p.lines[j]
		if len(l.content) == 0 {
			continue
		}
		if l.indent <= indent && !(inMapping && l.indent == indent && isSeqEntry(l.content)) {
			break
		}
		end = j + 1
	}
	if end == p.i {
		return false, false
	}
	b := p.blocks
	key := append(b.key[:0], byte(indent>>8), byte(indent), 0)
	if inMapping {
		key[2] = 1
	}
	for _, l := range p.lines[p.i:end] {
		key = append(key, l.raw...)
		key = append(key, '\n')
	}
	b.key = key
	b.lookups++
	if out, hit := b.json[string(key)]; hit {
		b.hits++
		p.out = append(p.out, out...)
		p.i = end
		return true, true
	}
	if b.lookups >= yamlBlocksTrial && b.hits < b.lookups/8 {
		b.off = true
	}
	start := len(p.out)
	if !p.nested(indent, inMapping) {
		return true, false
	}
	if p.i < end {
		return true, true // ended elsewhere: not remembered
	}
	for _, l := range p.lines[end:p.i] {
		if len(l.content) != 0 {
			return true, true // ended elsewhere: not remembered
		}
	}
	if len(b.json) < maxYAMLBlocks && len(p.out)-start <= maxYAMLBlockSize {
		b.json[string(key)] = bytes.Clone(p.out[start:])
	}
	return true, true
}

func (p *yamlParser) skipBlank() {
	for p.i < len(p.lines) && len(p.lines[p.i].content) == 0 {
		p.i++
	}
}

// node converts the block node whose first line is p.i, at indent.
func (p *yamlParser) node(indent int) bool {
	l := p.lines[p.i]
	if l.indent != indent {
		return false
	}
	if isSeqEntry(l.content) {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func isSeqEntry(content []byte) bool {
	return len(content) > 0 && content[0] == '-' && (len(content) == 1 || content[1] == ' ')
}

// mapping converts the block mapping at p.i, whose keys are at indent.
func (p *yamlParser) mapping(indent int) bool {
	p.depth++
	defer func() { p.depth-- }()
	p.out = append(p.out, '{')
	var keys []string
	first := true
	for {
		p.skipBlank()
		if p.i == len(p.lines) {
			break
		}
		l := p.lines[p.i]
		if l.indent < indent || l.indent == indent && isSeqEntry(l.content) {
			break
		}
		if l.indent > indent {
			return false
		}
		key, rest, ok := splitKey(l.content)
		if !ok {
			return false
		}
		for _, k := range keys {
			if k == key {
				return false // a duplicate: the generic path names it
			}
		}
		keys = append(keys, key)
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.out = appendJSONString(p.out, key)
		p.out = append(p.out, ':')
		p.i++
		if !p.value(indent, rest, true) {
			return false
		}
	}
	p.out = append(p.out, '}')
	return true
}

// value converts the value of a key (or of a sequence entry) at indent
// whose rest of line is rest: inline, a block scalar, or a nested block
// on the following lines.
func (p *yamlParser) value(indent int, rest []byte, inMapping bool) bool {
	if len(rest) > 0 {
		if rest[0] == '|' {
			return p.literal(indent, rest)
		}
		return p.scalar(rest)
	}
	p.skipBlank()
	if p.blocks != nil && p.depth == 2 && !p.blocks.off {
		if done, ok := p.block(indent, inMapping); done {
			return ok
		}
	}
	return p.nested(indent, inMapping)
}

// nested converts the nested block at p.i of a key (or sequence entry) at
// indent, or null when there is none.
func (p *yamlParser) nested(indent int, inMapping bool) bool {
	if p.i < len(p.lines) {
		next := p.lines[p.i]
		if next.indent > indent {
			return p.node(next.indent)
		}
		// kubectl writes a mapping's sequence at the key's indentation.
		if inMapping && next.indent == indent && isSeqEntry(next.content) {
			return p.sequence(indent)
		}
	}
	p.out = append(p.out, "null"...)
	return true
}

// sequence converts the block sequence at p.i, whose entries are at
// indent.
func (p *yamlParser) sequence(indent int) bool {
	p.out = append(p.out, '[')
	first := true
	for {
		p.skipBlank()
		if p.i == len(p.lines) {
			break
		}
		l := p.lines[p.i]
		if l.indent != indent || !isSeqEntry(l.content) {
			if l.indent > indent {
				return false
			}
			break
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		entry := bytes.TrimLeft(l.content[1:], " ")
		switch {
		case len(entry) == 0:
			p.i++
			if !p.value(indent, nil, false) {
				return false
			}
		case startsWithKey(entry) || entry[0] == '"' && bytes.Contains(entry, []byte(`": `)):
			// "- key: value": a mapping whose keys are where key is.
			at := indent + (len(l.content) - len(entry))
			p.lines[p.i] = yamlLine{indent: at, content: entry, raw: l.raw}
			if !p.mapping(at) {
				return false
			}
		case isSeqEntry(entry) || entry[0] == '|':
			return false
		default:
			p.i++
			if !p.scalar(entry) {
				return false
			}
		}
	}
	p.out = append(p.out, ']')
	return true
}

// splitKey splits "key: rest" or "key:" into the key and the rest.
func splitKey(content []byte) (key string, rest []byte, ok bool) {
	if content[0] == '"' || content[0] == '\'' {
		end := bytes.IndexByte(content[1:], content[0])
		if end < 0 {
			return "", nil, false
		}
		k, ok := quoted(content[:end+2])
		if !ok || end+2 >= len(content) || content[end+2] != ':' {
			return "", nil, false
		}
		rest = content[end+3:]
		if len(rest) > 0 && rest[0] != ' ' {
			return "", nil, false
		}
		return k, bytes.TrimLeft(rest, " "), true
	}
	i := bytes.Index(content, []byte(": "))
	if i < 0 {
		if content[len(content)-1] != ':' {
			return "", nil, false
		}
		i = len(content) - 1
	}
	k := content[:i]
	if len(k) == 0 || k[len(k)-1] == ' ' || !isPlainString(k) {
		return "", nil, false
	}
	if i+1 < len(content) {
		rest = bytes.TrimLeft(content[i+2:], " ")
	}
	return string(k), rest, true
}

// scalar converts an inline scalar; p.i is the line after it.
func (p *yamlParser) scalar(s []byte) bool {
	// A scalar on one line: a more indented line after it would continue
	// it (or be an error).
	if p.i < len(p.lines) {
		if next := p.lines[p.i]; len(next.content) > 0 && next.indent > p.lines[p.i-1].indent {
			return false
		}
	}
	switch s[0] {
	case '"', '\'':
		v, ok := quoted(s)
		if !ok {
			return false
		}
		p.out = appendJSONString(p.out, v)
		return true
	case '{', '[':
		if string(s) == "{}" || string(s) == "[]" {
			p.out = append(p.out, s...)
			return true
		}
		return false
	}
	switch string(s) {
	case "true", "false", "null":
		p.out = append(p.out, s...)
		return true
	case "~":
		p.out = append(p.out, "null"...)
		return true
	}
	if isDecimalInt(s) {
		p.out = append(p.out, s...)
		return true
	}
	if !isPlainString(s) {
		return false
	}
	p.out = appendJSONString(p.out, string(s))
	return true
}

// literal converts a "|" or "|-" block scalar whose key is at indent.
func (p *yamlParser) literal(indent int, header []byte) bool {
	clip := false // "|" keeps one final line break, "|-" none
	switch string(header) {
	case "|":
		clip = true
	case "|-":
	default:
		return false
	}
	if p.i >= len(p.lines) || len(p.lines[p.i].content) == 0 {
		return false // leading empty lines: indentation rules we do not follow
	}
	at := p.lines[p.i].indent
	if at <= indent {
		return false
	}
	var b strings.Builder
	trailing := 0
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if len(l.content) == 0 {
			if len(l.raw) > at {
				return false // spaces beyond the indentation on an empty line
			}
			trailing++
			p.i++
			continue
		}
		if l.indent < at {
			break
		}
		for range trailing {
			b.WriteByte('\n')
		}
		trailing = 0
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(l.raw[at:])
		p.i++
	}
	if clip {
		b.WriteByte('\n')
	}
	p.out = appendJSONString(p.out, b.String())
	return true
}

// quoted returns the value of a quoted scalar that is the whole of s: a
// double-quoted one without escapes, or a single-quoted one.
func quoted(s []byte) (string, bool) {
	if len(s) < 2 || s[len(s)-1] != s[0] {
		return "", false
	}
	in := s[1 : len(s)-1]
	if s[0] == '"' {
		if bytes.ContainsAny(in, "\"\\") {
			return "", false
		}
		return string(in), true
	}
	v := bytes.ReplaceAll(in, []byte("''"), []byte("'"))
	if bytes.IndexByte(bytes.ReplaceAll(in, []byte("''"), nil), '\'') >= 0 {
		return "", false
	}
	return string(v), true
}

// isDecimalInt: 0, or digits with an optional minus and no leading zero,
// short enough for an int64 — what YAML 1.1 and JSON read alike.
func isDecimalInt(s []byte) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || d[0] == '0' && len(d) > 1 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPlainString reports whether a plain scalar can only be a string:
// it starts like no other kind of node, contains no comment or mapping
// indicator, is not one of YAML 1.1's spellings of booleans and nulls,
// and, when it starts like a number, contains what no number or timestamp
// contains.
func isPlainString(s []byte) bool {
	c := s[0]
	switch {
	case c == '.' && len(s) == 1:
		// "." alone, as managed fields name a map itself: not a float
		// (nor .inf or .nan) to go-yaml v2.
		return true
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '/', c == '_':
		if len(s) <= len("false") {
			// Lower-cased as strings.ToLower would (the words are ASCII:
			// no other letter lower-cases to one of theirs).
			var lower [len("false")]byte
			for i, b := range s {
				if b >= 'A' && b <= 'Z' {
					b += 'a' - 'A'
				}
				lower[i] = b
			}
			switch string(lower[:len(s)]) {
			case "y", "yes", "n", "no", "on", "off", "true", "false", "null":
				return false
			}
		}
	case c >= '0' && c <= '9':
		if !notNumeric(s) {
			return false
		}
	default:
		return false
	}
	if bytes.Contains(s, []byte(": ")) || bytes.Contains(s, []byte(" #")) || s[len(s)-1] == ':' {
		return false
	}
	return true
}

// notNumeric reports whether a plain scalar starting with a digit
// resolves to a string under YAML 1.1 as go-yaml v2 resolves it (the
// resolver sigs.k8s.io/yaml uses): not a timestamp (it never starts with
// four digits and a dash), and neither an integer in any base nor a float,
// underscores removed.
func notNumeric(s []byte) bool {
	if len(s) >= 5 && isDigits(s[:4]) && s[4] == '-' {
		return false
	}
	plain := strings.ReplaceAll(string(s), "_", "")
	if !integerChars(plain) {
		// Neither ParseInt nor ParseUint would read it (and their errors
		// allocate).
		return !yamlFloat(plain) && !yamlBinary(plain)
	}
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return false
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return false
	}
	return !yamlFloat(plain) && !yamlBinary(plain)
}

// yamlBinary reports whether go-yaml v2 could read plain, which starts
// with a digit, as a binary integer: "0b" then what strconv.ParseInt reads
// in base 2 (a sign and binary digits; those too large too, to be safe).
func yamlBinary(plain string) bool {
	rest, ok := strings.CutPrefix(plain, "0b")
	if !ok {
		return false
	}
	if len(rest) > 0 && (rest[0] == '+' || rest[0] == '-') {
		rest = rest[1:]
	}
	if rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] != '0' && rest[i] != '1' {
			return false
		}
	}
	return true
}

// integerChars reports whether s has only characters an integer of any
// base strconv reads can hold (digits, hex digits, base prefixes, signs).
func integerChars(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F',
			c == 'x', c == 'X', c == 'o', c == 'O', c == '+', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// yamlFloat matches go-yaml v2's float syntax for a scalar starting with a
// digit: digits, an optional fraction, an optional exponent.
func yamlFloat(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', 'n')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// printable reports whether doc holds only what YAML allows unescaped and
// breaks lines only with \n and \r\n: no C0 or C1 controls but tab and
// line breaks, no DEL, no NEL, LS, PS, byte order mark or non-characters.
func printable(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			// Printable ASCII, most of a document.
		case c == '\t' || c == '\n' || c == '\r':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(doc) && doc[i+1] >= 0x80 && doc[i+1] <= 0xa0:
			return false // C1 controls, NEL, and no-break space to be safe
		case c == 0xe2 && i+2 < len(doc) && doc[i+1] == 0x80 && (doc[i+2] == 0xa8 || doc[i+2] == 0xa9):
			return false
		case c == 0xef && i+2 < len(doc) && doc[i+1] == 0xbb && doc[i+2] == 0xbf:
			return false
		case c == 0xef && i+2 < len(doc) && doc[i+1] == 0xbf && (doc[i+2] == 0xbe || doc[i+2] == 0xbf):
			return false
		}
	}
	return true
}
